// train/training_report.hpp — a TrainingReport as text, as JSON ("dnntune.train" v1), and
// as measurement records (kind network: passes "iteration", "forward", "backward",
// "exposed_communication", "optimizer") that the model is checked against.
#pragma once

#include <string>
#include <vector>

#include "records/measurement.hpp"
#include "train/trainer.hpp"

namespace dnntune::train {

constexpr const char* training_report_schema = "dnntune.train";
constexpr int training_report_schema_version = 1;

std::string training_report_text(const TrainingReport& report);
std::string training_report_json(const TrainingReport& report);

// Every warning of every rank, for standard error.
std::vector<std::string> training_warnings(const TrainingReport& report);

// One record per pass of the run `options` asked for (its network source, trainer and bucket;
// the steps and warm-up as the report has them); `command` is the command line that reproduces
// them (train_worker_command). With module times
// also kind network passes "forward_modules" / "backward_modules" (per step, the layers' sum) and
// one kind module record per layer and pass. The records'
// descriptor names the strategy ("single", "allreduce", "ps-sync", "ps-async"), so runs of one
// network under different strategies are different measurements.
std::vector<records::Measurement> training_measurements(const TrainingReport& report, const TrainOptions& options,
                                                        const std::string& command);

}  // namespace dnntune::train
