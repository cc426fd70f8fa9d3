// train/trainer.cpp — the training step loop and its timing (see trainer.hpp). Each rank
// trains, then sends rank 0 its samples, binding and weights checksum as one JSON text; rank 0
// assembles the report.
//
// Phases of a step, each ended by a device synchronisation on a GPU: forward (the loss), backward
// (gradient hooks copy into the all-reduce buckets as they run), exposed communication (what is
// left of the all-reduce, or the push and pull of parameter servers), optimizer update.
#include "train/trainer.hpp"

#include <omp.h>
#include <sys/resource.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/digest.hpp"
#include "train/comm/mpi_session.hpp"
#include "probe/topology.hpp"
#include "train/gradient_allreduce.hpp"
#include "train/module_timer.hpp"
#include "train/parameter_server.hpp"
#include "train/optimizer.hpp"
#include "train/precision.hpp"
#include "train/python_runner.hpp"
#include "train/torch_network.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::train {

using nlohmann::json;

namespace {

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string text;
  for (const int cpu : cpus) text += (text.empty() ? "" : ",") + std::to_string(cpu);
  return text;
}

// Where this process runs and how many threads it may use, or why it may not.
struct RankSetting {
  records::MachineProfile machine;
  int threads = 1;
  std::optional<Error> problem;
  std::vector<std::string> warnings;
};

RankSetting examine_this_rank(const TrainOptions& options, int rank, int ranks) {
  RankSetting setting;
  auto machine = probe::describe_this_machine();
  if (!machine) {
    setting.problem = machine.error();
    return setting;
  }
  setting.machine = std::move(*machine);
  const records::Binding& binding = *setting.machine.binding;
  const int allowed_cpus = static_cast<int>(binding.allowed_pus.size());
  setting.threads = options.threads > 0 ? options.threads : std::max(1, binding.allowed_cores);
  const std::string who = ranks > 1 ? "rank " + std::to_string(rank) + ": " : "";
  if (setting.threads > allowed_cpus) {
    std::string message = who + "--threads " + std::to_string(setting.threads) + " but this process may run on only " +
                          std::to_string(allowed_cpus) + (allowed_cpus == 1 ? " CPU (" : " CPUs (") +
                          cpu_list_text(binding.allowed_pus) + ")";
    if (binding.launcher == "openmpi")
      message +=
          ": Open MPI binds each rank to one core by default; give each rank its cores with "
          "`mpirun --map-by ppr:N:socket:PE=" +
          std::to_string(setting.threads) +
          " --bind-to core`, or let `dnntune train --launch --ppn N` compose the line";
    else if (binding.launcher == "slurm")
      message += ": ask for them with `srun --cpus-per-task=" + std::to_string(setting.threads) + "`";
    setting.problem = bad_input(message);
  } else if (setting.threads > binding.allowed_cores) {
    setting.warnings.push_back(who + std::to_string(setting.threads) + " threads on " +
                               std::to_string(binding.allowed_cores) + " core" +
                               (binding.allowed_cores == 1 ? "" : "s") + " (CPUs " +
                               cpu_list_text(binding.allowed_pus) + "): threads share cores through SMT siblings");
  }
  if (!setting.problem && options.parameter_servers >= ranks)
    setting.problem = bad_input("--ps-servers " + std::to_string(options.parameter_servers) +
                                " needs more ranks than servers, and the job has " + std::to_string(ranks) +
                                " (launch it with more processes, e.g. `mpirun -np " +
                                std::to_string(options.parameter_servers + 2) + " dnntune train ...`)");
  if (!setting.problem && options.device == "cuda" && options.runner == records::kCppTrainer &&
      !torch::cuda::is_available())
    setting.problem = bad_input("--device cuda, but this libtorch sees no CUDA GPU");
  return setting;
}

std::string checksum_of(const std::vector<torch::Tensor>& parameters) {
  Digest digest;
  for (const auto& parameter : parameters) {
    const torch::Tensor values = parameter.detach().to(torch::kCPU).contiguous();
    digest.add(static_cast<const unsigned char*>(values.data_ptr()), static_cast<std::size_t>(values.nbytes()));
  }
  return digest.hex();
}

// All parameters as one flat float vector on the CPU, and back.
std::vector<float> flatten(const std::vector<torch::Tensor>& tensors) {
  std::vector<float> flat;
  for (const auto& tensor : tensors) {
    const torch::Tensor values = tensor.detach().to(torch::kCPU).contiguous();
    flat.insert(flat.end(), values.data_ptr<float>(), values.data_ptr<float>() + values.numel());
  }
  return flat;
}

void unflatten_into(std::vector<torch::Tensor>& tensors, const float* flat) {
  torch::NoGradGuard no_grad;
  for (auto& tensor : tensors) {
    tensor.copy_(torch::from_blob(const_cast<float*>(flat), tensor.sizes(), torch::kFloat));
    flat += tensor.numel();
  }
}

// Minor page faults of this process so far: fresh pages the allocator handed out and the kernel
// faulted in on first touch (microseconds each on a VM; see probe/allocators.hpp).
double page_faults_so_far() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_minflt);
}

struct StepSamples {
  std::vector<double> iteration, forward, backward, exposed_communication, optimizer, communication, losses;
  std::vector<double> forward_page_faults, backward_page_faults;
  int skipped_steps = 0;               // fp16: timed steps the loss scaler skipped
  std::optional<ModuleTimer> modules;  // --module-times
};

// Whether rank 0 says to stop; every rank gets its answer (null: one process, its own).
using StopAgreement = std::function<bool(bool rank0_would_stop)>;

// Trains this rank for warmup + iterations steps, fewer timed ones when options.time_limit_seconds
// says so. `allreduce` is null for one process and for parameter-server workers; `server` is
// null unless parameter servers are used.
StepSamples run_steps(const TrainOptions& options, TorchNetwork& network, const torch::Device& device,
                      GradientAllreduce* allreduce, ParameterServer* server, std::uint64_t data_seed,
                      const StopAgreement& agree) {
  std::vector<torch::Tensor> parameters = network.parameters();
  const workloads::Shape image = network.network().input_shape();
  torch::manual_seed(data_seed);
  const torch::Tensor images = torch::randn({options.batch, image.channels, image.height, image.width})
                                   .to(device)
                                   .contiguous(options.memory_format == "channels_last" ? at::MemoryFormat::ChannelsLast
                                                                                        : at::MemoryFormat::Contiguous);
  const torch::Tensor labels = torch::randint(0, network.classes(), {options.batch}, torch::kLong).to(device);

  // fp16 scales the loss (check_train_options keeps it from parameter servers: they step themselves).
  std::optional<DynamicLossScaler> loss_scaler;
  if (options.precision == "fp16") loss_scaler.emplace();
  std::optional<SgdWithMomentum> optimizer;
  if (!server) optimizer.emplace(parameters, options.learning_rate, options.momentum, device.is_cuda());
  if (allreduce) {
    // Gradient i of the all-reduce is parameter n-1-i: backward produces them in reverse order.
    for (std::size_t i = 0; i < parameters.size(); ++i)
      parameters[parameters.size() - 1 - i].register_hook([allreduce, i](torch::Tensor gradient) {
        torch::from_blob(allreduce->gradient_slot(i), gradient.sizes(), torch::kFloat).copy_(gradient);
        allreduce->gradient_ready(i);
      });
  }
  const bool on_gpu = device.is_cuda();
  const auto synchronized_now = [on_gpu] {
    if (on_gpu) torch::cuda::synchronize();
    return probe::now_seconds();
  };
  std::vector<float> flat_gradients, flat_weights;

  StepSamples samples;
  if (options.module_times) samples.modules.emplace(network.network().layers.size());
  // The step the layers are timed in (the last warm-up step: check_train_options asks for one),
  // and its passes, which scale the layers' times to the timed steps' below.
  const int timed_layers_step = options.warmup - 1;
  double layers_step_forward = 0, layers_step_backward = 0;
  const double began = synchronized_now();
  for (int step = 0; step < options.warmup + options.iterations; ++step) {
    const bool time_layers = samples.modules && step == timed_layers_step;
    if (time_layers) {
      network.set_module_timer(&*samples.modules);
      samples.modules->begin_step();
    }
    const double start = synchronized_now();
    const double faults_at_start = page_faults_so_far();
    // Gradients are not accumulated across steps: each step's backward makes them anew.
    for (auto& parameter : parameters) parameter.mutable_grad() = torch::Tensor();
    torch::Tensor loss;
    {
      const AutocastScope autocast(options.precision);  // the forward and the loss, as users write it
      loss = network.forward(images, labels);
    }
    const double forward_done = synchronized_now();
    const double faults_after_forward = page_faults_so_far();
    if (loss_scaler)
      loss_scaler->scale(loss).backward();
    else
      loss.backward();
    const double backward_done = synchronized_now();
    const double faults_after_backward = page_faults_so_far();
    if (time_layers) {
      samples.modules->end_step(backward_done);
      network.set_module_timer(nullptr);
      layers_step_forward = forward_done - start;
      layers_step_backward = backward_done - forward_done;
    }
    double communication = 0;
    if (allreduce) {
      allreduce->wait_until_reduced();
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        torch::Tensor& parameter = parameters[parameters.size() - 1 - i];
        parameter.mutable_grad() =
            torch::from_blob(allreduce->gradient_slot(i), parameter.sizes(), torch::kFloat).to(device);
      }
      communication = allreduce->last_step_communication_seconds();
    } else if (server) {
      std::vector<torch::Tensor> gradients;
      for (const auto& parameter : parameters) gradients.push_back(parameter.grad());
      flat_gradients = flatten(gradients);
      flat_weights.resize(flat_gradients.size());
      server->push_and_pull(flat_gradients.data(), flat_weights.data());
    }
    const double communication_done = synchronized_now();
    if (server) {
      unflatten_into(parameters, flat_weights.data());
      communication = communication_done - backward_done;
    } else if (loss_scaler) {
      // GradScaler.step and update: a step whose gradients overflowed is skipped (its time counts).
      const bool all_finite = loss_scaler->unscale(parameters);
      if (all_finite) optimizer->step();
      loss_scaler->update(all_finite);
      if (!all_finite && step >= options.warmup) ++samples.skipped_steps;
    } else {
      optimizer->step();
    }
    const double done = synchronized_now();
    samples.losses.push_back(loss.item<double>());
    // The warm-up steps are never timed, not even when a time limit has passed: the first step of
    // a one-thread cliff setting runs markedly slower than the next (docs/results.md).
    if (step < options.warmup) continue;
    samples.iteration.push_back(done - start);
    samples.forward.push_back(forward_done - start);
    samples.backward.push_back(backward_done - forward_done);
    samples.exposed_communication.push_back(communication_done - backward_done);
    samples.optimizer.push_back(done - communication_done);
    samples.communication.push_back(communication);
    samples.forward_page_faults.push_back(faults_after_forward - faults_at_start);
    samples.backward_page_faults.push_back(faults_after_backward - faults_after_forward);
    if (options.time_limit_seconds > 0 && step + 1 < options.warmup + options.iterations) {
      // Another step as long as this one would end past the limit: stop here, all ranks alike.
      const bool would_stop = done - began + (done - start) > options.time_limit_seconds;
      if (agree ? agree(would_stop) : would_stop) break;
    }
  }
  if (samples.modules)
    samples.modules->scale(probe::summarize(samples.forward).median_seconds / layers_step_forward,
                           probe::summarize(samples.backward).median_seconds / layers_step_backward);
  return samples;
}

json samples_json(const StepSamples& samples) {
  json out = {{"iteration", samples.iteration},
              {"forward", samples.forward},
              {"backward", samples.backward},
              {"exposed_communication", samples.exposed_communication},
              {"optimizer", samples.optimizer},
              {"communication", samples.communication},
              {"forward_page_faults", samples.forward_page_faults},
              {"backward_page_faults", samples.backward_page_faults}};
  if (samples.modules) {
    out["module_forward"] = samples.modules->forward_samples();
    out["module_backward"] = samples.modules->backward_samples();
    out["module_forward_sums"] = samples.modules->forward_sums();
    out["module_backward_sums"] = samples.modules->backward_sums();
  }
  return out;
}

std::vector<double> pooled(const std::vector<json>& ranks, const char* phase) {
  std::vector<double> all;
  for (const json& rank : ranks)
    if (rank.contains("samples"))
      for (const double value : rank["samples"][phase]) all.push_back(value);
  return all;
}

// --module-times: each layer's forward and backward pooled over workers, and the per-step sums.
void add_module_times(const std::vector<json>& ranks, const workloads::Network& network, TrainingReport& report) {
  const auto& layers = network.layers;
  std::vector<std::vector<double>> forward(layers.size()), backward(layers.size());
  std::vector<double> forward_sums, backward_sums;
  for (const json& rank : ranks) {
    if (!rank.contains("samples") || !rank["samples"].contains("module_forward")) continue;
    for (const double value : rank["samples"]["module_forward_sums"]) forward_sums.push_back(value);
    for (const double value : rank["samples"]["module_backward_sums"]) backward_sums.push_back(value);
    const json& samples = rank["samples"];
    for (std::size_t layer = 0; layer < layers.size(); ++layer) {
      for (const double value : samples["module_forward"][layer]) forward[layer].push_back(value);
      for (const double value : samples["module_backward"][layer]) backward[layer].push_back(value);
    }
  }
  if (forward_sums.empty()) return;  // no rank timed its modules (a GPU rank: see train())
  report.modules_forward = probe::summarize(forward_sums);
  report.modules_backward = probe::summarize(backward_sums);
  for (std::size_t layer = 0; layer < layers.size(); ++layer) {
    if (forward[layer].empty()) continue;  // the input: no op of its own
    ModuleTime module;
    module.name = layers[layer].name;
    module.descriptor = layers[layer].descriptor;
    module.forward = probe::summarize(forward[layer]);
    if (!backward[layer].empty()) module.backward = probe::summarize(backward[layer]);
    report.modules.push_back(std::move(module));
  }
}

// Rank 0: the job's report from every rank's JSON.
TrainingReport assemble_report(const std::vector<json>& ranks, TrainingReport report, bool asynchronous) {
  std::vector<double> job_steps;  // per step, the slowest worker
  double asynchronous_images_per_second = 0;
  for (const json& rank : ranks) {
    RankReport entry;
    entry.rank = rank["rank"];
    entry.node = rank["node"];
    entry.role = rank["role"];
    entry.cpus = rank["cpus"].get<std::vector<int>>();
    entry.allowed_cores = rank["allowed_cores"];
    entry.openmp_threads = rank["openmp_threads"];
    entry.torch_threads = rank["torch_threads"];
    entry.weights_checksum = rank["weights_checksum"];
    entry.warnings = rank["warnings"].get<std::vector<std::string>>();
    report.smt = report.smt || report.threads > entry.allowed_cores;
    report.ranks.push_back(entry);
    if (rank.contains("staleness_counts")) {
      const auto counts = rank["staleness_counts"].get<std::vector<std::int64_t>>();
      if (report.staleness_counts.size() < counts.size()) report.staleness_counts.resize(counts.size(), 0);
      for (std::size_t k = 0; k < counts.size(); ++k) report.staleness_counts[k] += counts[k];
    }
    if (!rank.contains("samples")) continue;
    const auto steps = rank["samples"]["iteration"].get<std::vector<double>>();
    if (job_steps.size() < steps.size()) job_steps.resize(steps.size(), 0);
    for (std::size_t s = 0; s < steps.size(); ++s) job_steps[s] = std::max(job_steps[s], steps[s]);
    asynchronous_images_per_second += static_cast<double>(report.batch) / probe::summarize(steps).median_seconds;
  }
  // Asynchronous workers never wait for each other: each trains at its own pace.
  report.iteration = probe::summarize(asynchronous ? pooled(ranks, "iteration") : job_steps);
  report.forward = probe::summarize(pooled(ranks, "forward"));
  report.backward = probe::summarize(pooled(ranks, "backward"));
  report.exposed_communication = probe::summarize(pooled(ranks, "exposed_communication"));
  report.optimizer = probe::summarize(pooled(ranks, "optimizer"));
  report.communication = probe::summarize(pooled(ranks, "communication"));
  // Counts, not seconds: the summary's median is the median count.
  report.forward_page_faults = probe::summarize(pooled(ranks, "forward_page_faults")).median_seconds;
  report.backward_page_faults = probe::summarize(pooled(ranks, "backward_page_faults")).median_seconds;
  report.images_per_second = asynchronous
                                 ? asynchronous_images_per_second
                                 : static_cast<double>(report.workers * report.batch) / report.iteration.median_seconds;
  report.losses = ranks.front()["losses"].get<std::vector<double>>();
  return report;
}

// The first step (from 1, warm-up included) whose loss on some rank is not finite; JSON writes NaN
// and infinity as null, so those are the losses that are not numbers.
std::optional<std::size_t> first_diverged_step(const std::vector<json>& ranks) {
  std::optional<std::size_t> first;
  for (const json& rank : ranks) {
    if (!rank.contains("losses")) continue;
    const json& losses = rank["losses"];
    for (std::size_t step = 0; step < losses.size(); ++step)
      if (!losses[step].is_number()) {
        if (!first || step + 1 < *first) first = step + 1;
        break;
      }
  }
  return first;
}

// Every rank's JSON gathered to rank 0, which makes the job's report of them (`report` comes with
// what the rank knows: the network's parameters, device and backend); the other ranks get an
// empty outcome.
Expected<TrainingOutcome> gather_report(const TrainOptions& options, const workloads::Network& workload,
                                        const comm::MpiSession* session, const RankSetting& setting, const json& mine,
                                        TrainingReport report) {
  const std::vector<std::string> texts =
      session ? session->gather_to_rank0(mine.dump()) : std::vector<std::string>{mine.dump()};
  TrainingOutcome outcome;
  outcome.is_rank0 = !session || session->rank() == 0;
  if (!outcome.is_rank0) return outcome;

  const int ranks = session ? session->size() : 1;
  report.network = workload.name;
  report.batch = options.batch;
  report.processes = ranks;
  report.workers = ranks - options.parameter_servers;
  report.servers = options.parameter_servers;
  report.nodes = session ? session->node_count() : 1;
  report.threads = setting.threads;
  report.strategy = strategy_name(ranks, options.parameter_servers, options.asynchronous);
  report.mpi_version = session ? session->library_version() : "";
  report.machine_fingerprint = records::fingerprint(setting.machine);
  report.iterations = options.iterations;
  report.requested_iterations = options.iterations;
  report.warmup = options.warmup;
  std::vector<json> parsed;
  for (const std::string& text : texts) parsed.push_back(json::parse(text));
  // Rank 0 is a worker (servers are the last ranks); a time limit stopped every rank at its step.
  if (parsed.front().contains("samples"))
    report.iterations = static_cast<int>(parsed.front()["samples"]["iteration"].size());
  report.skipped_steps = parsed.front().value("skipped_steps", 0);
  if (auto step = first_diverged_step(parsed)) {
    std::ostringstream rate;
    rate << options.learning_rate;
    return bad_input("the loss became NaN (or infinite) at step " + std::to_string(*step) + " with --lr " + rate.str() +
                     ": lower --lr");
  }
  outcome.report = assemble_report(parsed, std::move(report), options.asynchronous);
  if (options.module_times) add_module_times(parsed, workload, outcome.report);
  return outcome;
}

// This rank trained by PyTorch from Python (--runner python): rank 0's free port is every rank's
// rendezvous, each runs the script as its child (bound as itself), and the job's report is made
// as the C++ trainer's is.
Expected<TrainingOutcome> train_in_python(
    const TrainOptions& options, const workloads::Network& workload, const comm::MpiSession* session,
    const RankSetting& setting,
    const std::function<std::optional<Expected<TrainingOutcome>>(const std::optional<Error>&)>& first_problem) {
  const int rank = session ? session->rank() : 0;
  const int ranks = session ? session->size() : 1;
  std::string rendezvous;
  if (ranks > 1) {
    std::optional<Error> problem;
    if (rank == 0) {
      if (auto address = python_rendezvous_address(session->node_count() == 1))
        rendezvous = *address;
      else
        problem = address.error();
    }
    if (auto agreed = first_problem(problem)) return std::move(*agreed);
    rendezvous = session->broadcast_from_rank0(rendezvous);
  }
  auto trained = train_python_rank(options, workload,
                                   {rank, ranks, session ? session->local_rank() : 0, setting.threads, rendezvous});
  if (auto problem = first_problem(trained ? std::nullopt : std::optional<Error>(trained.error())))
    return std::move(*problem);
  const json mine = {{"rank", rank},
                     {"node", session ? session->node_index() : 0},
                     {"role", "worker"},
                     {"cpus", trained->at("cpus")},
                     {"allowed_cores", setting.machine.binding->allowed_cores},
                     {"openmp_threads", trained->at("torch_threads")},
                     {"torch_threads", trained->at("torch_threads")},
                     {"warnings", setting.warnings},
                     {"samples", trained->at("samples")},
                     {"losses", trained->at("losses")},
                     {"skipped_steps", trained->at("skipped_steps")},
                     {"weights_checksum", ""}};
  TrainingReport report;
  report.parameters = trained->at("parameters").get<std::int64_t>();
  report.device = trained->at("device").get<std::string>();
  // The same kernels' backend as the C++ trainer's: a calibration pools both trainers' anchors.
  report.backend = report.device == "cuda" ? "torch-cuda" : "torch";
  report.backend_version = trained->at("versions").get<std::string>();
  report.precision = trained->at("precision").get<std::string>();
  report.memory_format = trained->at("memory_format").get<std::string>();
  return gather_report(options, workload, session, setting, mine, std::move(report));
}

}  // namespace

Expected<TrainingOutcome> train_with_libtorch(const TrainOptions& options) {
  const auto valid = check_train_options(options);
  auto workload = valid ? workloads::load_network(options.model) : Expected<workloads::Network>(valid.error());
  if (!workload && !comm::started_by_mpi_launcher()) return workload.error();

  std::unique_ptr<comm::MpiSession> session;
  if (comm::started_by_mpi_launcher()) {
    auto started = comm::MpiSession::start();
    if (!started) return started.error();
    session = std::move(*started);
  }
  const int rank = session ? session->rank() : 0;
  const int ranks = session ? session->size() : 1;
  // A problem of any rank is agreed on by all; rank 0 returns it (the command reports it) and the
  // others leave quietly, exit 0. Had they exited non-zero first, mpirun would have ended the job,
  // rank 0 with it, before its message was written or forwarded (seen under load).
  const auto first_problem = [&](const std::optional<Error>& mine) -> std::optional<Expected<TrainingOutcome>> {
    const std::optional<Error> problem = session ? session->first_error_of_any_rank(mine) : mine;
    if (!problem) return std::nullopt;
    if (rank == 0) return Expected<TrainingOutcome>(*problem);
    TrainingOutcome quiet;
    quiet.is_rank0 = false;
    return Expected<TrainingOutcome>(std::move(quiet));
  };
  if (auto problem = first_problem(workload ? std::nullopt : std::optional<Error>(workload.error())))
    return std::move(*problem);

  RankSetting setting = examine_this_rank(options, rank, ranks);
  if (auto problem = first_problem(setting.problem)) return std::move(*problem);
  at::set_num_threads(setting.threads);
  at::set_num_interop_threads(1);
  if (options.runner == records::kPythonTrainer)
    return train_in_python(options, *workload, session.get(), setting, first_problem);

  const bool use_cuda = options.device == "cuda" || (options.device == "auto" && torch::cuda::is_available());
  const torch::Device device =
      use_cuda ? torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>((session ? session->local_rank() : 0) %
                                                                             torch::cuda::device_count()))
               : torch::Device(torch::kCPU);

  // On a GPU the ops are asynchronous and the hooks fire when autograd queues a kernel, not when
  // it ends: layer times would be wrong, so a GPU job (an anchor on a CUDA machine) times none.
  TrainOptions run_options = options;
  run_options.precision =
      resolve_precision(options.precision, use_cuda, use_cuda ? cuda_compute_capability_major(device.index()) : 0);
  std::optional<Error> cpu_precision;  // --device auto without a GPU (every rank asks: a collective)
  if (!use_cuda && run_options.precision != "fp32")
    cpu_precision = bad_input("--precision " + run_options.precision +
                              " runs on a GPU, and this libtorch sees none: the CPU runs fp32");
  if (auto problem = first_problem(cpu_precision)) return std::move(*problem);
  if (use_cuda) apply_cuda_math_settings(run_options.precision);
  if (use_cuda && run_options.module_times) {
    run_options.module_times = false;
    setting.warnings.push_back("--module-times: the layers are not timed on a GPU (asynchronous kernels)");
  }
  torch::manual_seed(options.seed);
  auto built = TorchNetwork::build(*workload);
  if (auto problem = first_problem(built ? std::nullopt : std::optional<Error>(built.error())))
    return std::move(*problem);
  TorchNetwork& network = *built;
  std::vector<torch::Tensor> parameters = network.parameters();
  if (options.memory_format == "channels_last") to_channels_last(parameters);
  std::vector<float> initial_weights = flatten(parameters);
  if (session) {
    session->broadcast_from_rank0(initial_weights.data(), initial_weights.size());
    unflatten_into(parameters, initial_weights.data());
  }

  const int servers = options.parameter_servers;
  const int workers = ranks - servers;
  const bool is_server = servers > 0 && rank >= workers;
  json mine = {{"rank", rank},
               {"node", session ? session->node_index() : 0},
               {"role", is_server ? "server" : "worker"},
               {"cpus", setting.machine.binding->allowed_pus},
               {"allowed_cores", setting.machine.binding->allowed_cores},
               {"openmp_threads", omp_get_max_threads()},
               {"torch_threads", at::get_num_threads()},
               {"warnings", setting.warnings}};

  TrainingReport report;
  try {
    network.module().to(device);
    std::unique_ptr<ParameterServer> parameter_server;
    std::unique_ptr<GradientAllreduce> allreduce;
    if (servers > 0) {
      parameter_server =
          std::make_unique<ParameterServer>(ParameterServerLayout{workers, servers, initial_weights.size()},
                                            options.asynchronous, SgdSettings{options.learning_rate, options.momentum});
    } else if (ranks > 1) {
      std::vector<std::size_t> elements;
      for (auto it = parameters.rbegin(); it != parameters.rend(); ++it)
        elements.push_back(static_cast<std::size_t>(it->numel()));
      allreduce = std::make_unique<GradientAllreduce>(elements,
                                                      static_cast<std::size_t>(options.bucket_megabytes * 1024 * 1024));
      report.buckets = allreduce->bucket_count();
      report.largest_bucket_bytes = static_cast<std::int64_t>(allreduce->largest_bucket_bytes());
    }
    if (!is_server) std::vector<float>().swap(initial_weights);  // only servers start from it
    if (is_server) {
      const ServerStatistics statistics =
          parameter_server->serve(rank - workers, initial_weights.data(), options.warmup + options.iterations);
      mine["staleness_counts"] = statistics.staleness_counts;
      mine["weights_checksum"] = "";
    } else {
      // Rank 0's clock decides when a time limit ends the timed steps: ranks that stopped apart
      // would leave the others in an all-reduce (the communication thread idles between steps).
      StopAgreement agree;
      if (session && ranks > 1 && options.time_limit_seconds > 0)
        agree = [&session](bool rank0_would_stop) {
          return session->broadcast_from_rank0(rank0_would_stop ? "stop" : "go") == "stop";
        };
      const StepSamples samples = run_steps(run_options, network, device, allreduce.get(), parameter_server.get(),
                                            options.seed + 1000003ull * static_cast<std::uint64_t>(rank + 1), agree);
      mine["samples"] = samples_json(samples);
      mine["losses"] = samples.losses;
      mine["skipped_steps"] = samples.skipped_steps;
      mine["weights_checksum"] = checksum_of(parameters);
    }
  } catch (const c10::Error& error) {
    const Error problem = failure((ranks > 1 ? "rank " + std::to_string(rank) + ": " : std::string()) +
                                  "training failed: " + error.what_without_backtrace());
    if (!session || ranks == 1) return problem;
    // The other ranks wait in a collective that this one will never join: end the whole job.
    std::cerr << "dnntune: error: " << problem.message << std::endl;
    session->abort_job(1);
  }

  report.parameters = network.parameter_count();
  report.device = use_cuda ? "cuda" : "cpu";
  report.backend = use_cuda ? "torch-cuda" : "torch";
  report.backend_version = std::string("libtorch ") + TORCH_VERSION;
  report.precision = run_options.precision;
  report.memory_format = options.memory_format;
  return gather_report(options, *workload, session.get(), setting, mine, std::move(report));
}

}  // namespace dnntune::train
