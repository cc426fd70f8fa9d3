// cli/jobs_command.cpp — `dnntune jobs`: the training jobs the Python hook recorded on this machine
// (dnntune.observe), each with the images/s it ran at, what dnntune predicted for its setup before
// it and what the current model predicts now, and their errors.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/option_table.hpp"
#include "frontend/job_list.hpp"
#include "model/training_configuration.hpp"

namespace dnntune::cli {
namespace {

struct JobsOptions {
  std::string file;
  frontend::ModelSource source;
  OutputOptions output;
};

std::string figure(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, *value);
  return text;
}

std::optional<double> error_of(const std::optional<double>& predicted, double observed) {
  if (!predicted) return std::nullopt;
  return 100 * frontend::prediction_error(*predicted, observed);
}

std::string jobs_text(const frontend::JobList& list) {
  std::string text = "Jobs of this machine (" + list.fingerprint + ") in " + list.file + "\n";
  if (list.rows.empty()) text += "  none recorded: add dnntune.observe to a training script (docs/library.md)\n";
  char line[512];
  if (!list.rows.empty()) {
    std::snprintf(line, sizeof line, "%-20s %-14s %-24s %5s %10s %10s %7s %10s %7s  %s\n", "recorded", "network",
                  "setup", "nodes", "images/s", "before", "error", "now", "error", "job");
    text += line;
  }
  for (const auto& row : list.rows) {
    const auto& r = row.record;
    const std::string setup = std::to_string(r.processes) + "x" + std::to_string(r.threads) + (r.smt ? " smt" : "") +
                              " b" + std::to_string(r.batch) + (r.allocator == "default" ? "" : " " + r.allocator);
    std::snprintf(line, sizeof line, "%-20s %-14s %-24s %5d %10.2f %10s %7s %10s %7s  %s\n", r.timestamp.c_str(),
                  r.network.c_str(), setup.c_str(), r.nodes, row.observed_images_per_second,
                  figure(row.predicted_before, "%.2f").c_str(),
                  figure(error_of(row.predicted_before, row.observed_images_per_second), "%+.1f%%").c_str(),
                  figure(row.predicted_now, "%.2f").c_str(),
                  figure(error_of(row.predicted_now, row.observed_images_per_second), "%+.1f%%").c_str(),
                  r.job.id.c_str());
    text += line;
  }
  if (!list.rows.empty())
    text += "before: the launch line's prediction, carried in the record; now: " +
            (list.model_basis.empty() ? std::string("-") : list.model_basis) +
            "; error: (predicted - observed) / observed\n";
  for (const auto& why : list.not_taken) text += "not listed: " + why + "\n";
  for (const auto& fabric : list.fabrics_fitted) text += "between nodes on " + fabric + "\n";
  for (const auto& why : list.not_fitted) text += "not fitted: " + why + "\n";
  return text;
}

void run_jobs(const JobsOptions& options) {
  const auto list = value_or_fail(frontend::list_jobs(options.file, options.source));
  write_output(options.output.json ? frontend::job_list_json(list).dump(2) + "\n" : jobs_text(list),
               options.output.path);
}

}  // namespace

void add_jobs_command(CLI::App& root) {
  static JobsOptions options;
  CLI::App* command = root.add_subcommand(
      "jobs",
      "List the training jobs dnntune.observe recorded on this machine: images/s, the prediction made "
      "before each job and the current model's, with their errors.");
  add_value(*command, option_rows::jobs_file, options.file);
  add_value(*command, option_rows::calibration, options.source.calibration_path);
  add_value(*command, option_rows::machine, options.source.machine);
  add_output_options(*command, options.output);
  command->callback([] { run_jobs(options); });
}

}  // namespace dnntune::cli
