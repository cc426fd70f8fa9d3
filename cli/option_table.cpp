// cli/option_table.cpp — see option_table.hpp.
#include "cli/option_table.hpp"

#include <cstdio>

#include "workloads/layer.hpp"

namespace dnntune::cli {

static_assert(rules::batch_per_process.highest == workloads::max_batch,
              "the batch rule is the workload graph's bound");

namespace option_rows {
const OptionRow model{"--model", "A built-in network (`dnntune models`) or a network JSON file"};
const OptionRow batch{"--batch", "Batch per process (per GPU on a GPU machine)", "", &rules::batch_per_process,
                      &lists::batches, ": one or a list to choose from (8,16,32 or a range 8..64; at most 16)"};
const OptionRow nodes{"--nodes", "Nodes", "", &rules::nodes, &lists::node_counts,
                      ": a count, a list 1,2,4 or a range 1..64 (powers of two; at most 32 counts)"};
const OptionRow processes_per_node{"--ppn", "Processes (ranks) per node", "", &rules::ranks_or_threads,
                                   &lists::processes_per_node,
                                   ": only these (a list: 2,4), when a launcher or a site rule fixes them"};
const OptionRow threads{"--threads", "Threads per process", "", &rules::ranks_or_threads};
const OptionRow smt{"--smt", "Place threads on SMT siblings too (hyper-threading on)"};
const OptionRow parameter_servers{"--ps", "Use a parameter server with this many server ranks (default: ring all-reduce)",
                                  "", &rules::ranks_or_threads};
const OptionRow asynchronous{"--async", "Asynchronous parameter server (no barrier)"};
const OptionRow fusion_megabytes{"--fusion-mb", "All-reduce fusion threshold in MiB", "", &rules::megabytes,
                                 &lists::fusion_megabytes, "; the thresholds to consider (a list: 16,25,64; at most 16)"};
const OptionRow gpus{"--gpus", "GPUs per node (a GPU --machine only; default 1)", "", &rules::ranks_or_threads,
                     &lists::gpus_per_node, "; the counts to consider (a list: 1,8; default 1, 2, 4 .. all)"};
const OptionRow precision{"--precision",
                          "A GPU --machine only: fp32 (strict), tf32 (PyTorch's default where the GPU has it), bf16 or "
                          "fp16 (autocast)",
                          "NAME", nullptr, nullptr, "; the ones to consider (a list: fp32,bf16; default every one the GPU has)"};
const OptionRow memory_format{"--memory-format", "A GPU --machine only: contiguous (default) or channels_last", "NAME",
                              nullptr, nullptr, "; the ones to consider (a list; default both)"};
const OptionRow global_batch{"--global-batch",
                             "Keep this global batch fixed, split evenly over all processes (instead of --batch)", "",
                             &rules::global_batch};
const OptionRow epochs{"--epochs", "time-to-train: epochs", "", &rules::epochs};
const OptionRow dataset_images{"--dataset-images", "time-to-train: images per epoch", "", &rules::dataset_images};
const OptionRow verify{"--verify", "Train the K best candidates for real on this node and recommend the measured best",
                       "K", &rules::ranks_or_threads};
const OptionRow fabric{"--fabric,--network", "Inter-node fabric preset"};
const OptionRow link_gbits{"--link-gbps", "Inter-node link line rate in Gb/s (instead of --fabric; 90% of it is usable)",
                           "GBITS", &rules::link_gbits};
const OptionRow link_latency_us{"--link-latency-us", "Inter-node MPI latency in microseconds (with --link-gbps)",
                                "MICROSECONDS", &rules::link_latency_us};
const OptionRow calibration{"--calibration",
                            "A calibration made by `dnntune fit` (this machine's, or the reference for --machine)", "FILE"};
const OptionRow machine{"--machine",
                        "Predict for a built-in spec machine (`dnntune machines`) or a profile JSON, with the "
                        "--calibration's efficiencies carried over (lower confidence)",
                        "NAME|FILE.json"};
const OptionRow backend{"--backend",
                        "The framework you train with: torch (PyTorch) or onednn (TensorFlow/MXNet-style kernels)"};
const OptionRow calibration_budget{
    "--calibration-budget",
    "Seconds of the whole first run when this machine's calibration must be made first (default: 240), the probe "
    "included: it measures every distinct layer, trains the network at the base setting, under each allocator "
    "variant and at the settings that separate the top candidates, then more layer passes with what is left, all "
    "shares scaled from this budget; it says at the start what it will measure and about how long",
    "SECONDS", &rules::first_run_budget};
const OptionRow topology{"--topology",
                         "Tune for the node described by this hwloc XML (with --calibration of a node of that CPU)",
                         "FILE.xml"};
const OptionRow json{"--json", "Print JSON instead of the text report"};
const OptionRow output{"-o,--output", "Write to FILE instead of standard output", "FILE"};
const OptionRow time_limit{"--time",
                           "SLURM --time: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (default: the predicted time "
                           "to train --epochs, +25% and 10 minutes, within the partition's time limit as sinfo says it, else 24 "
                           "hours; a longer training is requeued)",
                           "[D-]HH:MM:SS"};
const OptionRow partition{"--partition", "SLURM partition", "NAME"};
const OptionRow account{"--account", "SLURM account", "NAME"};
}  // namespace option_rows

namespace {

template <class T>
CLI::Option* add_number_or_text(CLI::App& command, const OptionRow& row, T& target) {
  CLI::Option* option = command.add_option(row.names, target, row.help);
  if (*row.value_text) option->option_text(row.value_text);
  if (row.number) option->transform(checked(*row.number));
  return option;
}

}  // namespace

CLI::Option* add_value(CLI::App& command, const OptionRow& row, int& target) {
  return add_number_or_text(command, row, target);
}
CLI::Option* add_value(CLI::App& command, const OptionRow& row, std::int64_t& target) {
  return add_number_or_text(command, row, target);
}
CLI::Option* add_value(CLI::App& command, const OptionRow& row, double& target) {
  return add_number_or_text(command, row, target);
}
CLI::Option* add_value(CLI::App& command, const OptionRow& row, std::string& target) {
  CLI::Option* option = add_number_or_text(command, row, target);
  if (!row.number) option->check(printable_text());
  return option;
}

CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::string& target) {
  CLI::Option* option = command.add_option(row.names, target, std::string(row.help) + row.list_help);
  option->option_text(*row.value_text ? row.value_text : "LIST");
  return option;
}

CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::vector<std::int64_t>& target) {
  std::string shown_default;
  for (const std::int64_t value : target) shown_default += (shown_default.empty() ? "" : ",") + std::to_string(value);
  CLI::Option* option = command.add_option(
      row.names,
      [&target, &row](const CLI::results_t& values) {
        std::string joined;
        for (const std::string& value : values) joined += (joined.empty() ? "" : ",") + value;
        const auto listed = list_values(row, joined);
        if (!listed) throw CLI::ValidationError(listed.error().message);
        target.assign(listed->begin(), listed->end());
        return true;
      },
      std::string(row.help) + row.list_help + "; or repeat it");
  option->type_size(1)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  option->option_text(*row.value_text ? row.value_text : "LIST");
  option->default_str(shown_default);
  return option;
}

CLI::Option* add_flag(CLI::App& command, const OptionRow& row, bool& target) {
  return command.add_flag(row.names, target, row.help);
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string long_name(const OptionRow& row) {
  const std::string names = row.names;
  const auto comma = names.find(',');
  if (comma == std::string::npos) return names;
  const std::string second = names.substr(comma + 1);
  return second.rfind("--", 0) == 0 && names.rfind("--", 0) != 0 ? second : names.substr(0, comma);
}

Expected<std::vector<double>> list_values(const OptionRow& row, const std::string& text) {
  const ListRule rule = row.list ? *row.list : ListRule{row.number ? *row.number : NumberRule{}, 1};
  return parse_checked_list(text, rule, long_name(row));
}

CLI::Validator printable_text() {
  return CLI::Validator(
      [](std::string& text) {
        for (const char character : text)
          if (static_cast<unsigned char>(character) < 0x20 || character == 0x7f)
            return std::string("holds a control character (a newline, ESC, ...)");
        return std::string();
      },
      "");
}

}  // namespace dnntune::cli
