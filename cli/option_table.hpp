// cli/option_table.hpp — the CLI11 glue over the option rows (frontend/option_rows.hpp: every
// option of every command, defined once). A command adds an option from its row, never with
// CLI11's add_option or add_flag and a literal name (the ctest test
// tests/cli/option_definitions_test.py holds that):
//
//   add_value(*command, option_rows::batch, options.batch);        // one value: --batch 32
//   add_list(*command, option_rows::batch, options.batches);       // a list: --batch 8,16 or 8..64
//   ... list_values(option_rows::batch, options.batches)             // the list, checked, when run
//   add_flag(*command, option_rows::json, options.json);
//
// A command may narrow a row (->check(IsMember(...)), ->needs(...), ->required()), never rename
// or re-describe it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/number_rules.hpp"
#include "frontend/option_rows.hpp"

namespace dnntune::cli {

// The rows are frontend's (frontend/option_rows.hpp: plain data, so that frontend/ and python/
// name options from them too); here, the CLI11 glue over them.
using frontend::long_name;
using frontend::long_names;
using frontend::number_text;
using frontend::OptionRow;
namespace option_rows = frontend::option_rows;

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

// Refuses an empty text value (a value given is never "not given": --partition "" is a mistake)
// and, as printable_text, one holding a control character.
CLI::Validator given_text();

// Refuses a text value holding a control character (ESC, newline ...): such text would reach a
// terminal or a script raw.
CLI::Validator printable_text();

}  // namespace dnntune::cli
