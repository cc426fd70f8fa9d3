// cli/number_rules.hpp — the one validation layer for numbers typed on the command line. Every
// number that reaches the model, the tuner or the trainer has a rule here, checked when the
// options are parsed (a CLI11 check) or, for lists like `--batch 8,16`, by parse_checked
// before anything else runs: nothing is read, calibrated or written for a value out of range.
// A refusal is one line, "--batch: Value 70000 not in range 1 to 65536", exit 2.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/expected.hpp"

namespace dnntune::cli {

struct NumberRule {
  double lowest = 0;
  double highest = 0;
  bool lowest_excluded = false;  // "> lowest" rather than ">= lowest"
  bool integer = true;
};

namespace rules {
// Batch per process: the workload graph's bound (workloads::max_batch).
extern const NumberRule batch_per_process;
extern const NumberRule global_batch;      // 1..2^31-1; each process's share must be a valid batch
extern const NumberRule nodes;             // 1..2^20
extern const NumberRule ranks_or_threads;  // ppn, threads, processes, servers: 1..4096
extern const NumberRule parameter_servers;  // 0 (none)..4096
extern const NumberRule steps;             // measured steps: 1..10^6
extern const NumberRule warmup_steps;      // 0..10^6
extern const NumberRule epochs;            // > 0, at most 10^6
extern const NumberRule dataset_images;    // 1..10^12
extern const NumberRule megabytes;         // fusion threshold, bucket, message size: > 0, at most 2^20 MiB
extern const NumberRule learning_rate;     // > 0, at most 10^12 (a rate that diverges is stopped by the trainer)
extern const NumberRule calibration_budget;  // seconds: 10..10^7 (the probe and the checks alone take seconds)
extern const NumberRule seconds;           // other time budgets: > 0, at most 10^7
}  // namespace rules

// "an integer from 1 to 65536", "a number from 0 (excluded) to 1048576".
std::string describe(const NumberRule& rule);

// `text` as a finite number within `rule`, else bad_input("Value TEXT not in range 1 to 65536").
Expected<double> parse_checked(const std::string& text, const NumberRule& rule);

// A comma-separated list of numbers within `rule` ("8,16,32"); `option` names it in messages.
Expected<std::vector<double>> parse_checked_list(const std::string& text, const NumberRule& rule,
                                                 const std::string& option);

// The CLI11 check of `rule` (applied to each value of a repeatable option).
CLI::Validator checked(const NumberRule& rule);

}  // namespace dnntune::cli
