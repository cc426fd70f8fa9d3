// cli/recommend_command.cpp — `dnntune recommend`: the fastest processes-per-node, threads, SMT
// and batch for a network on this (or a described) node, with a ready SLURM script or mpirun
// line.
#include <algorithm>
#include <thread>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/launch_options.hpp"
#include "cli/model_options.hpp"
#include "cli/number_rules.hpp"
#include "cli/real_training.hpp"
#include "model/scaling.hpp"
#include "tuner/job_script.hpp"
#include "tuner/recommendation.hpp"
#include "tuner/report.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::cli {
namespace {

struct RecommendCommandOptions {
  std::string model;
  std::string nodes = "1";
  std::string batches = "32";
  std::int64_t global_batch = 0;
  std::string format = "text";
  std::string objective = "throughput";
  double epochs = 90;
  std::int64_t dataset_images = 1281167;
  bool explain = false;
  bool no_smt = false;
  bool consider_parameter_server = false;
  std::string fusion_megabytes = "25";
  std::string processes_per_node;  // --ppn: only these
  FabricOptions fabric;
  std::string output_path;
  int verify = 0;
  ModelSourceOptions source;
  LaunchOptions launch;
  std::vector<std::string> train_command;
};

template <class Number>
std::vector<Number> parse_list(const std::string& text, const NumberRule& rule, const char* option) {
  const auto values = value_or_fail(parse_checked_list(text, rule, option));
  return std::vector<Number>(values.begin(), values.end());
}

// --verify K: the analytical answer checked empirically. Trains the recommended configuration
// and the best-ranked others, K in all, on this node; tuner::choose_by_measurement decides.
void verify_for_real(tuner::Recommendation& recommendation, const RecommendCommandOptions& options) {
  if (!options.source.machine.empty() || !options.source.topology_path.empty())
    fail(bad_input("--verify trains on this machine: it cannot verify a recommendation for --machine or --topology"));
  RealTrainingOptions training;
  training.iterations = 3;
  const auto candidates = tuner::verification_candidates(recommendation, static_cast<std::size_t>(options.verify));
  std::vector<tuner::VerifiedPoint> verified;
  for (std::size_t index = 0; index < candidates.size(); ++index) {
    const auto ranked = std::find_if(recommendation.ranking.begin(), recommendation.ranking.end(),
                                     [&](const auto& point) { return point.prediction.configuration == candidates[index]; });
    std::cerr << "dnntune recommend: verifying [" << index + 1 << "/" << candidates.size() << "] "
              << model::describe(candidates[index]) << std::endl;
    const MeasuredTraining run = train_for_real(options.model, candidates[index], training);
    verified.push_back({ranked->prediction, run.images_per_second, run.low, run.high});
  }
  tuner::choose_by_measurement(recommendation, std::move(verified));
}

void run_recommend(const RecommendCommandOptions& options) {
  const auto network = value_or_fail(workloads::load_network(options.model));
  tuner::SearchSpaceOptions space;
  space.batches_per_process = parse_list<std::int64_t>(options.batches, rules::batch_per_process, "--batch");

  space.global_batch = options.global_batch;
  space.node_counts = value_or_fail(model::parse_node_counts(options.nodes));
  space.consider_smt = !options.no_smt;
  space.consider_parameter_server = options.consider_parameter_server;
  space.fusion_megabytes = parse_list<double>(options.fusion_megabytes, rules::megabytes, "--fusion-mb");
  space.fabric = value_or_fail(fabric_from(options.fabric));
  if (!options.processes_per_node.empty())
    space.processes_per_node = parse_list<int>(options.processes_per_node, rules::ranks_or_threads, "--ppn");
  // A default calibration (of this machine) measures the batches its ranks would run with.
  const int this_machines_cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto batches = tuner::batches_to_score(space, this_machines_cpus);
  if (batches.empty())
    fail(bad_input("--global-batch " + std::to_string(space.global_batch) +
                   " does not split evenly over any number of processes of --nodes " + options.nodes +
                   " into batches of at most " + std::to_string(workloads::max_batch) + " per process"));
  ok_or_fail(check_allocator(options.launch));
  // Everything the user typed is checked before the first run's calibration starts.
  const auto predictor = value_or_fail(load_predictor(options.source, {{options.model}, batches, options.source.backend}));
  tuner::RecommendOptions recommend_options;
  recommend_options.objective = options.objective == "time-to-train"     ? tuner::Objective::time_to_train
                                : options.objective == "images-per-node" ? tuner::Objective::images_per_node
                                                                         : tuner::Objective::throughput;
  recommend_options.epochs = options.epochs;
  recommend_options.dataset_images = options.dataset_images;
  auto recommendation = value_or_fail(tuner::recommend(predictor, network, space, recommend_options));
  if (options.verify > 0) verify_for_real(recommendation, options);

  const auto& best = recommendation.best.prediction;
  // The allocator of the best configuration: modelled for this machine only (a spec or another
  // node's topology has no fault cost of its own measured here).
  std::optional<model::AllocationModel> allocation;
  if (!predictor.spec_only())
    allocation = predictor.allocation() ? predictor.allocation() : model::prior_allocation(predictor.machine());
  recommendation.allocator =
      tuner::choose_allocator(allocation, network, best, installed_allocators(), options.launch.allocator);
  auto job = value_or_fail(job_script_options(
      options.launch, network.name, options.epochs * static_cast<double>(options.dataset_images) / best.images_per_second,
      recommendation.allocator->chosen));
  job.allocator_note = tuner::allocator_summary(*recommendation.allocator);
  job.train_command = options.train_command;
  std::string text;
  if (options.format == "json") text = tuner::recommendation_json(recommendation, options.explain).dump(2) + "\n";
  else if (options.format == "slurm") text = tuner::slurm_script(best, predictor.rates(), job);
  else if (options.format == "mpirun") text = tuner::mpirun_text(best, predictor.rates(), job);
  else if (options.format == "torchrun") text = tuner::torchrun_text(best, predictor.rates(), job);
  else {
    text = tuner::recommendation_text(recommendation, options.explain);
    text += "  launch: " + tuner::mpirun_command_line(recommendation.best.prediction.configuration, predictor.rates(), job) + "\n";
  }
  write_output(text, options.output_path);
}

}  // namespace

void add_recommend_command(CLI::App& root) {
  static RecommendCommandOptions options;
  CLI::App* command = root.add_subcommand(
      "recommend",
      "Recommend the fastest processes per node, threads per process, SMT and batch for training a network, "
      "with its predicted images/s and band; --format slurm writes a ready batch script.\n"
      "Everything after `--` is your training command, put into the script.");
  command->add_option("--model", options.model, "A built-in network (`dnntune models`) or a network JSON file")
      ->required();
  command->add_option("--nodes", options.nodes, "Nodes: a count, a list 1,2,4 or a range 1..64 to scan")
      ->capture_default_str();
  command->add_option("--batch", options.batches, "Batch per process: one or a list to choose from (8,16,32)")
      ->capture_default_str();
  command->add_option("--global-batch", options.global_batch,
                      "Keep this global batch fixed, split evenly over all processes (instead of --batch)")
      ->check(checked(rules::global_batch));
  command->add_option("--objective", options.objective, "throughput, time-to-train or images-per-node")
      ->check(CLI::IsMember({"throughput", "time-to-train", "images-per-node"}))
      ->capture_default_str();
  command->add_option("--epochs", options.epochs, "time-to-train: epochs")->capture_default_str()
      ->check(checked(rules::epochs));
  command->add_option("--dataset-images", options.dataset_images, "time-to-train: images per epoch")
      ->capture_default_str()
      ->check(checked(rules::dataset_images));
  command->add_flag("--no-smt", options.no_smt, "Do not consider hyper-threading");
  command->add_option("--ppn", options.processes_per_node,
                      "Only these processes per node (a list: 2,4), when a launcher or a site rule fixes them");
  command->add_flag("--consider-ps", options.consider_parameter_server, "Also consider parameter-server schemes");
  command->add_option("--fusion-mb", options.fusion_megabytes, "All-reduce fusion thresholds to consider, MiB")
      ->capture_default_str();
  add_fabric_options(*command, options.fabric);
  add_model_source_options(*command, options.source);
  command->add_option("--topology", options.source.topology_path,
                      "Tune for the node described by this hwloc XML (with --calibration of a node of that CPU)")
      ->option_text("FILE.xml");
  command->add_option("--format", options.format,
                      "text, json, slurm (a batch script), mpirun or torchrun (launch lines)")
      ->check(CLI::IsMember({"text", "json", "slurm", "mpirun", "torchrun"}))
      ->capture_default_str();
  // --json as on every other reporting command; --format json stays its alias.
  command->add_flag_callback("--json", [] { options.format = "json"; }, "JSON for scripts (the same as --format json)");
  command->add_flag("--explain", options.explain, "Print the whole ranking and every excluded configuration");
  command->add_option("--verify", options.verify,
                      "Train the K best candidates for real on this node and recommend the measured best")
      ->option_text("K")
      ->check(checked(rules::ranks_or_threads));
  add_launch_options(*command, options.launch);
  command->add_option("-o,--output", options.output_path, "Write to FILE instead of standard output")
      ->option_text("FILE")
      ->check(output_file());
  command->add_option("command", options.train_command, "Your training command (after --)");
  command->callback([] { run_recommend(options); });
}

}  // namespace dnntune::cli
