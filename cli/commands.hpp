// cli/commands.hpp — the subcommands of `dnntune`, each defined in its own <name>_command.cpp.
// A subcommand adds itself to the root app and keeps its options alive (static storage) until
// its callback runs.
#pragma once

#include <CLI/CLI.hpp>

namespace dnntune::cli {

void add_probe_command(CLI::App& root);
void add_machines_command(CLI::App& root);
void add_train_command(CLI::App& root);
void add_calibrate_command(CLI::App& root);
void add_models_command(CLI::App& root);
void add_fit_command(CLI::App& root);
void add_predict_command(CLI::App& root);
void add_scale_command(CLI::App& root);
void add_recommend_command(CLI::App& root);
void add_validate_command(CLI::App& root);
void add_compare_command(CLI::App& root);
void add_jobs_command(CLI::App& root);

}  // namespace dnntune::cli
