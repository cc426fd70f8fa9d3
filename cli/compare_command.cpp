// cli/compare_command.cpp — `dnntune compare`: the CPU-versus-GPU answer. Each --machine at its
// best configuration (a CPU node: the tuner's best processes, threads, SMT and batch on one node;
// a GPU: the best batch on --gpus GPUs of one node), side by side with bands, and how many times
// faster or slower each is than the first.
#include <algorithm>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_commands.hpp"
#include "cli/model_options.hpp"
#include "cli/option_table.hpp"
#include "data/builtin_machines.hpp"
#include "tuner/comparison.hpp"
#include "tuner/gpu_recommendation.hpp"
#include "tuner/recommendation.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::cli {
namespace {

struct CompareOptions {
  std::string model;
  std::vector<std::string> machines;
  std::string batches = "32,64";
  int gpus = 1;
  std::string backend = "torch";
  std::string precision;      // GPUs: "" for each GPU's PyTorch default
  std::string memory_format;  // GPUs: "" for contiguous
  OutputOptions output;
};

tuner::ComparedMachine best_on_gpu(const workloads::Network& network, const GpuSource& gpu,
                                   const std::vector<std::int64_t>& batches, int gpus, const CompareOptions& options) {
  const model::GpuNode& node = gpu.node;
  if (gpus > node.gpus_per_node)
    fail(bad_input(long_name(option_rows::gpus) + " " + std::to_string(gpus) + ": a " + node.name + " node holds " +
                   std::to_string(node.gpus_per_node)));
  tuner::GpuSearchOptions search;
  search.gpus_per_node = {gpus};
  search.batches_per_gpu = batches;
  model::GpuConfiguration numerics;
  apply_gpu_numerics(numerics, options.precision, options.memory_format);
  const model::GpuPrecision precision = model::resolved_precision(numerics, node);
  ok_or_fail(model::check_gpu_precision(node, precision));
  search.precisions = {precision};
  search.memory_formats = {numerics.memory_format};
  const auto best = value_or_fail(tuner::recommend_gpu(network, node, gpu.efficiencies, search)).best;
  return {node.name,
          "gpu",
          model::describe(best.configuration),
          best.images_per_second,
          best.images_per_second_low,
          best.images_per_second_high,
          best.efficiencies_source};
}

tuner::ComparedMachine best_on_cpu(const workloads::Network& network, const std::string& machine,
                                   const std::vector<std::int64_t>& batches, const std::string& backend) {
  ModelSourceOptions source;
  source.machine = machine;
  source.backend = backend;
  const auto predictor = value_or_fail(load_predictor(source, {{network.name}, batches, backend}));
  tuner::SearchSpaceOptions space;
  space.batches_per_process = batches;
  const auto best = value_or_fail(tuner::recommend(predictor, network, space, {})).best.prediction;
  return {predictor.machine().name,
          "cpu-node",
          "one node, " + model::describe(best.configuration),
          best.images_per_second,
          best.images_per_second_low,
          best.images_per_second_high,
          "the built-in " + backend + " reference calibration's, carried to this spec (confidence " + best.confidence +
              ")"};
}

void run_compare(const CompareOptions& options) {
  const auto network = value_or_fail(workloads::load_network(options.model));
  const auto listed = value_or_fail(list_values(option_rows::batch, options.batches));
  const std::vector<std::int64_t> batches(listed.begin(), listed.end());
  // Every machine loads before anything is predicted: a bad name fails at once.
  std::vector<records::MachineProfile> profiles;
  for (const std::string& name : options.machines) profiles.push_back(value_or_fail(data::load_machine(name)));
  tuner::Comparison comparison;
  comparison.network = network.name;
  for (std::size_t index = 0; index < profiles.size(); ++index) {
    if (profiles[index].kind == records::MachineKind::gpu)
      comparison.machines.push_back(best_on_gpu(network,
                                                {value_or_fail(model::gpu_node(profiles[index])), gpu_efficiencies()},
                                                batches, options.gpus, options));
    else
      comparison.machines.push_back(best_on_cpu(network, options.machines[index], batches, options.backend));
  }
  write_output(
      options.output.json ? tuner::comparison_json(comparison).dump(2) + "\n" : tuner::comparison_text(comparison),
      options.output.path);
}

}  // namespace

void add_compare_command(CLI::App& root) {
  static CompareOptions options;
  CLI::App* command = root.add_subcommand(
      "compare",
      "Compare machines (CPU nodes and GPUs) at their best configurations for a network: images/s with "
      "90% bands, and each one's speed over the first.");
  add_value(*command, option_rows::model, options.model)->required();
  add_list(*command, option_rows::machine, options.machines)->required();
  add_list(*command, option_rows::batch, options.batches)->capture_default_str();
  add_value(*command, option_rows::gpus, options.gpus)->capture_default_str();
  add_value(*command, option_rows::backend, options.backend)
      ->check(CLI::IsMember({"torch", "onednn"}))
      ->capture_default_str();
  add_value(*command, option_rows::precision, options.precision);
  add_value(*command, option_rows::memory_format, options.memory_format);
  add_output_options(*command, options.output);
  command->callback([] {
    if (options.machines.size() < 2) fail(bad_input("compare needs at least two --machine"));
    run_compare(options);
  });
}

}  // namespace dnntune::cli
