// model/fit.hpp — fitting the cost model to layer measurements with NLopt: bounded,
// derivative-free (BOBYQA), several starts, squared log-error loss (a 10% miss counts the same
// on a 50 us ReLU as on a 50 ms convolution). Parameters the data cannot identify are pinned
// at their priors; k-fold cross-validation by layer descriptor gives the held-out error; a
// cluster bootstrap over descriptors gives the parameter replicates behind every band.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/calibration.hpp"
#include "model/layer_time.hpp"
#include "records/measurement.hpp"

namespace dnntune::model {

struct FitOptions {
  int bootstrap_replicates = 24;
  int folds = 5;
  int starts = 3;     // random restarts of each block fit, besides the prior
  unsigned seed = 7;  // the fit is deterministic for a given seed
};

// One measured layer pass, ready for the model.
struct FitSample {
  LayerWork work;
  ExecutionSetting setting;
  double measured_seconds = 0;
  double coefficient_of_variation = 0;
  int repetitions = 1;
  std::string descriptor;
  std::int64_t batch = 0;
};

// Turns layer records of `backend` measured on the machine with `fingerprint` into samples.
// Records of other kinds, backends, statuses, or that cost nothing are counted in `ignored`;
// records of another machine are an error (a calibration describes one machine).
Expected<std::vector<FitSample>> make_fit_samples(const std::vector<records::Measurement>& records,
                                                  const std::string& fingerprint, const std::string& backend,
                                                  int& ignored);

// Which flat parameters the samples can identify: what the samples show (FitEvidence) judged
// by each parameter's rule in parameter_table() (a class's efficiency and overhead per pass it
// was measured in, its contention with >= 2 core counts, coherency with >= 3, ...).
std::vector<bool> identifiable_parameters(const std::vector<FitSample>& samples);

// Fits the free parameters, starting from (and pinning the rest at) `start`.
ModelParameters fit_parameters(const std::vector<FitSample>& samples, const MachineRates& rates,
                               const std::vector<bool>& free, const ModelParameters& start, int starts, unsigned seed);

// The whole fit: samples, parameters, cross-validation, bootstrap, measured-layer table and
// communication links. `sources` names the files, for the report.
Expected<Calibration> fit_calibration(const std::vector<records::Measurement>& records,
                                      const records::MachineProfile& machine, const std::string& backend,
                                      const std::vector<std::string>& sources, const FitOptions& options);

}  // namespace dnntune::model
