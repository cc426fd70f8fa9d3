// cli/recommend_command.cpp — `dnntune recommend`: the fastest processes-per-node, threads, SMT
// and batch for a network on this (or a described) node, with a ready SLURM script or mpirun
// line.
#include <algorithm>
#include <cmath>
#include <thread>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_commands.hpp"
#include "cli/launch_options.hpp"
#include "cli/model_options.hpp"
#include "cli/number_rules.hpp"
#include "frontend/request_defaults.hpp"
#include "cli/option_table.hpp"
#include "data/builtin_machines.hpp"
#include "pipeline/installed_allocators.hpp"
#include "pipeline/real_training.hpp"
#include "common/shell_words.hpp"
#include "common/text_format.hpp"
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
  std::string format = "text";        // a name in output_formats()
  std::string objective = "throughput";  // a name in tuner::objectives_by_name()
  double epochs = 90;
  std::int64_t dataset_images = 1281167;
  bool explain = false;
  double max_minutes = frontend::default_max_search_minutes;
  bool no_smt = false;
  bool consider_parameter_server = false;
  std::string fusion_megabytes = number_text(model::default_fusion_megabytes);
  std::string processes_per_node;  // --ppn: only these
  FabricOptions fabric;
  std::string output_path;
  int verify = 0;
  ModelSourceOptions source;
  LaunchOptions launch;
  std::vector<std::string> train_command;
  std::string gpus;          // --gpus: GPU machines only
  std::string precisions;    // --precision LIST: GPU machines only ("": every one the GPU has)
  std::string memory_formats;  // --memory-format LIST: GPU machines only ("": both)
  bool batch_given = false;  // a GPU search defaults to several batches
};

// A GPU --machine: the GPU tuner's search (GPUs per node, batch per GPU, fusion, nodes).
void recommend_for_gpu(const workloads::Network& network, const GpuSource& gpu,
                       const RecommendCommandOptions& options) {
  if (options.verify > 0 || options.global_batch > 0 || options.no_smt || options.consider_parameter_server ||
      !options.processes_per_node.empty())
    fail(bad_input("--verify, --global-batch, --no-smt, --consider-ps and --ppn describe CPU nodes; on a GPU machine "
                   "give --gpus, --batch, --nodes and --fusion-mb"));
  GpuRecommendRequest request;
  request.gpus = options.gpus;
  request.precisions = options.precisions;
  request.memory_formats = options.memory_formats;
  request.batches = options.batch_given ? options.batches : "";
  request.fusion_megabytes = options.fusion_megabytes;
  request.nodes = options.nodes;
  request.fabric = value_or_fail(fabric_from(options.fabric));
  request.objective = options.objective;
  request.format = options.format;
  request.explain = options.explain;
  request.output_path = options.output_path;
  request.launch = options.launch;
  request.epochs = options.epochs;
  request.dataset_images = options.dataset_images;
  request.train_command = options.train_command;
  run_gpu_recommend(network, gpu, request);
}

template <class Number>
std::vector<Number> parse_list(const OptionRow& row, const std::string& text) {
  const auto values = value_or_fail(list_values(row, text));
  return std::vector<Number>(values.begin(), values.end());
}

// What an output format renders from.
struct RenderInputs {
  const tuner::Recommendation& recommendation;
  const model::MachineRates& rates;
  const tuner::JobScriptOptions& job;
  bool explain;
};

struct OutputFormat {
  const char* name;
  std::string (*render)(const RenderInputs& inputs);
};

// --format: each name with its view (tuner/report.hpp, tuner/job_script.hpp); the first is the default.
const std::vector<OutputFormat>& output_formats() {
  static const std::vector<OutputFormat> formats{
      {"text",
       [](const RenderInputs& in) {
         return tuner::recommendation_text(in.recommendation, in.explain) + "  launch: " +
                tuner::mpirun_command_line(in.recommendation.best.prediction.configuration, in.rates, in.job) + "\n";
       }},
      {"json",
       [](const RenderInputs& in) { return tuner::recommendation_json(in.recommendation, in.explain).dump(2) + "\n"; }},
      {"slurm",
       [](const RenderInputs& in) { return tuner::slurm_script(in.recommendation.best.prediction, in.rates, in.job); }},
      {"mpirun",
       [](const RenderInputs& in) { return tuner::mpirun_text(in.recommendation.best.prediction, in.rates, in.job); }},
      {"torchrun",
       [](const RenderInputs& in) { return tuner::torchrun_text(in.recommendation.best.prediction, in.rates, in.job); }},
  };
  return formats;
}

template <class Table, class Name>
std::vector<std::string> names_of(const Table& table, Name name) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(name(entry));
  return names;
}

// --verify K: the analytical answer checked empirically. Trains the recommended configuration
// and the best-ranked others, K in all, on this node; tuner::choose_by_measurement decides.
void verify_for_real(tuner::Recommendation& recommendation, const RecommendCommandOptions& options) {
  if (!options.source.machine.empty() || !options.source.topology_path.empty())
    fail(bad_input("--verify trains on this machine: it cannot verify a recommendation for --machine or --topology"));
  pipeline::RealTrainingOptions training;
  training.iterations = 3;
  const auto candidates = tuner::verification_candidates(recommendation, static_cast<std::size_t>(options.verify));
  std::vector<tuner::VerifiedPoint> verified;
  for (std::size_t index = 0; index < candidates.size(); ++index) {
    const auto ranked = std::find_if(recommendation.ranking.begin(), recommendation.ranking.end(),
                                     [&](const auto& point) { return point.prediction.configuration == candidates[index]; });
    std::cerr << "dnntune recommend: verifying [" << index + 1 << "/" << candidates.size() << "] "
              << model::describe(candidates[index]) << std::endl;
    const pipeline::MeasuredTraining run = value_or_fail(pipeline::train_for_real(options.model, candidates[index], training));
    verified.push_back({ranked->prediction, run.images_per_second, run.low, run.high});
  }
  tuner::choose_by_measurement(recommendation, std::move(verified));
}

// Variance of log(a / b) over paired replicates (0 when there are none).
double paired_log_variance(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || a.size() != b.size()) return 0;
  std::vector<double> differences;
  for (std::size_t index = 0; index < a.size(); ++index) differences.push_back(std::log(a[index] / b[index]));
  double mean = 0, variance = 0;
  for (double value : differences) mean += value / differences.size();
  for (double value : differences) variance += (value - mean) * (value - mean) / (differences.size() - 1);
  return variance;
}

// How much of the answer's uncertainty the parameters the reference could not identify cause:
// their share of the pick's band (log-variance), and of the paired spread between the top score
// and its nearest rival, which is what decides a tie.
std::string band_share_line(const LoadedModel& loaded, const workloads::Network& network,
                            const tuner::Recommendation& recommendation) {
  const model::Predictor& fixed = *loaded.without_prior_spread;
  const model::Prediction& best = recommendation.best.prediction;
  const auto narrower = fixed.predict(network, best.configuration, true);
  if (!narrower) return "the share of the unidentified parameters could not be computed: " + narrower.error().message;
  const double whole = std::log(best.images_per_second / best.images_per_second_low);
  const double identified = std::log(narrower->images_per_second / narrower->images_per_second_low);
  const auto share = [](double part, double all) { return all > 0 ? std::max(0.0, 1 - part / all) : 0.0; };
  std::string line = "the unidentified parameters cause " + format_fixed(100 * share(identified * identified, whole * whole), 0) +
                     "% of the pick's band (its log-variance: " + format_fixed(best.images_per_second_low, 1) + "-" +
                     format_fixed(best.images_per_second_high, 1) + " images/s, " +
                     format_fixed(narrower->images_per_second_low, 1) + "-" +
                     format_fixed(narrower->images_per_second_high, 1) +
                     " with them fixed at their priors; the rest is the spec transfer and the reference's own fit)";
  // The top score against the pick, or against the runner-up when the pick is the top score.
  const auto& top = recommendation.ranking.front().prediction.configuration;
  const auto& rival = best.configuration != top ? best.configuration
                      : recommendation.ranking.size() > 1 ? recommendation.ranking[1].prediction.configuration
                                                          : top;
  if (rival == top) return line;
  const auto a = loaded.predictor.replicate_images_per_second(network, top);
  const auto b = loaded.predictor.replicate_images_per_second(network, rival);
  const auto a_fixed = fixed.replicate_images_per_second(network, top);
  const auto b_fixed = fixed.replicate_images_per_second(network, rival);
  if (!a || !b || !a_fixed || !b_fixed) return line;
  return line + ", and " + format_fixed(100 * share(paired_log_variance(*a_fixed, *b_fixed), paired_log_variance(*a, *b)), 0) +
         "% of the paired spread between " + model::describe(top) + " and " + model::describe(rival) +
         " (what decides whether they tie)";
}

// What would settle a tie the model cannot break, for where the model came from.
std::string how_to_settle(const LoadedModel& loaded, const RecommendCommandOptions& options) {
  const std::string model = " --model " + shell_quote(options.model);  // quoted as the scripts quote
  if (loaded.measured_here) return "dnntune recommend" + model + " --verify 4 trains the tied candidates on this node";
  if (loaded.from_partition)
    return "dnntune recommend" + model + " --verify 4 in a job on a node of " + options.launch.partition;
  const std::string partition = options.launch.partition.empty() ? "P" : options.launch.partition;
  if (!options.source.machine.empty() || !options.source.topology_path.empty())
    return "measure the node itself: dnntune calibrate --slurm --partition " + partition + model +
           ", then dnntune recommend --partition " + partition + model + " (or recommend" + model +
           " --verify 4 run on such a node)";
  return "dnntune recommend" + model + " --verify 4 in a job on a node of " + partition;
}

void run_recommend(const RecommendCommandOptions& options) {
  const auto network = value_or_fail(workloads::load_network(options.model));
  if (const auto gpu = gpu_machine(options.source)) return recommend_for_gpu(network, *gpu, options);
  if (!options.gpus.empty())
    fail(bad_input("--gpus applies to a GPU --machine (" + data::builtin_gpu_machine_names() + ")"));
  if (!options.precisions.empty() || !options.memory_formats.empty())
    fail(bad_input("--precision and --memory-format apply to a GPU --machine (" + data::builtin_gpu_machine_names() + ")"));
  tuner::SearchSpaceOptions space;
  space.batches_per_process = parse_list<std::int64_t>(option_rows::batch, options.batches);

  space.global_batch = options.global_batch;
  space.node_counts = value_or_fail(model::parse_node_counts(options.nodes));
  space.consider_smt = !options.no_smt;
  space.consider_parameter_server = options.consider_parameter_server;
  space.fusion_megabytes = parse_list<double>(option_rows::fusion_megabytes, options.fusion_megabytes);
  space.fabric = value_or_fail(fabric_from(options.fabric));
  if (!options.processes_per_node.empty())
    space.processes_per_node = parse_list<int>(option_rows::processes_per_node, options.processes_per_node);
  // A default calibration (of this machine) measures the batches its ranks would run with.
  const int this_machines_cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto batches = tuner::batches_to_score(space, this_machines_cpus);
  if (batches.empty())
    fail(bad_input("--global-batch " + std::to_string(space.global_batch) +
                   " does not split evenly over any number of processes of --nodes " + options.nodes +
                   " into batches of at most " + std::to_string(workloads::max_batch) + " per process"));
  ok_or_fail(check_launch_options(options.launch));
  // Everything the user typed is checked before the first run's calibration starts.
  ModelSourceOptions source = options.source;
  source.partition = options.launch.partition;  // the job's partition is also where the answer is for
  auto loaded = value_or_fail(load_model(source, {{options.model}, batches, options.source.backend}));
  const model::Predictor& predictor = loaded.predictor;
  if (options.verify > 0 && loaded.from_partition)
    fail(bad_input("--verify trains on this machine, but the answer is for partition " + options.launch.partition +
                   "'s nodes: run recommend --verify in a job on one of them"));
  tuner::RecommendOptions recommend_options;
  for (const auto& [name, objective] : tuner::objectives_by_name())  // CLI11 checked the name
    if (name == options.objective) recommend_options.objective = objective;
  recommend_options.epochs = options.epochs;
  recommend_options.dataset_images = options.dataset_images;
  // Long lists: refused past --max-minutes, else said first.
  ok_or_fail(frontend::announce_search(predictor, network, space, print_progress, options.max_minutes,
                                       long_name(option_rows::max_minutes)));
  auto recommendation = value_or_fail(tuner::recommend(predictor, network, space, recommend_options));
  recommendation.basis = loaded.basis;
  if (loaded.without_prior_spread) recommendation.basis.push_back(band_share_line(loaded, network, recommendation));
  recommendation.how_to_settle = how_to_settle(loaded, options);
  if (options.verify > 0) verify_for_real(recommendation, options);

  // The allocator of the best configuration: modelled for this machine only (a spec or another
  // node's topology has no fault cost of its own measured here).
  std::optional<model::AllocationModel> allocation;
  if (!predictor.spec_only())
    allocation = predictor.allocation() ? predictor.allocation() : model::prior_allocation(predictor.machine());
  tuner::recommend_allocator(recommendation, allocation, network, pipeline::installed_allocators(), options.launch.allocator);
  const auto& best = recommendation.best.prediction;  // the allocator may settle a close call
  auto job = value_or_fail(job_script_options(
      options.launch, network.name, options.epochs * static_cast<double>(options.dataset_images) / best.images_per_second,
      recommendation.allocator->chosen));
  job.allocator_note = tuner::allocator_summary(*recommendation.allocator);
  job.train_command = options.train_command;
  const auto format = std::find_if(output_formats().begin(), output_formats().end(),
                                   [&](const OutputFormat& entry) { return entry.name == options.format; });
  const OutputFormat& chosen = format != output_formats().end() ? *format : output_formats().front();
  const std::string text = chosen.render({recommendation, predictor.rates(), job, options.explain});
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
  add_value(*command, option_rows::model, options.model)->required();
  add_list(*command, option_rows::nodes, options.nodes)->capture_default_str();
  add_list(*command, option_rows::batch, options.batches)->capture_default_str();
  add_value(*command, option_rows::global_batch, options.global_batch);
  add_value(*command, option_rows::objective, options.objective)
      ->check(CLI::IsMember(names_of(tuner::objectives_by_name(), [](const auto& entry) { return entry.first; })))
      ->capture_default_str();
  add_value(*command, option_rows::epochs, options.epochs)->capture_default_str();
  add_value(*command, option_rows::dataset_images, options.dataset_images)->capture_default_str();
  add_flag(*command, option_rows::no_smt, options.no_smt);
  add_list(*command, option_rows::processes_per_node, options.processes_per_node);
  add_flag(*command, option_rows::consider_parameter_server, options.consider_parameter_server);
  add_list(*command, option_rows::fusion_megabytes, options.fusion_megabytes)->capture_default_str();
  add_fabric_options(*command, options.fabric);
  add_model_source_options(*command, options.source);
  add_value(*command, option_rows::topology, options.source.topology_path);
  add_value(*command, option_rows::format, options.format)
      ->check(CLI::IsMember(names_of(output_formats(), [](const OutputFormat& entry) { return std::string(entry.name); })))
      ->capture_default_str();
  // --json as on every other reporting command; --format json stays its alias.
  add_flag(*command, option_rows::json, [] { options.format = "json"; });
  add_flag(*command, option_rows::explain, options.explain);
  add_value(*command, option_rows::max_minutes, options.max_minutes)->capture_default_str();
  add_value(*command, option_rows::verify, options.verify);
  add_list(*command, option_rows::gpus, options.gpus);
  add_list(*command, option_rows::precision, options.precisions);
  add_list(*command, option_rows::memory_format, options.memory_formats);
  add_launch_options(*command, options.launch);
  add_value(*command, option_rows::output, options.output_path)->check(output_file());
  command->add_option("command", options.train_command, "Your training command (after --)")->check(printable_text());
  command->callback([command] {
    options.batch_given = command->count("--batch") > 0;
    run_recommend(options);
  });
}

}  // namespace dnntune::cli
