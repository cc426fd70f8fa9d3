// cli/default_calibration.hpp — the embedded default behind `recommend`, `predict` and `scale`
// when no --calibration is given: this machine's calibration, kept in the user's cache keyed by
// machine fingerprint, backend and its version, and dnntune's version. The first use runs a
// quick bounded calibration of the network at the batches asked for (progress on stderr) and
// fits it; later uses answer from the cache. A network or batch the cache has not seen extends
// the same measurements (--resume) and refits. A corrupt cache entry is rebuilt, never trusted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::cli {

struct DefaultCalibrationRequest {
  std::vector<std::string> models;    // built-in names or network files
  std::vector<std::int64_t> batches;  // per process
  std::string backend = "torch";
  double budget_seconds = 60;         // for each new (network, batches) calibration
};

// $DNNTUNE_CACHE_DIR, else $XDG_CACHE_HOME/dnntune, else $HOME/.cache/dnntune.
std::string cache_directory();

// The path of a calibration of this machine that covers every model at every batch of the
// request, calibrating and fitting first when the cache has not covered them yet.
Expected<std::string> default_calibration_path(const DefaultCalibrationRequest& request);

}  // namespace dnntune::cli
