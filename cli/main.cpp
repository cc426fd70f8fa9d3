// cli/main.cpp — entry point of the `dnntune` command: builds the CLI11 app from the
// subcommands in commands.hpp, runs the chosen one, maps errors to exit codes.
#include <iostream>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "common/text_format.hpp"
#include "frontend/option_rows.hpp"
#include "pipeline/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "dnntune — measured performance model and autotuner for DNN training on CPU clusters.\n"
      "Finds the fastest processes-per-node, threads, hyper-threading and batch for a node,\n"
      "and predicts how training scales over many nodes.",
      "dnntune"};
  app.set_version_flag(dnntune::frontend::option_rows::version.names, std::string("dnntune ") + DNNTUNE_VERSION,
                       dnntune::frontend::option_rows::version.help);
  app.require_subcommand(1);
  app.footer("Run `dnntune COMMAND --help` for the options of a command.");

  dnntune::cli::add_probe_command(app);
  dnntune::cli::add_machines_command(app);
  dnntune::cli::add_train_command(app);
  dnntune::cli::add_calibrate_command(app);
  dnntune::cli::add_models_command(app);
  dnntune::cli::add_fit_command(app);
  dnntune::cli::add_predict_command(app);
  dnntune::cli::add_scale_command(app);
  dnntune::cli::add_recommend_command(app);
  dnntune::cli::add_validate_command(app);
  dnntune::cli::add_compare_command(app);
  dnntune::cli::add_jobs_command(app);

  // After parsing, before any command runs: no output may replace an input.
  app.parse_complete_callback([&app] { dnntune::cli::refuse_outputs_over_inputs(app); });

  // Every exit goes through finish_standard_output: a failed write to standard output (a full
  // disk behind `> FILE`) is an error, never exit 0.
  using dnntune::cli::finish_standard_output;
  // Arguments are copied into messages, reports, job scripts and launch lines: one with a control
  // character (a newline, ESC) is refused here, for every command and option. What follows `--`
  // is the user's own training command, quoted word by word into the script as it is.
  for (int index = 1; index < argc && std::string(argv[index]) != "--"; ++index)
    for (const char* at = argv[index]; *at; ++at)
      if (static_cast<unsigned char>(*at) < 0x20 || *at == 0x7f) {
        std::cerr << "dnntune: error: argument \"" << dnntune::printable(argv[index])
                  << "\" holds a control character (a newline, ESC, ...)" << std::endl;
        return finish_standard_output(dnntune::cli::exit_bad_input);
      }
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& error) {  // thrown by cli::fail with the exit code to use
    return finish_standard_output(error.get_exit_code());
  } catch (const CLI::ParseError& error) {
    // --help and --version print through app.exit and exit 0; bad arguments are bad input: one
    // line, as every other error (exit 2).
    if (error.get_exit_code() == 0) return finish_standard_output(app.exit(error));
    std::string message = error.what();
    for (char& character : message)
      if (character == '\n') character = ' ';
    const auto chosen = app.get_subcommands();
    const std::string help = chosen.empty() ? "dnntune --help" : "dnntune " + chosen.front()->get_name() + " --help";
    std::cerr << "dnntune: error: " << dnntune::printable(message) << " (see `" << help << "`)" << std::endl;
    return finish_standard_output(dnntune::cli::exit_bad_input);
  }
  return finish_standard_output(0);
}
