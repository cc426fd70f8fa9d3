// data/builtin_machines.hpp — the spec-sheet machine profiles of data/machines/, compiled in:
// the hardware of the two studies (Broadwell, Skylake, Cascade Lake, EPYC 7551, K80/P100/V100)
// and today's peers (Sapphire Rapids, EPYC 9654, A100, H100, H200).
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::data {

struct BuiltinText {
  const char* name;
  const char* json;
};
// The embedded files, sorted by name (generated from data/machines/*.json).
const std::vector<BuiltinText>& builtin_machine_texts();

std::vector<std::string> builtin_machine_names();
// The built-in profiles whose kind is GPU, for messages and help: "a100, h100, h200, k80, p100, v100".
std::string builtin_gpu_machine_names();

// The reference calibrations, by backend ("torch", "onednn"): fitted on a measured machine,
// their efficiencies are what a spec machine's predictions carry over (see README).
const std::vector<BuiltinText>& builtin_reference_calibration_texts();
// Whether a reference calibration is the GPU model's (torch-cuda: dnntune.gpu-calibration), which
// the CPU cost model's reference choice leaves out.
bool is_gpu_reference_calibration(const BuiltinText& text);
// The text of `backend`'s reference calibration, or nullptr when none is built in.
const char* builtin_reference_calibration(const std::string& backend);

// The named profile; an unknown name is a bad_input that lists the known ones.
Expected<records::MachineProfile> builtin_machine(const std::string& name);

// What `--machine` takes everywhere: a built-in name, or a path to a profile JSON file (one
// that ends in .json or names a directory), e.g. the output of `dnntune probe -o node.json`.
Expected<records::MachineProfile> load_machine(const std::string& name_or_path);

}  // namespace dnntune::data
