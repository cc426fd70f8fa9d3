// model/measured_setups.hpp — whole setups timed by PyTorch from Python: a network at a batch, a
// layout and an allocator, trained as a user's job would run it (train --runner python under
// --allocator). The model's layout comparison comes from the C++ trainer's anchors and the
// allocator's gain from pairs of them; PyTorch's allocations differ from the C++ trainer's, and
// the layout a close call picks under glibc's defaults can lose under the allocator the answer
// sets by PyTorch when the C++ trainer shows no such turn (docs/results.md, "The first answer").
// A first run therefore times the answer's close call itself, both setups by PyTorch
// (pipeline/separating_anchors.hpp), and tuner::recommend_allocator lets those runs decide it.
// Kept beside the allocator's fits in the calibration (AllocationModel::pytorch_setups).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/expected.hpp"
#include "records/machine_profile.hpp"
#include "records/measurement.hpp"

namespace dnntune::model {

struct MeasuredSetup {
  std::string network;
  std::int64_t batch = 0;  // per process
  int processes = 1;       // on the one node
  int threads = 1;         // per process
  bool smt = false;
  std::string allocator = "default";
  std::vector<double> iteration_seconds;  // one median step per run, in the order they ran
  // "" : PyTorch's first-run runs; else the user's own jobs that ran it (with_recorded_jobs),
  // for the answer to name: "a job of yours, 2026-12-07".
  std::string from_jobs;

  double median_iteration_seconds() const;
  double images_per_second() const;  // of the node: processes x batch per median step
};

// The runs of PyTorch from Python among measurement records (kind network, pass iteration, ok,
// one node) of this machine and backend, one setup per network, batch, layout and allocator.
std::vector<MeasuredSetup> measured_setups_from_records(const std::vector<records::Measurement>& records,
                                                        const records::MachineProfile& machine,
                                                        const std::string& backend);

// The setup of `network` at this batch, layout and allocator; null when PyTorch did not time it.
const MeasuredSetup* find_setup(const std::vector<MeasuredSetup>& setups, const std::string& network,
                                std::int64_t batch, int processes, int threads, bool smt, const std::string& allocator);

// The setups the user's own training jobs ran (records of kind job: python/dnntune/observe.py) of this
// machine and backend on one node, each job's median step one run, put before `setups`: a setup a
// job ran is the job's (what users run, over more steps than a first run's), the first run's
// runs of it are dropped; the others stay. The jobs' setups are never written to a calibration.
std::vector<MeasuredSetup> with_recorded_jobs(const std::vector<MeasuredSetup>& setups,
                                              const std::vector<records::Measurement>& jobs,
                                              const records::MachineProfile& machine, const std::string& backend);

// The calibration's "pytorch_setups" array, and back (values checked: positive finite steps,
// whole counts in range, no setup twice).
nlohmann::json measured_setups_to_json(const std::vector<MeasuredSetup>& setups);
Expected<std::vector<MeasuredSetup>> measured_setups_from_json(const nlohmann::json& in, const std::string& origin);

}  // namespace dnntune::model
