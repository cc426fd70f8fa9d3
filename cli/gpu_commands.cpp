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

model::GpuEfficiencies gpu_efficiencies() {
  return value_or_fail(model::reference_gpu_efficiencies(data::builtin_reference_calibration("torch-cuda")));
}

std::optional<GpuSource> gpu_machine(const ModelSourceOptions& source) {
  if (source.machine.empty()) return std::nullopt;
  // A machine that does not load is the CPU path's to report, in its order (the calibration first).
  const auto loaded = data::load_machine(source.machine);
  if (!loaded || loaded->kind != records::MachineKind::gpu) return std::nullopt;
  const records::MachineProfile& machine = *loaded;
  if (!source.topology_path.empty())
    fail(bad_input("--topology describes a CPU node; " + machine.name + " is a GPU"));
  GpuSource gpu{value_or_fail(model::gpu_node(machine)), {}};
  gpu.efficiencies = source.calibration_path.empty()
                         ? gpu_efficiencies()
                         : value_or_fail(model::read_gpu_calibration(source.calibration_path)).efficiencies;
  return gpu;
}

void run_gpu_fit(const std::vector<records::Measurement>& records, const std::string& machine,
                 const std::string& output_path, bool json) {
  if (machine.empty())
    fail(bad_input("--backend torch-cuda fits the GPU model: name the GPU with --machine (" +
                   data::builtin_gpu_machine_names() + " or a profile)"));
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
    fail(bad_input("--threads, --smt, --ps and --async describe CPU nodes; on a GPU machine give --gpus, --batch, "
                   "--nodes and --fusion-mb"));
  if (c.processes_per_node != 1)
    fail(bad_input("on a GPU machine one process drives one GPU: give --gpus N instead of --ppn"));
  model::GpuConfiguration configuration;
  configuration.gpus_per_node = options.gpus_per_node > 0 ? options.gpus_per_node : 1;
  configuration.batch_per_gpu = c.batch_per_process;
  configuration.nodes = c.nodes;
  configuration.fusion_bytes = options.fusion_megabytes * 1024 * 1024;
  configuration.fabric = value_or_fail(fabric_from(options.fabric));
  apply_gpu_numerics(configuration, options.precision, options.memory_format);
  return configuration;
}

void apply_gpu_numerics(model::GpuConfiguration& configuration, const std::string& precision,
                        const std::string& memory_format) {
  if (!precision.empty()) configuration.precision = value_or_fail(model::parse_gpu_precision(precision));
  if (!memory_format.empty()) configuration.memory_format = value_or_fail(model::parse_gpu_memory_format(memory_format));
}

void run_gpu_predict(const workloads::Network& network, const GpuSource& gpu,
                     const ConfigurationOptions& configuration, const OutputOptions& output) {
  const auto prediction =
      value_or_fail(model::predict_gpu(network, gpu.node, gpu.efficiencies, gpu_configuration_from(configuration)));
  if (!output.json) return write_output(model::gpu_prediction_text(prediction), output.path);
  auto document = schema_head("dnntune.gpu-prediction", 1);
  document.update(model::gpu_prediction_json(prediction));
  write_output(document.dump(2) + "\n", output.path);
}

void run_gpu_scale(const workloads::Network& network, const GpuSource& gpu,
                   const ConfigurationOptions& configuration, const std::string& nodes, const OutputOptions& output) {
  const auto node_counts = value_or_fail(model::parse_node_counts(nodes));
  const auto rows = value_or_fail(model::predict_gpu_scaling(network, gpu.node, gpu.efficiencies,
                                                             gpu_configuration_from(configuration), node_counts));
  if (!output.json) return write_output(model::gpu_scaling_text(rows), output.path);
  auto document = schema_head("dnntune.gpu-scaling", 1);
  document["rows"] = model::gpu_scaling_json(rows);
  write_output(document.dump(2) + "\n", output.path);
}

void run_gpu_recommend(const workloads::Network& network, const GpuSource& gpu,
                       const GpuRecommendRequest& request) {
  if (request.format == "mpirun")
    fail(bad_input("--format mpirun writes CPU launch lines; for a GPU machine use --format slurm (srun, one task per "
                   "GPU) or --format torchrun (one worker per GPU)"));
  if (!request.launch.allocator.empty())
    fail(bad_input("--allocator is chosen for CPU nodes; a GPU machine's job script leaves the allocator as it is"));
  ok_or_fail(check_launch_options(request.launch));
  if (request.objective == "time-to-train")
    fail(bad_input("--objective time-to-train is not modelled for GPU machines: use throughput or images-per-node"));
  tuner::GpuSearchOptions search;
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
    for (const std::string& item : value_or_fail(list_names(option_rows::precision, request.precisions))) {
      const auto precision = value_or_fail(model::parse_gpu_precision(item));
      ok_or_fail(model::check_gpu_precision(gpu.node, precision));
      search.precisions.push_back(precision);
    }
  if (!request.memory_formats.empty())
    for (const std::string& item : value_or_fail(list_names(option_rows::memory_format, request.memory_formats)))
      search.memory_formats.push_back(value_or_fail(model::parse_gpu_memory_format(item)));
  search.objective = request.objective == "images-per-node"
                         ? tuner::GpuObjective::images_per_node
                         : tuner::GpuObjective::throughput;
  const auto recommendation = value_or_fail(tuner::recommend_gpu(network, gpu.node, gpu.efficiencies, search));
  if (request.format == "slurm" || request.format == "torchrun") {
    const model::GpuPrediction& best = recommendation.best;
    auto job = value_or_fail(job_script_options(
        request.launch, network.name,
        request.epochs * static_cast<double>(request.dataset_images) / best.images_per_second, "default"));
    job.train_command = request.train_command;
    return write_output(request.format == "slurm" ? tuner::gpu_slurm_script(best, job) : tuner::gpu_torchrun_text(best, job),
                        request.output_path);
  }
  write_output(request.format == "json" ? tuner::gpu_recommendation_json(recommendation, request.explain).dump(2) + "\n"
                                        : tuner::gpu_recommendation_text(recommendation, request.explain),
               request.output_path);
}

}  // namespace dnntune::cli
