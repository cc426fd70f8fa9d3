// cli/recommend_command.cpp — `dnntune recommend`: the fastest processes-per-node, threads, SMT
// and batch for a network on this (or a described) node, with a ready SLURM script or mpirun
// line.
#include <algorithm>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_commands.hpp"
#include "cli/launch_options.hpp"
#include "cli/model_options.hpp"
#include "cli/number_rules.hpp"
#include "cli/option_table.hpp"
#include "data/builtin_machines.hpp"
#include "frontend/answers.hpp"
#include "model/scaling.hpp"
#include "tuner/job_script.hpp"
#include "tuner/recommendation.hpp"
#include "tuner/report.hpp"

namespace dnntune::cli {
namespace {

// A default list of tuner's as the option's text ({1, 2} -> "1,2"): the search's defaults are
// tuner::SearchSpaceOptions's, written once.
template <class T>
std::string list_text(const std::vector<T>& values) {
  std::string text;
  for (const T value : values) text += (text.empty() ? "" : ",") + number_text(static_cast<double>(value));
  return text;
}

struct RecommendCommandOptions {
  std::string model;
  std::string nodes = list_text(tuner::SearchSpaceOptions{}.node_counts);
  std::string batches = list_text(tuner::SearchSpaceOptions{}.batches_per_process);
  std::int64_t global_batch = 0;
  std::string format = "text";           // a name in output_formats()
  std::string objective = "throughput";  // a name in tuner::objectives_by_name()
  double epochs = tuner::default_epochs;
  std::int64_t dataset_images = tuner::default_dataset_images;
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
  std::string gpus;            // --gpus: GPU machines only
  std::string precisions;      // --precision LIST: GPU machines only ("": every one the GPU has)
  std::string memory_formats;  // --memory-format LIST: GPU machines only ("": both)
  bool batch_given = false;    // a GPU search defaults to several batches
};

// A GPU --machine: the GPU tuner's search (GPUs per node, batch per GPU, fusion, nodes).
void recommend_for_gpu(const GpuSource& gpu, const RecommendCommandOptions& options) {
  if (options.verify > 0 || options.global_batch > 0 || options.no_smt || options.consider_parameter_server ||
      !options.processes_per_node.empty())
    fail(bad_input(long_names({&option_rows::verify, &option_rows::global_batch, &option_rows::no_smt,
                               &option_rows::consider_parameter_server, &option_rows::processes_per_node}) +
                   " describe CPU nodes; on a GPU machine give " + gpu_node_options()));
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
  run_gpu_recommend(options.model, gpu, request);
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
       [](const RenderInputs& in) {
         return tuner::torchrun_text(in.recommendation.best.prediction, in.rates, in.job);
       }},
  };
  return formats;
}

template <class Table, class Name>
std::vector<std::string> names_of(const Table& table, Name name) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(name(entry));
  return names;
}

void run_recommend(const RecommendCommandOptions& options) {
  if (const auto gpu = gpu_machine(options.source)) return recommend_for_gpu(*gpu, options);
  if (!options.gpus.empty()) fail(bad_input(gpu_only_options_refused(true)));
  if (!options.precisions.empty() || !options.memory_formats.empty()) fail(bad_input(gpu_only_options_refused(false)));
  frontend::RecommendRequest request;
  request.network = options.model;
  tuner::SearchSpaceOptions& space = request.space;
  space.batches_per_process = parse_list<std::int64_t>(option_rows::batch, options.batches);
  space.global_batch = options.global_batch;
  space.node_counts = value_or_fail(model::parse_node_counts(options.nodes));
  space.consider_smt = !options.no_smt;
  space.consider_parameter_server = options.consider_parameter_server;
  space.fusion_megabytes = parse_list<double>(option_rows::fusion_megabytes, options.fusion_megabytes);
  space.fabric = value_or_fail(fabric_from(options.fabric));
  if (!options.processes_per_node.empty())
    space.processes_per_node = parse_list<int>(option_rows::processes_per_node, options.processes_per_node);
  for (const auto& [name, objective] : tuner::objectives_by_name())  // CLI11 checked the name
    if (name == options.objective) request.options.objective = objective;
  request.options.epochs = options.epochs;
  request.options.dataset_images = options.dataset_images;
  request.allocator = options.launch.allocator;
  request.verify = options.verify;
  request.partition = options.launch.partition;
  request.max_minutes = options.max_minutes;
  request.max_minutes_option = long_name(option_rows::max_minutes);
  // Everything the user typed is checked before the first run's calibration starts.
  ok_or_fail(check_launch_options(options.launch));
  const frontend::AnswerSource source(options.source, "", print_progress);
  const auto answer = value_or_fail(frontend::answer_recommend(source, request));
  const tuner::Recommendation& recommendation = answer.recommendation;
  auto job = value_or_fail(job_script_options(options.launch, recommendation.best.prediction.network,
                                              answer.seconds_to_train, answer.job_allocator));
  job.allocator_note = tuner::allocator_summary(*recommendation.allocator);
  job.train_command = options.train_command;
  // The script's --time, capped below the predicted training, is said where a script is written.
  if (options.format == "slurm" && !job.time_note.empty()) print_progress(job.time_note);
  const auto format = std::find_if(output_formats().begin(), output_formats().end(),
                                   [&](const OutputFormat& entry) { return entry.name == options.format; });
  const OutputFormat& chosen = format != output_formats().end() ? *format : output_formats().front();
  const std::string text = chosen.render({recommendation, answer.rates, job, options.explain});
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
      ->check(
          CLI::IsMember(names_of(output_formats(), [](const OutputFormat& entry) { return std::string(entry.name); })))
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
    options.batch_given = command->count(long_name(option_rows::batch)) > 0;
    run_recommend(options);
  });
}

}  // namespace dnntune::cli
