// pipeline/real_training.hpp — training for real from other commands (validate, recommend --verify):
// one `dnntune train --launch` job per configuration, so each gets the binding a job would get,
// read back from its JSON report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/training_configuration.hpp"
#include "records/measurement.hpp"

namespace dnntune::pipeline {

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

// Trains `model` in `configuration` on this node; an error when the job fails.
Expected<MeasuredTraining> train_for_real(const std::string& model, const model::TrainingConfiguration& configuration,
                                          const RealTrainingOptions& options);

// The runs a record file already holds, read back instead of trained again, so an interrupted
// `validate --record FILE` resumes where it stopped. A run counts when its iteration record is
// of this machine, the network, the setting and batch, with the same measured and warm-up
// steps and bucket size (the reproducing command says which); the newest one when several are.
class RecordedTrainings {
 public:
  // The runs of the machine `fingerprint` names in `path`. A missing file holds none; a corrupt
  // one is an error (a last line cut short by a kill is not).
  static Expected<RecordedTrainings> read(const std::string& path, const std::string& fingerprint);

  std::optional<MeasuredTraining> find(const std::string& network_name,
                                       const model::TrainingConfiguration& configuration,
                                       const RealTrainingOptions& options) const;

 private:
  std::string fingerprint_;                       // the machine whose runs count
  std::vector<records::Measurement> iterations_;  // ok "iteration" records, oldest first
};

}  // namespace dnntune::pipeline
