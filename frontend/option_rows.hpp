// frontend/option_rows.hpp — every option of every command, defined once: its names, help, value
// text and check (common/number_grammar.hpp's grammar and ranges). The rows are plain data (no
// CLI11), so that the command (cli/option_table.hpp adds them to CLI11), the answers' messages
// (frontend/) and the Python module all name an option from its row: a message says
// long_name(option_rows::gpus) + " applies to ...", never the name as a literal (the ctest test
// tests/cli/option_definitions_test.py holds that for cli/, frontend/ and python/; --counts
// prints the definitions per name).
//
// A row with a list rule takes the one list syntax in every command that takes a list (comma
// lists and ranges, at most `list->max_items` values), and one value where the command takes
// one. A new option is a new row (option_rows.cpp, in its command's section), not a new
// add_option in a command. A command may narrow a row (->check(IsMember(...)), ->needs(...),
// ->required()), never rename or re-describe it. Two rows with one name are two meanings, said in
// a comment above the second ("another meaning: ...").
#pragma once

#include <initializer_list>
#include <string>

#include "common/number_grammar.hpp"

namespace dnntune::frontend {

struct OptionRow {
  const char* names;                   // CLI11's: the long name, its alias or short name after a comma (-o,--output)
  std::string help;                    // for one value ("": hidden from --help)
  const char* value_text = "";         // "N", "FILE", "NAME" ("" : CLI11's default)
  const NumberRule* number = nullptr;  // a number: its grammar and range
  const ListRule* list = nullptr;      // may be a list: its limit (and number rule)
  const char* list_help = "";          // appended to `help` where the command takes a list
};

namespace option_rows {
extern const OptionRow version;
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

// The option's long name as a user writes it: --batch of --batch, --output of -o,--output,
// --fabric of --fabric,--network.
std::string long_name(const OptionRow& row);

// A default number as help or a list option's text shows it: "25", "0.5".
std::string number_text(double value);

// Several rows' long names as a message lists them: --ppn; --ppn and --threads;
// --threads, --smt and --ps.
std::string long_names(std::initializer_list<const OptionRow*> rows);

}  // namespace dnntune::frontend
