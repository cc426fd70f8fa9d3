// common/number_grammar.hpp — the one grammar and the one table of ranges for every number a
// user gives dnntune: command-line options (cli/option_table.hpp) and the Python module's
// arguments (python/dnntune_module.cpp) parse and check through here, so that `--batch 08`,
// `batch=8` and `--nodes 8` mean the same thing everywhere and are refused with the same words.
//
// The grammar:
//   number := ['-'] DIGITS ['.' DIGITS] [('e' | 'E') ['+' | '-'] DIGITS]
//     decimal only: leading zeros are decimal ("08" is 8); no leading '+', no hex ("0x10"), no
//     spaces anywhere, no "inf" or "nan", no "5." or ".5". An integer option takes any number
//     whose value is whole ("1e3" is 1000, "1.5" is refused).
//   list := item (',' item)*   no empty item: ",8", "8," and "8,,16" are refused
//   item := number | number '..' number
//     a range FIRST..LAST is FIRST, 2 FIRST, 4 FIRST ... below LAST, then LAST (`--nodes 1..256`);
//     FIRST must be above 0 and at most LAST.
// A list option has a maximum number of values after ranges are expanded (ListRule::max_items):
// each value multiplies the work of a search, so a list past it is refused with the limit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace dnntune {

struct NumberRule {
  double lowest = 0;
  double highest = 0;
  bool lowest_excluded = false;  // "> lowest" rather than ">= lowest"
  bool integer = true;
};

namespace rules {
// Batch per process (or per GPU): the workload graph's bound (workloads::max_batch, checked
// equal where both are seen: frontend/option_rows.cpp).
inline constexpr NumberRule batch_per_process{1, 65536};
inline constexpr NumberRule global_batch{1, 2147483647.0};  // each process's share must be a valid batch
inline constexpr NumberRule nodes{1, 1048576};
inline constexpr NumberRule ranks_or_threads{1, 4096};   // ppn, threads, processes, servers, GPUs
inline constexpr NumberRule parameter_servers{0, 4096};  // 0: none
inline constexpr NumberRule steps{1, 1e6};               // measured steps
inline constexpr NumberRule warmup_steps{0, 1e6};
inline constexpr NumberRule epochs{0, 1e6, true, false};
inline constexpr NumberRule dataset_images{1, 1e12};
// Fusion threshold, bucket, message size: at least one byte (a size of 1e-320 MiB is no size).
inline constexpr NumberRule megabytes{1.0 / 1048576, 1048576, false, false};
inline constexpr NumberRule learning_rate{0, 1e12, true, false};  // a rate that diverges is stopped by the trainer
inline constexpr NumberRule calibration_budget{10, 1e7, false, false};  // the probe and the checks alone take seconds
inline constexpr NumberRule seconds{0, 1e7, true, false};               // other time budgets
inline constexpr NumberRule first_run_budget{0, 86400, true, false};    // --calibration-budget: at most a day
// Grammar only: the trainer checks the momentum itself (train/trainer.hpp), with its reason.
inline constexpr NumberRule momentum{-1e12, 1e12, false, false};
inline constexpr NumberRule seed{0, 9007199254740992.0};      // 2^53: every integer exact in a double
inline constexpr NumberRule link_gbits{0, 1e6, true, false};  // a link's line rate, Gb/s
inline constexpr NumberRule link_latency_us{0, 1e6, false, false};
inline constexpr NumberRule bootstrap_replicates{0, 1000};
inline constexpr NumberRule search_minutes{0, 1e7, true, false};  // recommend --max-minutes
// Grammar only, where a library checks the range itself with its own reason (train --batch:
// check_train_options): any integer an int64 holds.
inline constexpr NumberRule any_integer{-9.2e18, 9.2e18};
}  // namespace rules

struct ListRule {
  NumberRule value;
  std::size_t max_items = 1;
};

namespace lists {
// Each node count, batch and fusion size multiplies recommend's search (each costs about as much
// as a whole default recommend), and each batch a CPU answer scores is one the first run
// calibrates. 32 node counts cover every power of two to the nodes rule's 2^20 (21) and a
// hand-written table; 16 batches or fusion sizes cover every power of two a search would try.
inline constexpr ListRule node_counts{rules::nodes, 32};
inline constexpr ListRule batches{rules::batch_per_process, 16};
inline constexpr ListRule fusion_megabytes{rules::megabytes, 16};
inline constexpr ListRule processes_per_node{rules::ranks_or_threads, 32};
inline constexpr ListRule gpus_per_node{rules::ranks_or_threads, 32};
// calibrate's restrictions of its grid (--threads 1,2 --processes 1,2).
inline constexpr ListRule threads_per_process{rules::ranks_or_threads, 32};
inline constexpr ListRule co_running_processes{rules::ranks_or_threads, 32};
// compare's machines (names, no number rule): each is a whole recommend of its own (seconds, a
// first run's worth for a CPU node without a calibration), and a table of 16 is already more
// than a reader compares.
inline constexpr ListRule compared_machines{{}, 16};
}  // namespace lists

// `text` as a number of the grammar above, or nothing.
std::optional<double> parse_number(std::string_view text);

// "an integer from 1 to 65536", "a number from 0 (excluded) to 1048576".
std::string describe(const NumberRule& rule);

// `value` within `rule`, else bad_input("Value TEXT not in range 1 to 65536") (TEXT as given, or
// the value written out when `text` is empty).
Expected<double> check_number(double value, const NumberRule& rule, const std::string& text = "");

// `text` as a number of the grammar within `rule`, else bad_input("Value TEXT is not a number
// (an integer from 1 to 65536)" / "... not in range ..." / "... is not an integer").
Expected<double> parse_checked(const std::string& text, const NumberRule& rule);

// The same number written the one way every reader takes: "8" for "08" and "1e3" in an integer
// rule, "0.5" for "5e-1".
Expected<std::string> canonical_number(const std::string& text, const NumberRule& rule);

// Whether a list may name one item twice: a number list may (ranges overlap: 1..8,8), a list of
// names to consider may not (--precision fp32,fp32 is a mistake, not a weight).
enum class Repeats { allowed, refused };

// The one reader of every comma list a user gives (numbers, names, settings): the items in the
// order given, each as typed. Refused with the same one line everywhere: an empty list, an empty
// item ("8,", ",8", "8,,16"), and under Repeats::refused an item given twice; `option` names the
// list in the message ("" for none).
Expected<std::vector<std::string>> split_list_items(const std::string& text, const std::string& option,
                                                    Repeats repeats);

// A list of the grammar within `rule`, in the order given (ranges expanded); `option` names it in
// messages ("--batch: Value 0 not in range 1 to 65536"; "" for none).
Expected<std::vector<double>> parse_checked_list(const std::string& text, const ListRule& rule,
                                                 const std::string& option);

// `count` values of a list checked against `rule`'s length (for lists given as Python lists).
Expected<void> check_list_length(std::size_t count, const ListRule& rule, const std::string& option);

}  // namespace dnntune
