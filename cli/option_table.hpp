// cli/option_table.hpp — every option of every command, defined once: its names, help, value
// text and check (common/number_grammar.hpp's grammar and ranges). A command adds an option from
// here, never with CLI11's add_option or add_flag and a literal "--name" (the ctest test
// tests/cli/option_definitions_test.py holds that; --counts prints the definitions per name):
//
//   add_value(*command, option_rows::batch, options.batch);        // one value: --batch 32
//   add_list(*command, option_rows::batch, options.batches);       // a list: --batch 8,16 or 8..64
//   ... list_values(option_rows::batch, options.batches)             // the list, checked, when run
//   add_flag(*command, option_rows::json, options.json);
//
// A row with a list rule takes the one list syntax in every command that takes a list (comma
// lists and ranges, at most `list->max_items` values), and one value where the command takes
// one. A new option is a new row (option_table.cpp, in its command's section), not a new
// add_option in a command. A command may narrow a row (->check(IsMember(...)), ->needs(...),
// ->required()), never rename or re-describe it. Two rows with one name are two meanings, said in
// a comment above the second ("another meaning: ...").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/number_rules.hpp"

namespace dnntune::cli {

struct OptionRow {
  const char* names;             // CLI11's: "--fabric,--network", "-o,--output"
  const char* help;              // for one value
  const char* value_text = "";   // "N", "FILE", "NAME" ("" : CLI11's default)
  const NumberRule* number = nullptr;  // a number: its grammar and range
  const ListRule* list = nullptr;      // may be a list: its limit (and number rule)
  const char* list_help = "";          // appended to `help` where the command takes a list
};

namespace option_rows {
extern const OptionRow model;
extern const OptionRow batch, nodes, processes_per_node, threads, smt, no_smt, parameter_servers, asynchronous;
extern const OptionRow fusion_megabytes, gpus, precision, memory_format, global_batch, epochs, dataset_images, verify;
extern const OptionRow fabric, link_gbits, link_latency_us;
extern const OptionRow calibration, machine, backend, calibration_budget, topology;
extern const OptionRow json, output;
extern const OptionRow time_limit, partition, account;
extern const OptionRow allocator, openmp;
extern const OptionRow iterations, warmup, record, resume, quick, dry_run;
// train
extern const OptionRow trainer_batch, time_limit_seconds, learning_rate, momentum, bucket_megabytes, ps_servers;
extern const OptionRow device, seed, module_times, runner, launch, hostfile;
// calibrate
extern const OptionRow layer, pass, processes, budget, comm, comm_max_megabytes, comm_budget;
extern const OptionRow anchor, anchor_settings, allocator_budget, repeat_budget, report, modules, slurm, no_wait;
extern const OptionRow slurm_node_job, slurm_refit_fabric, worker, keep_loading;
// fit, models show, recommend, scale
extern const OptionRow bootstrap, layers, objective, consider_parameter_server, format, explain, max_minutes, plot;
// jobs
extern const OptionRow jobs_file;
}  // namespace option_rows

// One value of `row` into `target` (a number row is checked, and canonical before CLI11 reads it).
CLI::Option* add_value(CLI::App& command, const OptionRow& row, int& target);
CLI::Option* add_value(CLI::App& command, const OptionRow& row, std::int64_t& target);
CLI::Option* add_value(CLI::App& command, const OptionRow& row, std::uint64_t& target);
CLI::Option* add_value(CLI::App& command, const OptionRow& row, double& target);
CLI::Option* add_value(CLI::App& command, const OptionRow& row, float& target);
CLI::Option* add_value(CLI::App& command, const OptionRow& row, std::string& target);
// A list of `row` as typed (parsed by list_values when the command runs).
CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::string& target);
// A list of `row` read into `target` when parsed, where the option may also be repeated:
// --batch 8,16, --batch 8..64 and --batch 8 --batch 16 are the same list, through the one grammar
// and limit (calibrate, validate).
CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::vector<std::int64_t>& target);
CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::vector<int>& target);
// A list of names (--model resnet18,resnet50; repeated, the same list): read by list_names.
CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::vector<std::string>& target);
CLI::Option* add_flag(CLI::App& command, const OptionRow& row, bool& target);
// A flag that runs `given` when it is given (recommend's --json sets its --format).
CLI::Option* add_flag(CLI::App& command, const OptionRow& row, std::function<void()> given);
// A row whose help is empty is hidden from --help (the modes dnntune starts itself).

// The values of a list of `row` (from add_list), checked ("" is refused: an empty list).
Expected<std::vector<double>> list_values(const OptionRow& row, const std::string& text);

// The names of a list of `row` (--precision fp32,bf16): common's one list reader
// (split_list_items), no empty item, no name twice, at most the row's list limit when it has one.
Expected<std::vector<std::string>> list_names(const OptionRow& row, const std::string& text);

// A default number as a list option's text: "25", "0.5".
std::string number_text(double value);

// "--batch" of "--batch" or of "-o,--output" ("--output").
std::string long_name(const OptionRow& row);

// Refuses an empty text value (a value given is never "not given": --partition "" is a mistake)
// and, as printable_text, one holding a control character.
CLI::Validator given_text();

// Refuses a text value holding a control character (ESC, newline ...): such text would reach a
// terminal or a script raw.
CLI::Validator printable_text();

}  // namespace dnntune::cli
