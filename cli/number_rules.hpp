// cli/number_rules.hpp — numbers typed on the command line, checked when the options are parsed
// (a CLI11 check) by the one grammar and range table of common/number_grammar.hpp, before
// anything else runs: nothing is read, calibrated or written for a value out of range.
// A refusal is one line (--batch: Value 70000 not in range 1 to 65536), exit 2.
#pragma once

#include <CLI/CLI.hpp>

#include "common/number_grammar.hpp"

namespace dnntune::cli {

// The CLI11 check of `rule` (applied to each value of a repeatable option). It also rewrites the
// value in its canonical form ("08" -> "8", "1e3" -> "1000"), so that CLI11's own conversion
// to the option's type reads what the grammar read.
CLI::Validator checked(const NumberRule& rule);

// The CLI11 check of a list option kept as text (parsed again with parse_checked_list where used).
CLI::Validator checked_list(const ListRule& rule);

}  // namespace dnntune::cli
