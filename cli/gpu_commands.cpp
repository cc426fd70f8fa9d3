// cli/gpu_commands.cpp — see gpu_commands.hpp.
#include "cli/gpu_commands.hpp"

#include "cli/option_table.hpp"
#include "common/json_file.hpp"
#include "data/builtin_machines.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_report.hpp"
#include "model/scaling.hpp"
#include "tuner/gpu_recommendation.hpp"
#include "tuner/job_script.hpp"

namespace dnntune::cli {

model::GpuEfficiencies gpu_efficiencies() { return value_or_fail(frontend::builtin_gpu_efficiencies()); }

std::optional<GpuSource> gpu_machine(const ModelSourceOptions& source) {
  return value_or_fail(frontend::gpu_source(source));
}

void run_gpu_fit(const std::vector<records::Measurement>& records, const std::string& machine,
                 const std::string& output_path, bool json) {
  if (machine.empty())
    fail(bad_input(long_name(option_rows::backend) + " torch-cuda fits the GPU model: name the GPU with " +
                   long_name(option_rows::machine) + " (" + data::builtin_gpu_machine_names() + " or a profile)"));
  const auto profile = value_or_fail(data::load_machine(machine));
  const auto node = value_or_fail(model::gpu_node(profile));
  const auto calibration = value_or_fail(model::fit_gpu_calibration(records, node, model::gpu_efficiency_priors()));
  const std::string text = model::to_json_text(calibration);
  if (!output_path.empty()) write_output(text, output_path);
  write_output(json ? text : model::gpu_calibration_text(calibration), "");
}

model::GpuConfiguration gpu_configuration_from(const ConfigurationOptions& options) {
  const model::TrainingConfiguration& c = options.configuration;
  if (c.threads_per_process != 1 || c.smt || options.parameter_servers > 0 || c.asynchronous)
    fail(bad_input(long_names({&option_rows::threads, &option_rows::smt, &option_rows::parameter_servers,
                               &option_rows::asynchronous}) +
                   " describe CPU nodes; on a GPU machine give " + gpu_node_options()));
  if (c.processes_per_node != 1)
    fail(bad_input("on a GPU machine one process drives one GPU: give " + long_name(option_rows::gpus) +
                   " N instead of " + long_name(option_rows::processes_per_node)));
  model::GpuConfiguration configuration;
  configuration.gpus_per_node = options.gpus_per_node > 0 ? options.gpus_per_node : 1;
  configuration.batch_per_gpu = c.batch_per_process;
  configuration.nodes = c.nodes;
  configuration.fusion_bytes = options.fusion_megabytes * 1024 * 1024;
  configuration.fabric = value_or_fail(fabric_from(options.fabric));
  return configuration;
}

void apply_gpu_numerics(model::GpuConfiguration& configuration, const std::string& precision,
                        const std::string& memory_format) {
  if (!precision.empty()) configuration.precision = value_or_fail(model::parse_gpu_precision(precision));
  if (!memory_format.empty())
    configuration.memory_format = value_or_fail(model::parse_gpu_memory_format(memory_format));
}

namespace {

// The options of one GPU configuration as frontend's request ("" precision or memory format: the default).
frontend::GpuSetupRequest setup_request(const std::string& network, const ConfigurationOptions& configuration) {
  frontend::GpuSetupRequest request{network, gpu_configuration_from(configuration), std::nullopt, std::nullopt};
  if (!configuration.precision.empty()) request.precision = configuration.precision;
  if (!configuration.memory_format.empty()) request.memory_format = configuration.memory_format;
  return request;
}

}  // namespace

void run_gpu_predict(const std::string& network, const GpuSource& gpu, const ConfigurationOptions& configuration,
                     const OutputOptions& output) {
  const auto prediction = value_or_fail(frontend::answer_gpu_predict(gpu, setup_request(network, configuration)));
  write_output(output.json ? frontend::gpu_prediction_document(prediction).dump(2) + "\n"
                           : model::gpu_prediction_text(prediction),
               output.path);
}

void run_gpu_scale(const std::string& network, const GpuSource& gpu, const ConfigurationOptions& configuration,
                   const std::string& nodes, const OutputOptions& output) {
  const auto node_counts = value_or_fail(model::parse_node_counts(nodes));
  const auto rows = value_or_fail(frontend::answer_gpu_scale(gpu, setup_request(network, configuration), node_counts));
  write_output(output.json ? frontend::gpu_scaling_document(rows).dump(2) + "\n" : model::gpu_scaling_text(rows),
               output.path);
}

void run_gpu_recommend(const std::string& network, const GpuSource& gpu, const GpuRecommendRequest& request) {
  if (request.format == "mpirun")
    fail(bad_input(long_name(option_rows::format) + " mpirun writes CPU launch lines; for a GPU machine use " +
                   long_name(option_rows::format) + " slurm (srun, one task per GPU) or " +
                   long_name(option_rows::format) + " torchrun (one worker per GPU)"));
  ok_or_fail(check_launch_options(request.launch));
  frontend::GpuRecommendRequest asked;
  asked.network = network;
  asked.allocator = request.launch.allocator;
  for (const auto& [name, objective] : tuner::objectives_by_name())  // CLI11 checked the name
    if (name == request.objective) asked.objective = objective;
  asked.epochs = request.epochs;
  asked.dataset_images = request.dataset_images;
  tuner::GpuSearchOptions& search = asked.search;
  if (!request.gpus.empty()) {
    const auto counts = value_or_fail(list_values(option_rows::gpus, request.gpus));
    search.gpus_per_node.assign(counts.begin(), counts.end());
  }
  if (!request.batches.empty()) {
    const auto batches = value_or_fail(list_values(option_rows::batch, request.batches));
    search.batches_per_gpu.assign(batches.begin(), batches.end());
  }
  const auto fusion = value_or_fail(list_values(option_rows::fusion_megabytes, request.fusion_megabytes));
  search.fusion_megabytes.assign(fusion.begin(), fusion.end());
  search.node_counts = value_or_fail(model::parse_node_counts(request.nodes));
  search.fabric = request.fabric;
  if (!request.precisions.empty())
    asked.precisions = value_or_fail(list_names(option_rows::precision, request.precisions));
  if (!request.memory_formats.empty())
    asked.memory_formats = value_or_fail(list_names(option_rows::memory_format, request.memory_formats));
  const auto answer = value_or_fail(frontend::answer_gpu_recommend(gpu, asked));
  if (request.format == "slurm" || request.format == "torchrun") {
    const model::GpuPrediction& best = answer.recommendation.best;
    auto job = value_or_fail(job_script_options(request.launch, best.network, answer.seconds_to_train, "default"));
    job.train_command = request.train_command;
    if (request.format == "slurm" && !job.time_note.empty()) print_progress(job.time_note);
    return write_output(
        request.format == "slurm" ? tuner::gpu_slurm_script(best, job) : tuner::gpu_torchrun_text(best, job),
        request.output_path);
  }
  write_output(request.format == "json" ? frontend::gpu_recommendation_document(answer, request.explain).dump(2) + "\n"
                                        : tuner::gpu_recommendation_text(answer.recommendation, request.explain),
               request.output_path);
}

}  // namespace dnntune::cli
