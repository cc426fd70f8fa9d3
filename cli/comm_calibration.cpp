// cli/comm_calibration.cpp — see comm_calibration.hpp.
#include "cli/comm_calibration.hpp"

#include <iostream>

#include "cli/number_rules.hpp"
#include "common/shell_words.hpp"
#include "train/comm/comm_sweep.hpp"
#include "train/comm/mpi_session.hpp"
#include "train/launch.hpp"

namespace dnntune::cli {

void add_comm_calibration_options(CLI::App& command, CommCalibrationOptions& options) {
  command
      .add_option_function<double>(
          "--comm-max-mb",
          [&options](double megabytes) {
            options.max_message_bytes = static_cast<std::int64_t>(megabytes * 1024 * 1024);
          },
          "With --comm: the largest message, in MiB (default 256)")
      ->transform(checked(rules::megabytes))
      ->option_text("MIB");
  command.add_option("--comm-budget", options.time_budget_seconds,
                     "With --comm: seconds for all sweeps together; larger sizes that would not fit are skipped")
      ->transform(checked(rules::seconds))
      ->capture_default_str();
}

void run_comm_calibration(const CommCalibrationOptions& options) {
  if (!train::comm::started_by_mpi_launcher())
    fail(bad_input("calibrate --comm times MPI communication between ranks: run it under a launcher, "
                   "e.g. `mpirun -np 2 dnntune calibrate --comm` (or srun)"));
  auto session = train::comm::MpiSession::start();
  if (!session) fail_in_job(session.error());

  train::comm::CommSweepOptions sweep;
  sweep.max_message_bytes = options.max_message_bytes;
  sweep.time_budget_seconds = options.time_budget_seconds;
  sweep.command = shell_command_line(
      {"mpirun", "-np", std::to_string((*session)->size()), "dnntune", "calibrate", "--comm", "--comm-max-mb",
       number_argument(static_cast<double>(options.max_message_bytes) / (1024 * 1024)), "--comm-budget",
       number_argument(options.time_budget_seconds)});
  sweep.progress = [](const std::string& step) { std::cerr << "dnntune calibrate: timing " << step << std::endl; };
  const auto calibration = train::comm::calibrate_communication(**session, sweep);
  if (!calibration) fail_in_job(calibration.error());
  if ((*session)->rank() != 0) return;

  if (!options.record_path.empty())
    for (const auto& record : calibration->records) ok_or_fail(records::append_measurement(options.record_path, record));
  write_output(options.output.json ? train::comm::comm_calibration_json(*calibration)
                                   : train::comm::comm_calibration_text(*calibration),
               options.output.path);
}

}  // namespace dnntune::cli
