// cli/real_training.hpp — training for real from other commands (validate, recommend --verify):
// one `dnntune train --launch` job per configuration, so each gets the binding a job would get,
// read back from its JSON report.
#pragma once

#include <string>

#include "model/training_configuration.hpp"

namespace dnntune::cli {

struct RealTrainingOptions {
  int iterations = 5;
  int warmup = 1;
  std::string record_path;  // also append the runs as measurement records ("" = no)
};

struct MeasuredTraining {
  double images_per_second = 0;  // at the median step
  double low = 0;                // at the slowest step
  double high = 0;               // at the fastest
};

// Trains `model` in `configuration` on this node; fails the command when the job fails.
MeasuredTraining train_for_real(const std::string& model, const model::TrainingConfiguration& configuration,
                                const RealTrainingOptions& options);

}  // namespace dnntune::cli
