// pipeline/cache_entry.hpp — a default calibration's cache entry, for the files of pipeline/ that
// make and fill it (default_calibration.cpp, first_run.cpp); not part of the library's interface.
// An entry is DIR/<fingerprint>-<backend>-<version>-dnntune<version>/: measurements/ (the probe's
// machine.json, layers.jsonl, network.jsonl), calibration.json, covered.json, and a lock beside it.
#pragma once

#include <string>
#include <vector>

#include "calibrate/runner.hpp"
#include "common/expected.hpp"
#include "pipeline/default_calibration.hpp"
#include "workloads/network_at_batch.hpp"

namespace dnntune::pipeline {

// The (network, batch) pairs an entry's measurements were planned for: covered.json.
using Coverage = std::vector<workloads::NetworkAtBatch>;

// A cache entry: where its files are.
struct Entry {
  std::string directory, measurements, machine, calibration, coverage, lock;
  explicit Entry(const std::string& path)
      : directory(path),
        measurements(path + "/measurements"),
        machine(measurements + "/machine.json"),
        calibration(path + "/calibration.json"),
        coverage(path + "/covered.json"),
        lock(path + ".lock") {}
};

// How covered.json names the network `model` (a --model argument, checked): a built-in network by
// its name; a network file by what it holds, so that the same file named by another path
// (./net.json, /abs/dir/net.json, a link) is the same network, and an edited one a new network.
std::string covered_network_key(const std::string& model);

// Writes covered.json: what marks the entry done.
Expected<void> write_coverage(const std::string& path, const Coverage& coverage);

// The dnntune binary the workers and trainers run (the request's, else this program).
Expected<std::string> worker_executable(const DefaultCalibrationRequest& request);

// The probe (once per machine) and the plan of the micro-runs within the whole first run, on the
// entry's measurements (resumed); `coverage` is emptied when those had to be moved aside.
Expected<calibrate::PreparedCalibration> prepare_entry(const Entry& entry, const DefaultCalibrationRequest& request,
                                                       Coverage& coverage);

// Fits the entry's measurements; an empty calibration path when no layer was measured. Only the
// last fit of a run (`last`) writes the coverage that marks the entry done.
Expected<DefaultCalibration> fit_entry(const Entry& entry, const DefaultCalibrationRequest& request,
                                       const Coverage& coverage, bool last = true);

}  // namespace dnntune::pipeline
