// cli/comm_calibration.cpp — see comm_calibration.hpp.
#include "cli/comm_calibration.hpp"

#include <iostream>

#include "cli/number_rules.hpp"
#include "cli/option_table.hpp"
#include "common/progress.hpp"
#include "common/shell_words.hpp"
#include "train/comm/comm_sweep.hpp"
#include "train/comm/mpi_session.hpp"
#include "train/launch.hpp"

namespace dnntune::cli {

void add_comm_calibration_options(CLI::App& command, CommCalibrationOptions& options) {
  add_value(command, option_rows::comm_max_megabytes, options.max_message_megabytes)->capture_default_str();
  add_value(command, option_rows::comm_budget, options.time_budget_seconds)->capture_default_str();
}

void run_comm_calibration(const CommCalibrationOptions& options) {
  if (!train::comm::started_by_mpi_launcher())
    fail(
        bad_input("calibrate --comm times MPI communication between ranks: run it under a launcher, "
                  "e.g. `mpirun -np 2 dnntune calibrate --comm` (or srun)"));
  auto session = train::comm::MpiSession::start();
  if (!session) fail_in_job(session.error());

  train::comm::CommSweepOptions sweep;
  sweep.max_message_bytes = static_cast<std::int64_t>(options.max_message_megabytes * 1024 * 1024);
  sweep.time_budget_seconds = options.time_budget_seconds;
  sweep.command = shell_command_line(
      {"mpirun", "-np", std::to_string((*session)->size()), "dnntune", "calibrate", long_name(option_rows::comm),
       long_name(option_rows::comm_max_megabytes), number_argument(options.max_message_megabytes),
       long_name(option_rows::comm_budget), number_argument(options.time_budget_seconds)});
  sweep.progress = [print = progress_printer("calibrate")](const std::string& step) { print("timing " + step); };
  const auto calibration = train::comm::calibrate_communication(**session, sweep);
  if (!calibration) fail_in_job(calibration.error());
  if ((*session)->rank() != 0) return;

  if (!options.record_path.empty())
    for (const auto& record : calibration->records)
      ok_or_fail(records::append_measurement(options.record_path, record));
  write_output(options.output.json ? train::comm::comm_calibration_json(*calibration)
                                   : train::comm::comm_calibration_text(*calibration),
               options.output.path);
}

}  // namespace dnntune::cli
