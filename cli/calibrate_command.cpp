// cli/calibrate_command.cpp — `dnntune calibrate`: layer micro-runs of the chosen networks on
// oneDNN and libtorch over threads, SMT and co-running processes, within a time budget
// (calibrate/runner.hpp), and `--report DIR` to summarise them. The hidden `--worker` mode is
// the worker process the calibration starts for each backend and setting (calibrate/worker.hpp).
#include <filesystem>
#include <iostream>

#include "cli/comm_calibration.hpp"
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/number_rules.hpp"
#include "cli/option_table.hpp"
#include "common/logical_cpus.hpp"
#include "common/progress.hpp"
#include "common/self_executable.hpp"
#include "pipeline/installed_allocators.hpp"
#include "calibrate/calibration_report.hpp"
#include "calibrate/module_report.hpp"
#include "calibrate/runner.hpp"
#include "calibrate/worker.hpp"
#include "scheduler/slurm_calibration.hpp"

namespace dnntune::cli {
namespace {

struct CalibrateOptions {
  calibrate::CalibrationRequest request;
  bool smt = false, no_smt = false;
  bool dry_run = false;
  std::string report_directory;
  bool json = false;
  bool modules = false;           // --modules: with --report, the micro-runs against the layers inside the step
  CLI::Option* output = nullptr;  // -o: with --report, the file the summary goes to
  bool worker = false;
  bool keep_loading = false;
  bool comm = false;
  bool anchor = false;
  std::string anchor_settings;          // --anchor-settings 1x1,2x1 (parsed before anything is written)
  std::vector<std::string> precisions;  // --precision fp32,tf32,bf16: torch-cuda's (plan.hpp's MicroPrecision)
  CLI::Option* anchor_settings_option = nullptr;
  double repeat_budget = 0;  // --repeat-budget: 0, no repeated base anchors
  CommCalibrationOptions comm_options;
  // --slurm: calibrate a node of a partition through the scheduler (scheduler/slurm_calibration.hpp)
  bool slurm = false, slurm_node_job = false, slurm_refit_fabric = false, no_wait = false;
  scheduler::SlurmCalibrationRequest slurm_request;
  CLI::Option* budget = nullptr;
  CLI::Option* batch = nullptr;
};

// A job's dnntune line up to its own options: `mode`, and the partition and backend it answers for.
std::vector<std::string> slurm_job_line(const frontend::OptionRow& mode,
                                        const scheduler::SlurmCalibrationRequest& request) {
  return {"calibrate",
          long_name(mode),
          long_name(option_rows::partition),
          request.partition,
          long_name(option_rows::backend),
          request.backend};
}

// The jobs' dnntune lines, from the option table's names: the node's calibration
// (run_slurm_node_job), the fabric sweep under mpirun and the refit with it (refit_with_fabric).
scheduler::JobCommandLines slurm_job_command_lines() {
  using scheduler::SlurmCalibrationRequest;
  scheduler::JobCommandLines lines;
  lines.node_job = [](const SlurmCalibrationRequest& request) {
    auto arguments = slurm_job_line(option_rows::slurm_node_job, request);
    arguments.insert(arguments.end(),
                     {long_name(option_rows::budget), std::to_string(static_cast<long long>(request.budget_seconds))});
    for (const auto& model : request.models) arguments.insert(arguments.end(), {long_name(option_rows::model), model});
    for (const auto batch : request.batches)
      arguments.insert(arguments.end(), {long_name(option_rows::batch), std::to_string(batch)});
    return arguments;
  };
  lines.fabric_sweep = [](const std::string& comm_directory) {
    return std::vector<std::string>{"calibrate", long_name(option_rows::comm), long_name(option_rows::output),
                                    comm_directory};
  };
  lines.fabric_refit = [](const SlurmCalibrationRequest& request, const std::string& comm_directory) {
    auto arguments = slurm_job_line(option_rows::slurm_refit_fabric, request);
    arguments.insert(arguments.end(), {long_name(option_rows::output), comm_directory});
    return arguments;
  };
  return lines;
}

// What answers from a partition's calibration, quoted as the scripts quote their words.
std::string slurm_answer_command(const scheduler::SlurmCalibrationRequest& request) {
  return shell_command_line({"dnntune", "recommend", long_name(option_rows::partition), request.partition,
                             long_name(option_rows::model), request.models.front()});
}

void print_slurm_outcome(const scheduler::SubmittedCalibration& submitted, const std::string& partition,
                         const std::string& answer_command) {
  if (!submitted.calibrated) {
    std::cout << "Submitted SLURM job " << submitted.node_job
              << (submitted.fabric_job.empty() ? "" : " and " + submitted.fabric_job) << " to calibrate a node of "
              << partition << ".\nFollow it: squeue -j " << submitted.node_job << "; tail -f "
              << shell_quote(submitted.node_log) << "\nWhen it has finished: " << answer_command << "\n";
    return;
  }
  const scheduler::NodeRecord& made = *submitted.calibrated;
  std::cout << "Calibrated " << made.node << " of partition " << partition << " (fingerprint " << made.fingerprint
            << ", SLURM job " << made.job << "): " << made.calibration << "\nUse it: " << answer_command << "\n";
}

void run_slurm_modes(CalibrateOptions& options) {
  scheduler::SlurmCalibrationRequest& slurm = options.slurm_request;
  const auto& request = options.request;
  if (options.slurm_refit_fabric)
    return ok_or_fail(scheduler::refit_with_fabric(
        slurm.partition, request.backends.empty() ? "torch" : request.backends.front(), request.directory));
  if (slurm.partition.empty())
    fail(bad_input(long_name(option_rows::slurm) + " needs " + long_name(option_rows::partition) + " NAME"));
  if (request.models.empty())
    fail(bad_input(long_name(option_rows::slurm) + " needs " + long_name(option_rows::model) +
                   ": the networks to calibrate the node for"));
  slurm.models = request.models;
  // The batch recommend scores by default, unless --batch names others.
  slurm.batches = options.batch->count() > 0 ? request.batches : std::vector<std::int64_t>{32};
  const bool one_backend = request.backends.size() == 1 && request.backends.front() != "all";
  slurm.backend = one_backend ? request.backends.front() : "torch";
  if (options.budget->count() > 0) slurm.budget_seconds = request.budget_seconds;
  slurm.wait = !options.no_wait;
  slurm.progress = progress_printer("calibrate " + long_name(option_rows::slurm));
  if (const char* poll = std::getenv("DNNTUNE_SLURM_POLL_SECONDS"); poll && std::atof(poll) > 0)
    slurm.poll_seconds = std::atof(poll);
  if (options.slurm_node_job) {
    const auto record = value_or_fail(scheduler::run_slurm_node_job(slurm));
    std::cout << "Recorded " << record.node << " of partition " << record.partition << ": " << record.calibration
              << "\n";
    return;
  }
  const std::string answer_command = slurm_answer_command(slurm);
  const auto submitted =
      value_or_fail(scheduler::calibrate_through_slurm(slurm, slurm_job_command_lines(), answer_command));
  print_slurm_outcome(submitted, slurm.partition, answer_command);
}

void run_report(const CalibrateOptions& options) {
  if (options.modules) {
    const auto report = value_or_fail(calibrate::make_module_report(options.report_directory));
    write_output(options.json ? calibrate::module_report_json_text(report) : calibrate::module_report_text(report),
                 options.output->count() > 0 ? options.request.directory : "");
    return;
  }
  const auto report = value_or_fail(calibrate::make_calibration_report(options.report_directory));
  write_output(options.json ? calibrate::report_json_text(report) : calibrate::report_text(report),
               options.output->count() > 0 ? options.request.directory : "");
}

void print_summary(const calibrate::CalibrationSummary& summary, const std::string& directory) {
  if (!summary.check_lines.empty()) std::cout << "Numerical check\n";
  for (const auto& line : summary.check_lines) std::cout << "  " << line << "\n";
  char line[300];
  std::snprintf(line, sizeof line, "Measured in %.0f s: %d ok, %d unimplemented, %d failed, %d skipped",
                summary.seconds, summary.ok, summary.unimplemented, summary.failed, summary.skipped);
  std::cout << line
            << (summary.already_recorded ? "; " + std::to_string(summary.already_recorded) + " already recorded" : "")
            << "\n";
  for (const auto& skipped : summary.skipped_lines) std::cout << "  skipped " << skipped << "\n";
  std::cout << "Records: " << summary.records_path << "\nSummary: dnntune calibrate --report " << directory << "\n";
}

void run_calibrate(CalibrateOptions& options) {
  if (options.worker) {
    const int status = calibrate::run_worker({options.request.backends.empty() ? "" : options.request.backends.front(),
                                              options.request.threads.empty() ? 1 : options.request.threads.front(),
                                              options.keep_loading});
    if (status != 0) throw CLI::RuntimeError(status);
    return;
  }
  if (options.anchor_settings_option->count() > 0) {
    // Checked before anything is probed or written; whether the node holds them, once it is probed.
    if (!options.report_directory.empty() || options.slurm || options.slurm_node_job || options.comm)
      fail(bad_input(long_name(option_rows::anchor_settings) + " goes with a calibration of this machine (not " +
                     long_name(option_rows::report) + ", " + long_name(option_rows::slurm) + " or " +
                     long_name(option_rows::comm) + ")"));
    options.request.anchor_settings = value_or_fail(calibrate::parse_anchor_settings(options.anchor_settings));
    const int cpus = logical_cpus();
    for (const calibrate::Setting& setting : options.request.anchor_settings)
      if (setting.processes * setting.threads > cpus)
        fail(bad_input(long_name(option_rows::anchor_settings) + " " + std::to_string(setting.processes) + "x" +
                       std::to_string(setting.threads) + " needs " +
                       std::to_string(setting.processes * setting.threads) + " cores, this machine has " +
                       std::to_string(cpus) + " CPUs"));
    options.anchor = true;
  }
  if (options.repeat_budget > 0 && !options.anchor)
    fail(bad_input(long_name(option_rows::repeat_budget) + " goes with " + long_name(option_rows::anchor)));
  if (options.request.allocator != "default" &&
      (options.anchor || !options.report_directory.empty() || options.slurm || options.slurm_node_job || options.comm))
    fail(bad_input(long_name(option_rows::allocator) + " goes with the micro-runs of this machine (not " +
                   long_name(option_rows::anchor) + ", " + long_name(option_rows::report) + ", " +
                   long_name(option_rows::slurm) + " or " + long_name(option_rows::comm) +
                   "): anchors train under each installed allocator themselves"));
  if (!options.report_directory.empty()) return run_report(options);
  if (options.slurm || options.slurm_node_job || options.slurm_refit_fabric) return run_slurm_modes(options);
  if (!options.slurm_request.partition.empty())
    fail(bad_input(long_name(option_rows::partition) + " goes with " + long_name(option_rows::slurm)));
  auto& request = options.request;
  if (options.comm) {
    // Every rank runs this; the records go beside the layer records, where `dnntune fit DIR`
    // finds them.
    std::error_code error;
    std::filesystem::create_directories(request.directory, error);
    if (error) fail(bad_input(request.directory + ": cannot create (" + error.message() + ")"));
    options.comm_options.record_path = request.directory + "/comm.jsonl";
    return run_comm_calibration(options.comm_options);
  }
  // Before anything is probed or written: a bad name exits 2, a good one starts this process again under it.
  ok_or_fail(pipeline::run_under_allocator(request.allocator));
  if (options.smt || options.no_smt) request.smt = options.smt;
  request.precisions.clear();
  for (const std::string& word : options.precisions)
    request.precisions.push_back(value_or_fail(calibrate::parse_micro_precision(word)));
  request.dry_run = options.dry_run;
  request.executable = value_or_fail(self_executable_path());
  const auto progress = progress_printer("calibrate");
  const auto calibration = value_or_fail(calibrate::prepare_calibration(request, progress));
  std::cout << calibrate::describe_plan(calibration.plan, calibration.plan_request);
  if (calibration.already_recorded)
    std::cout << "  resuming: " << calibration.already_recorded << " planned measurements are already in "
              << request.directory << "/layers.jsonl\n";
  std::cout << std::flush;
  if (options.dry_run) return;
  const auto summary = value_or_fail(calibrate::run_calibration(calibration, {progress, {}}));
  print_summary(summary, request.directory);
  if (!options.anchor) return;
  const int anchors = value_or_fail(calibrate::run_anchors(calibration, progress));
  std::cout << "Anchors: " << anchors << " trained for real into " << request.directory << "/network.jsonl\n";
  if (!(options.repeat_budget > 0)) return;
  const int repeated =
      value_or_fail(calibrate::run_repeated_base_anchors(calibration, progress, options.repeat_budget));
  std::cout << "Base anchor: " << repeated << " more run" << (repeated == 1 ? "" : "s") << " trained for real into "
            << request.directory << "/network.jsonl\n";
}

}  // namespace

void add_calibrate_command(CLI::App& root) {
  static CalibrateOptions options;
  auto& request = options.request;
  request.backends = {"all"};
  request.batches = {16};
  CLI::App* command = root.add_subcommand(
      "calibrate",
      "Time every distinct layer of the chosen networks (forward, backward-data, backward-weights) on oneDNN and "
      "libtorch, over threads per process, SMT and co-running processes, within a time budget; records go to "
      "DIR/layers.jsonl. Prints its plan first, progress with an ETA on stderr. --report DIR summarises a "
      "calibration.");
  add_list(*command, option_rows::model, request.models);
  add_list(*command, option_rows::layer, request.layers);
  add_list(*command, option_rows::backend, request.backends);
  options.batch = add_list(*command, option_rows::batch, request.batches);
  options.budget = add_value(*command, option_rows::budget, request.budget_seconds)->capture_default_str();
  options.output =
      add_value(*command, option_rows::output, request.directory)->option_text("DIR")->capture_default_str();
  add_flag(*command, option_rows::resume, request.resume);
  add_list(*command, option_rows::pass, request.passes);
  add_list(*command, option_rows::threads, request.threads);
  add_list(*command, option_rows::processes, request.processes);
  add_list(*command, option_rows::precision, options.precisions);
  auto* smt = add_flag(*command, option_rows::smt, options.smt);
  add_flag(*command, option_rows::no_smt, options.no_smt)->excludes(smt);
  add_flag(*command, option_rows::dry_run, options.dry_run);
  add_flag(*command, option_rows::comm, options.comm);
  add_flag(*command, option_rows::anchor, options.anchor);
  options.anchor_settings_option = add_value(*command, option_rows::anchor_settings, options.anchor_settings);
  add_value(*command, option_rows::allocator, request.allocator)->capture_default_str();
  add_value(*command, option_rows::allocator_budget, request.allocator_anchor_budget_seconds)->capture_default_str();
  add_value(*command, option_rows::repeat_budget, options.repeat_budget);
  add_comm_calibration_options(*command, options.comm_options);
  auto* report = add_value(*command, option_rows::report, options.report_directory);
  add_flag(*command, option_rows::json, options.json)->needs(report);
  add_flag(*command, option_rows::modules, options.modules)->needs(report);
  auto* slurm = add_flag(*command, option_rows::slurm, options.slurm);
  add_value(*command, option_rows::partition, options.slurm_request.partition);
  add_value(*command, option_rows::account, options.slurm_request.account)->needs(slurm);
  add_value(*command, option_rows::time_limit, options.slurm_request.time_limit)->capture_default_str()->needs(slurm);
  add_flag(*command, option_rows::no_wait, options.no_wait)->needs(slurm);
  // The modes the SLURM jobs and the calibration's worker processes run (hidden rows).
  add_flag(*command, option_rows::slurm_node_job, options.slurm_node_job);
  add_flag(*command, option_rows::slurm_refit_fabric, options.slurm_refit_fabric);
  add_flag(*command, option_rows::worker, options.worker);
  add_flag(*command, option_rows::keep_loading, options.keep_loading);
  command->callback([] { run_calibrate(options); });
}

}  // namespace dnntune::cli
