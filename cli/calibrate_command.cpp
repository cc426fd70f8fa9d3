// cli/calibrate_command.cpp — `dnntune calibrate`: layer micro-runs of the chosen networks on
// oneDNN and libtorch over threads, SMT and co-running processes, within a time budget
// (probe/layers/runner.hpp), and `--report DIR` to summarise them. The hidden `--worker` mode is
// the worker process the calibration starts for each backend and setting (probe/layers/worker.hpp).
#include <filesystem>
#include <iostream>

#include "cli/comm_calibration.hpp"
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/number_rules.hpp"
#include "probe/layers/calibration_report.hpp"
#include "probe/layers/runner.hpp"
#include "probe/layers/worker.hpp"

namespace dnntune::cli {
namespace {

struct CalibrateOptions {
  probe::layers::CalibrationRequest request;
  bool smt = false, no_smt = false;
  bool dry_run = false;
  std::string report_directory;
  bool json = false;
  CLI::Option* output = nullptr;  // -o: with --report, the file the summary goes to
  bool worker = false;
  bool keep_loading = false;
  bool comm = false;
  bool anchor = false;
  CommCalibrationOptions comm_options;
};

void run_report(const CalibrateOptions& options) {
  const auto report = value_or_fail(probe::layers::make_calibration_report(options.report_directory));
  write_output(options.json ? probe::layers::report_json_text(report) : probe::layers::report_text(report),
               options.output->count() > 0 ? options.request.directory : "");
}

void print_summary(const probe::layers::CalibrationSummary& summary, const std::string& directory) {
  if (!summary.check_lines.empty()) std::cout << "Numerical check\n";
  for (const auto& line : summary.check_lines) std::cout << "  " << line << "\n";
  char line[300];
  std::snprintf(line, sizeof line, "Measured in %.0f s: %d ok, %d unimplemented, %d failed, %d skipped", summary.seconds,
                summary.ok, summary.unimplemented, summary.failed, summary.skipped);
  std::cout << line << (summary.already_recorded ? "; " + std::to_string(summary.already_recorded) + " already recorded" : "")
            << "\n";
  for (const auto& skipped : summary.skipped_lines) std::cout << "  skipped " << skipped << "\n";
  std::cout << "Records: " << summary.records_path << "\nSummary: dnntune calibrate --report " << directory << "\n";
}

void run_calibrate(CalibrateOptions& options) {
  if (options.worker) {
    const int status = probe::layers::run_worker(
        {options.request.backends.empty() ? "" : options.request.backends.front(),
         options.request.threads.empty() ? 1 : options.request.threads.front(), options.keep_loading});
    if (status != 0) throw CLI::RuntimeError(status);
    return;
  }
  if (!options.report_directory.empty()) return run_report(options);
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
  if (options.smt || options.no_smt) request.smt = options.smt;
  request.dry_run = options.dry_run;
  std::error_code error;
  request.executable = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error) fail(failure("cannot find this program's path (/proc/self/exe): " + error.message()));
  const auto progress = [](const std::string& line) { std::cerr << "dnntune calibrate: " << line << std::endl; };
  const auto calibration = value_or_fail(probe::layers::prepare_calibration(request, progress));
  std::cout << probe::layers::describe_plan(calibration.plan, calibration.plan_request);
  if (calibration.already_recorded)
    std::cout << "  resuming: " << calibration.already_recorded << " planned measurements are already in "
              << request.directory << "/layers.jsonl\n";
  std::cout << std::flush;
  if (options.dry_run) return;
  const auto summary = value_or_fail(probe::layers::run_calibration(calibration, {progress, {}}));
  print_summary(summary, request.directory);
  if (!options.anchor) return;
  const int anchors = value_or_fail(probe::layers::run_anchors(calibration, progress));
  std::cout << "Anchors: " << anchors << " trained for real into " << request.directory << "/network.jsonl\n";
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
      "DIR/layers.jsonl. Prints its plan first, progress with an ETA on stderr. --report DIR summarises a calibration.");
  command->add_option("--model", request.models, "A network to calibrate (built-in name or network JSON file); repeat for several")
      ->option_text("NAME|FILE");
  command->add_option("--layer", request.layers, "Also (or only) calibrate this layer descriptor; repeatable")
      ->option_text("DESCRIPTOR");
  command->add_option("--backend", request.backends, "onednn, torch, torch-cuda (with a CUDA libtorch) or all; repeatable")
      ->option_text("NAME")
      ->capture_default_str();
  command->add_option("--batch", request.batches, "Batch per process; repeat for several (--batch 8 --batch 16)")
      ->option_text("N")
      ->check(checked(rules::batch_per_process))
      ->capture_default_str();
  command->add_option("--budget", request.budget_seconds,
                      "Seconds the whole calibration may take; a grid that does not fit is sampled (see README)")
      ->option_text("SECONDS")
      ->check(checked(rules::calibration_budget))
      ->capture_default_str();
  options.output = command->add_option("-o,--output", request.directory,
                                       "Directory for machine.json and layers.jsonl (with --report: the file for the summary)")
      ->option_text("DIR")
      ->capture_default_str();
  command->add_flag("--resume", request.resume,
                    "Continue the calibration in DIR: measure what it planned and has not recorded yet");
  command->add_option("--pass", request.passes,
                      "Only these passes: forward, backward_data, backward_weights, forward_backward (whole networks)")
      ->option_text("PASS");
  command->add_option("--threads", request.threads, "Only these threads per process (default: the grid)")
      ->option_text("N")
      ->check(checked(rules::ranks_or_threads));
  command->add_option("--processes", request.processes, "Only these numbers of co-running processes")
      ->option_text("N")
      ->check(checked(rules::ranks_or_threads));
  auto* smt = command->add_flag("--smt", options.smt, "Only settings with threads on SMT siblings");
  command->add_flag("--no-smt", options.no_smt, "Only settings with one thread per core")->excludes(smt);
  command->add_flag("--dry-run", options.dry_run,
                    "Print the plan and stop: creates, probes and measures nothing (estimates from DIR/machine.json "
                    "when it exists, else default speeds)");
  command->add_flag("--comm", options.comm,
                    "Calibrate communication instead, under a launcher (mpirun -np 2 dnntune calibrate --comm -o DIR): "
                    "all-reduce and point-to-point over message sizes, fitted to latency + size / bandwidth; records go "
                    "to DIR/comm.jsonl");
  command->add_flag("--anchor", options.anchor,
                    "Also train each --model at each --batch for real for a few steps in the base setting (records "
                    "in DIR/network.jsonl): the fit checks the sum of the layers against it");
  command->add_option("--allocator-budget", request.allocator_anchor_budget_seconds,
                      "With --anchor: seconds for the anchors under the other allocator variants (glibc-tuned, "
                      "jemalloc, tcmalloc); those that do not fit are skipped, and said")
      ->option_text("SECONDS")
      ->check(checked(rules::seconds))
      ->capture_default_str();
  add_comm_calibration_options(*command, options.comm_options);
  auto* report = command->add_option("--report", options.report_directory,
                                     "Summarise the calibration in DIR: GFLOP/s per layer class against the FMA peak, "
                                     "thread scaling, contention, sum of layers against whole networks")
                     ->option_text("DIR");
  command->add_flag("--json", options.json, "With --report: JSON instead of text")->needs(report);
  // The worker process the calibration starts itself; not for users.
  command->add_flag("--worker", options.worker, "")->group("");
  command->add_flag("--keep-loading", options.keep_loading, "")->group("");
  command->callback([] { run_calibrate(options); });
}

}  // namespace dnntune::cli
