// pipeline/validate.hpp — the validation loop behind `dnntune validate`: train for real
// (real_training.hpp) in every given configuration of this machine and pair each run with the
// model's prediction. The model is fitted on micro-runs and communication measurements only,
// never on the runs it is judged against. Runs a record file already holds are read back, so an
// interrupted validation resumes where it stopped.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/predictor.hpp"
#include "model/validation.hpp"
#include "pipeline/default_calibration.hpp"
#include "pipeline/real_training.hpp"
#include "workloads/graph.hpp"

namespace dnntune::pipeline {

struct ValidationRequest {
  std::vector<std::string> models;  // as given (built-in names or network files), one per network
  std::vector<workloads::Network> networks;
  std::vector<model::TrainingConfiguration> configurations;
  RealTrainingOptions training;
  bool resume = false;          // read back the runs training.record_path already holds
  Progress progress = nullptr;  // may be empty
};

// What can be refused before any work: --resume without a record file to read back, a record
// file that is not one of measurement records (records::check_record_file).
Expected<void> check_validation_request(const ValidationRequest& request);

// Refuses a predictor that is not this machine's own calibration (the runs happen here).
Expected<std::vector<model::ValidationRow>> validate_here(const model::Predictor& predictor,
                                                          const ValidationRequest& request);

}  // namespace dnntune::pipeline
