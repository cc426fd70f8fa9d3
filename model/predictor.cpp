// model/predictor.cpp — see predictor.hpp.
#include "model/predictor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "common/statistics.hpp"
#include "model/anchors.hpp"
#include "model/context_correction.hpp"
#include "model/layer_class.hpp"
#include "model/layer_time.hpp"
#include "model/plausibility.hpp"
#include "model/report.hpp"
#include "model/stragglers.hpp"
#include "workloads/costs.hpp"

namespace dnntune::model {

struct Predictor::IterationTotals {
  IterationTerms terms;
  double iteration_seconds = 0;
  double images_per_second = 0;
  double layer_seconds = 0;
  double exactly_measured_seconds = 0;
  double measured_seconds = 0;           // exactly or scaled from another setting
  double measurement_variance = 0;       // seconds^2: noise of the medians used
  double context_corrected_seconds = 0;  // layer passes under a class's context ratio
  double context_spread_seconds = 0;     // their seconds x the ratio's log spread
};

// What one process computes in an iteration: every term but communication. It depends only on
// the network, the batch and the execution setting, not on nodes, fusion or the scheme, so a
// scan over those reuses it (Predictor::ComputeMemo).
struct Predictor::ComputePart {
  IterationTotals totals;                                  // everything but the iteration and images/s
  std::vector<std::pair<double, double>> backward_layers;  // (backward seconds, gradient bytes) per layer
  double gradient_bytes = 0;
};

// The workload's costs at one batch, each layer's and the network's: they depend on neither the
// setting nor the parameters, and every compute part of a search (each setting, each bootstrap
// replicate) needs them, so they are computed once per network and batch (their shape inference
// was a fifth of a spec answer's time).
struct Predictor::WorkloadCosts {
  std::vector<workloads::LayerCost> layers;       // in the network's order
  std::optional<workloads::NetworkCost> network;  // absent where network_cost refuses the batch
};

struct Predictor::ComputeMemo {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const WorkloadCosts>> workloads;  // by workload key
  std::unordered_map<std::string, std::shared_ptr<const ComputePart>> parts;
  // Parts under bootstrap replicates (KEY|their values): a band needs one per replicate, and the same
  // ones again for every node count, fusion size or scheme of its layout (epyc-9654 --nodes
  // 1..1024 recomputed each 11 times). Bounded: emptied when they hold more than
  // max_replicate_layers layers' figures; a search bands one layout's node counts together.
  std::unordered_map<std::string, std::shared_ptr<const ComputePart>> replicate_parts;
  std::size_t replicate_layers = 0;
};

namespace {

constexpr std::size_t max_replicate_layers = std::size_t{1} << 22;  // about 64 MiB of (seconds, bytes)

// Other parameters than the fitted ones (a bootstrap replicate), told apart by their exact bits.
std::string parameters_key(const ModelParameters& parameters) {
  const std::vector<double> values = flatten(parameters);
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
}

// The measurement nearest to `setting` among those of the same kernel (`same_kernel`): same
// threads and SMT first, then the fewest threads away, then the closest co-running count. A
// measurement of another kernel says nothing of this one: libtorch's own 1x1 convolution at one
// thread (conv_native) is far slower than oneDNN's at two, and carried by the model's thread
// ratio the two-thread figure would hide that cliff (docs/results.md, "Layer classes").
template <typename SameKernel>
const MeasuredLayer* nearest_measurement(const std::vector<MeasuredLayer>& measurements,
                                         const ExecutionSetting& setting, const SameKernel& same_kernel) {
  const MeasuredLayer* best = nullptr;
  int best_distance = 0;
  for (const MeasuredLayer& measured : measurements) {
    if (!same_kernel(measured)) continue;
    const int distance = 100 * std::abs(measured.threads - setting.threads) + 50 * (measured.smt != setting.smt) +
                         std::abs(measured.co_running - setting.co_running);
    if (!best || distance < best_distance) best = &measured, best_distance = distance;
  }
  return best;
}

// Horovod-style: gradients become ready as the backward pass reaches each layer (in reverse);
// they are fused into buckets of at least fusion_bytes, and one bucket is reduced at a time.
struct OverlapResult {
  double communication = 0;
  double exposed = 0;
  double overlapped = 0;
};
OverlapResult simulate_allreduce_overlap(const std::vector<std::pair<double, double>>& backward_layers,
                                         double fusion_bytes, int ranks_per_node, int nodes,
                                         const CommunicationLinks& links) {
  OverlapResult result;
  double clock = 0, engine_free = 0, bucket_bytes = 0;
  auto launch = [&](double ready) {
    const double seconds = allreduce_seconds(bucket_bytes, ranks_per_node, nodes, links);
    const double start = std::max(ready, engine_free);
    engine_free = start + seconds;
    result.communication += seconds;
    bucket_bytes = 0;
  };
  for (auto layer = backward_layers.rbegin(); layer != backward_layers.rend(); ++layer) {
    clock += layer->first;
    bucket_bytes += layer->second;
    if (bucket_bytes >= fusion_bytes) launch(clock);
  }
  if (bucket_bytes > 0) launch(clock);
  result.exposed = std::max(0.0, engine_free - clock);
  // A difference of sums: rounding can leave -1e-20 when nothing overlapped.
  result.overlapped = std::max(0.0, result.communication - result.exposed);
  return result;
}

// How a pass's threads split it (LayerWork::split_rows): as oneDNN's direct convolution deals out
// batch x groups x output-channel chunks x output rows (balance211 over its work amount,
// jit_avx512_common_convolution.cpp), the tensor the pass writes: the output forward, the input's
// gradient backward-data; the weight gradient has no rows, and its batch is split instead. An
// inner product is a 1x1 convolution on a 1x1 image. Other kernels stream and are not split so.
void set_parallel_split(LayerWork& work, const workloads::Layer& layer, std::int64_t batch, workloads::Pass pass) {
  const workloads::LayerSpec& spec = layer.spec;
  if (spec.kind != workloads::LayerKind::convolution && spec.kind != workloads::LayerKind::inner_product) return;
  const double groups = spec.kind == workloads::LayerKind::convolution ? static_cast<double>(spec.groups) : 1.0;
  const double images = static_cast<double>(batch) * groups;
  const bool image_input = spec.kind == workloads::LayerKind::convolution;
  switch (pass) {
    case workloads::Pass::forward:
      work.split_rows = images * static_cast<double>(layer.output.height);
      work.split_channels = static_cast<double>(layer.output.channels) / groups;
      break;
    case workloads::Pass::backward_data:
      work.split_rows = images * (image_input ? static_cast<double>(spec.input.height) : 1.0);
      work.split_channels = static_cast<double>(image_input ? spec.input.channels : spec.input.elements()) / groups;
      break;
    case workloads::Pass::backward_weights:
      work.split_rows = images;
      work.split_channels = static_cast<double>(layer.output.channels) / groups;
      break;
  }
}

}  // namespace

namespace {

// The most images/s the nodes' cores allow at their peak, the network's FLOPs at the fewest its
// algorithms need (model/plausibility.hpp), and across nodes the link: an all-reduce moves at least
// 2(N-1)/N of the gradients through each node's port (the bandwidth-optimal bound), whatever it
// overlaps. 0 when the profile states no peak. Answers only: a ranking pass skips it (it costs a
// pass over the layers).
double roofline_images_per_second(const workloads::Network& network, const TrainingConfiguration& configuration,
                                  const records::MachineProfile& machine, const LinkModel& inter_node) {
  const double flops = least_step_flops(network, configuration.batch_per_process);
  const double peak = cpu_peak_flops(machine, machine.topology.cores);
  if (!(flops > 0) || !(peak > 0)) return 0;
  const double images =
      static_cast<double>(configuration.batch_per_process) * configuration.processes_per_node * configuration.nodes;
  const double compute_seconds = flops * configuration.processes_per_node / peak;
  double link_seconds = 0;
  const int nodes = configuration.nodes;
  if (nodes > 1 && configuration.scheme == CommunicationScheme::allreduce && inter_node.bandwidth_gbs > 0)
    if (auto cost = workloads::network_cost(network, configuration.batch_per_process))
      link_seconds =
          2.0 * (nodes - 1) / nodes * static_cast<double>(cost->gradient_bytes) / (inter_node.bandwidth_gbs * 1e9);
  return images / std::max(compute_seconds, link_seconds);
}

}  // namespace

Expected<Predictor> Predictor::from_calibration(Calibration calibration) {
  auto rates = machine_rates(calibration.machine);
  if (!rates) return rates.error();
  Predictor predictor;
  predictor.calibration_ = std::move(calibration);
  predictor.rates_ = *rates;
  predictor.memo_ = std::make_shared<ComputeMemo>();
  return predictor;
}

StepSpread Predictor::node_step_spread(const std::string& network, const std::string& fabric) const {
  if (const FabricTerms* terms = fabric_terms(fabric); terms && terms->spread.anchors > 0) return terms->spread;
  StepSpread measured = step_spread(calibration_.anchors, network);
  return spec_only_ && measured.anchors == 0 ? spec_node_step_spread() : measured;
}

Expected<LinkModel> Predictor::inter_node_link(const std::string& fabric) const {
  if (const FabricTerms* terms = fabric_terms(fabric)) return terms->inter_node;
  if (calibration_.links.inter_node.measured && !is_fabric_from_numbers(fabric)) return calibration_.links.inter_node;
  return fabric_preset(fabric);
}

void Predictor::set_fabric_terms(const std::string& fabric, FabricTerms terms) {
  fabric_terms_[fabric] = std::move(terms);
}

const FabricTerms* Predictor::fabric_terms(const std::string& fabric) const {
  const auto found = fabric_terms_.find(fabric);
  return found == fabric_terms_.end() ? nullptr : &found->second;
}

Expected<Predictor> Predictor::from_spec(const records::MachineProfile& machine, const Calibration& reference) {
  auto rates = machine_rates(machine);
  if (!rates) return rates.error();
  Predictor predictor;
  predictor.calibration_ = reference;
  predictor.calibration_.machine = machine;
  predictor.calibration_.measured_layers.clear();  // another machine's kernels, not this one's
  predictor.calibration_.context_ratios.clear();   // and its training steps' conditions
  predictor.calibration_.links.intra_node = default_intra_node_link();
  predictor.rates_ = *rates;
  predictor.spec_only_ = true;
  predictor.memo_ = std::make_shared<ComputeMemo>();
  return predictor;
}

// Processes are compared as co-running counts: the anchor's processes placed on this node as a
// configuration of theirs would be (on two packages, 2 processes run one per package), so that
// the setting a correction is carried to is the one the anchor really ran. Exact also needs the
// same processes per node when the caller knows them (two layouts can share an execution setting).
// Co-running processes weigh most, then threads: an anchor's correction mostly fixes the
// micro-runs its setting is modelled from, and co-running micro-runs err their own way: a
// one-process setting carried from a co-running anchor misses by far more than carried from a
// one-process one (docs/results.md, "Anchors"). A dispatch cliff
// at one thread shows in the one-thread micro-runs themselves (model/layer_class.hpp), and where
// the anchors disagree the carried band widens by it; 4x1 still takes 2x1's correction, not 1x2's.
AnchorUse Predictor::anchor_for(const std::string& network, std::int64_t batch, const ExecutionSetting& setting,
                                int processes_per_node) const {
  // Compared in this order: batch differs, co-running processes, threads, SMT differs, processes per
  // node differ (the last only when the caller knows them).
  using AnchorDistance = std::tuple<bool, int, int, bool, bool>;
  AnchorUse use;
  AnchorDistance best_distance;
  for (const Anchor& anchor : calibration_.anchors) {
    if (anchor.network != network) continue;
    TrainingConfiguration anchored;
    anchored.batch_per_process = anchor.batch;
    anchored.threads_per_process = anchor.threads;
    anchored.smt = anchor.smt;
    anchored.processes_per_node = anchor.processes;
    const auto placement = place(anchored, rates_);
    const int co_running = placement ? placement->processes_per_package : anchor.processes;
    const AnchorDistance distance(anchor.batch != batch, std::abs(co_running - setting.co_running),
                                  std::abs(anchor.threads - setting.threads), anchor.smt != setting.smt,
                                  processes_per_node > 0 && anchor.processes != processes_per_node);
    if (use.used && distance >= best_distance) continue;
    use = {true, distance == AnchorDistance{}, anchor, anchor.forward_ratio(), anchor.backward_ratio()};
    best_distance = distance;
  }
  if (!use.used) return use;
  // How far the anchors of this network at the chosen one's batch disagree in their correction:
  // a carried correction can be off by that much (a cliff between two settings).
  double lowest = 0, highest = 0;
  bool first = true;
  for (const Anchor& anchor : calibration_.anchors) {
    if (anchor.network != network || anchor.batch != use.anchor.batch) continue;
    const double layers = anchor.layers_forward_seconds + anchor.layers_backward_seconds;
    if (!(layers > 0) || !(anchor.forward_seconds + anchor.backward_seconds > 0)) continue;
    const double log_ratio = std::log((anchor.forward_seconds + anchor.backward_seconds) / layers);
    lowest = first ? log_ratio : std::min(lowest, log_ratio);
    highest = first ? log_ratio : std::max(highest, log_ratio);
    first = false;
  }
  use.disagreement = highest - lowest;
  return use;
}

// glibc's defaults fault in anew a share of each step's buffers that moves from run to run, not
// from step to step: a run's steps stay close together while runs differ by up to the gap to
// glibc keeping its memory (docs/results.md, "Anchors"). A new run may land anywhere
// across the allocation term's gap between the two (model/allocation.hpp), fitted from the
// glibc-tuned anchor; taken as uniform over that gap, its log sd is the gap's share of the step
// over the root of 3. Not from the prior: half of every fresh byte at the probed fault cost
// would make a measured band span most of an order of magnitude where faults are costly.
double Predictor::default_allocator_run_spread(const workloads::Network& network,
                                               const TrainingConfiguration& configuration,
                                               double iteration_seconds) const {
  const std::optional<AllocationModel>& model = calibration_.allocation;
  if (!model || model->variant("default").anchors == 0 || !(iteration_seconds > 0)) return 0;
  const double fresh = fresh_bytes_per_step(network, configuration.batch_per_process);
  const int threads = configuration.threads_per_process, processes = configuration.processes_per_node;
  const double gap = allocation_seconds(*model, "default", fresh, threads, processes) -
                     allocation_seconds(*model, reference_allocator, fresh, threads, processes);
  return std::max(0.0, gap) / iteration_seconds / std::sqrt(3.0);
}

std::shared_ptr<const Predictor::WorkloadCosts> Predictor::workload_costs(const workloads::Network& network,
                                                                          std::int64_t batch,
                                                                          const std::string& workload_key) const {
  {
    std::lock_guard<std::mutex> lock(memo_->mutex);
    if (const auto found = memo_->workloads.find(workload_key); found != memo_->workloads.end()) return found->second;
  }
  auto costs = std::make_shared<WorkloadCosts>();
  costs->layers.reserve(network.layers.size());
  for (const workloads::Layer& layer : network.layers) costs->layers.push_back(workloads::layer_cost(layer, batch));
  if (auto cost = workloads::network_cost(network, batch)) costs->network = std::move(*cost);
  std::lock_guard<std::mutex> lock(memo_->mutex);
  return memo_->workloads.emplace(workload_key, std::move(costs)).first->second;
}

Predictor::ComputePart Predictor::compute_part(const workloads::Network& network, std::int64_t batch,
                                               const ExecutionSetting& setting, const ModelParameters& parameters,
                                               const WorkloadCosts& costs) const {
  ComputePart part;
  const AnchorUse anchor = anchor_for(network.name, batch, setting);
  IterationTotals& totals = part.totals;
  IterationTerms& terms = totals.terms;
  std::vector<std::pair<double, double>>& backward_layers = part.backward_layers;

  for (std::size_t index = 0; index < network.layers.size(); ++index) {
    const workloads::Layer& layer = network.layers[index];
    const workloads::LayerCost& cost = costs.layers[index];
    const LayerClass layer_class = classify(layer.spec, calibration_.backend, batch, setting.threads);
    double backward_seconds = 0;
    for (workloads::Pass pass : workloads::all_passes) {
      const workloads::PassCost& pass_cost = cost.pass(pass);
      if (pass_cost.flops == 0 && pass_cost.bytes == 0) continue;
      if (!calibration_.fused_passes.empty() &&
          calibration_.fused_passes.count(fused_pass_key(layer.spec.kind, pass_index(pass))))
        continue;
      LayerWork work{layer_class, pass_index(pass), static_cast<double>(pass_cost.flops),
                     static_cast<double>(pass_cost.bytes)};
      set_parallel_split(work, layer, batch, pass);
      const LayerTime modelled = layer_time(work, setting, parameters, rates_);
      // A network trained for real here takes its own anchor's whole-pass ratio (the nearest
      // setting's: it holds what no module timer sees, the glue between layers, and a cliff at
      // that thread count); a network never trained here takes the other networks' in-network
      // ratio of the pass (model/context_correction.hpp). Layer-class ratios carried from another
      // setting's anchor miss the glue and the cliff by far (docs/results.md, "The sum of the layers").
      const ContextRatio* context =
          anchor.used ? nullptr : find_context_ratio(calibration_.context_ratios, pass, setting.threads);
      const double correction = context                            ? context->ratio
                                : pass == workloads::Pass::forward ? anchor.forward_ratio
                                                                   : anchor.backward_ratio;
      double seconds = modelled.total_seconds;
      // A spec machine has no measured layers: no key to build.
      const auto found =
          calibration_.measured_layers.empty()
              ? calibration_.measured_layers.end()
              : calibration_.measured_layers.find(measured_layer_key(layer.descriptor, work.pass, batch));
      const MeasuredLayer* measured =
          found == calibration_.measured_layers.end()
              ? nullptr
              : nearest_measurement(found->second, setting, [&](const MeasuredLayer& candidate) {
                  return classify(layer.spec, calibration_.backend, batch, candidate.threads) == layer_class;
                });
      if (measured) {
        const bool exact = measured->threads == setting.threads && measured->smt == setting.smt &&
                           measured->co_running == setting.co_running;
        const ExecutionSetting measured_setting{measured->threads, measured->smt, measured->co_running, 1};
        const double modelled_there = layer_time(work, measured_setting, parameters, rates_).total_seconds;
        if (exact) {
          seconds = measured->seconds;
        } else if (measured->threads == setting.threads && measured->smt == setting.smt) {
          // Only the co-running count differs: contention adds the time of the traffic the
          // processes share, whatever the kernel's own speed, so the model's difference is added
          // (a slow single-thread kernel is not slowed further in proportion to its slowness).
          seconds = std::max(0.1 * measured->seconds, measured->seconds + modelled.total_seconds - modelled_there);
        } else {
          // Threads or SMT differ: compute scales, so the model's ratio is applied.
          seconds = measured->seconds * modelled.total_seconds / modelled_there;
        }
        seconds *= correction;
        totals.measured_seconds += seconds;
        if (exact) totals.exactly_measured_seconds += seconds;
        const double median_error =
            1.2533 * measured->coefficient_of_variation * seconds / std::sqrt(measured->repetitions);
        totals.measurement_variance += median_error * median_error;
      } else {
        seconds *= correction;
      }
      totals.layer_seconds += seconds;
      if (context) {
        totals.context_corrected_seconds += seconds;
        totals.context_spread_seconds += seconds * context->log_sd;
      }
      (pass == workloads::Pass::forward         ? terms.forward
       : pass == workloads::Pass::backward_data ? terms.backward_data
                                                : terms.backward_weights) += seconds;
      if (pass != workloads::Pass::forward) backward_seconds += seconds;
      const double largest = std::max({modelled.compute_seconds, modelled.memory_seconds, modelled.overhead_seconds});
      (largest == modelled.compute_seconds  ? terms.compute_bound
       : largest == modelled.memory_seconds ? terms.memory_bound
                                            : terms.overhead_bound) += seconds;
    }
    backward_layers.emplace_back(backward_seconds,
                                 static_cast<double>(layer.parameters * workloads::bytes_per_gradient));
  }

  // Streaming terms use the element-wise add class: they are the same kind of kernel.
  const std::optional<workloads::NetworkCost>& network_cost = costs.network;
  if (network_cost) {
    const LayerWork sums{LayerClass::add, 0, static_cast<double>(network_cost->gradient_sums.flops),
                         static_cast<double>(network_cost->gradient_sums.bytes)};
    if (sums.bytes > 0) terms.gradient_sums = layer_time(sums, setting, parameters, rates_).total_seconds;
    const LayerWork optimizer{LayerClass::add, 0, static_cast<double>(network_cost->optimizer_update_flops),
                              static_cast<double>(network_cost->optimizer_update_bytes)};
    terms.optimizer = layer_time(optimizer, setting, parameters, rates_).total_seconds;
    // A network trained here takes its anchor's ratio for them too, as for its passes.
    if (anchor.used) {
      terms.gradient_sums *= anchor.anchor.streaming_ratio();
      terms.optimizer *= anchor.anchor.streaming_ratio();
    }
  }
  part.gradient_bytes = network_cost ? static_cast<double>(network_cost->gradient_bytes) : 0;
  return part;
}

Predictor::IterationTotals Predictor::iterate(const workloads::Network& network,
                                              const TrainingConfiguration& configuration, const Placement& placement,
                                              const ModelParameters& parameters) const {
  const ExecutionSetting setting{configuration.threads_per_process, configuration.smt, placement.processes_per_package,
                                 placement.packages_spanned};
  const std::int64_t batch = configuration.batch_per_process;
  std::shared_ptr<const ComputePart> part;
  const bool fitted = &parameters == &calibration_.parameters;
  {
    // A network is told apart by its name, layer count and parameter count (a JSON network may
    // reuse a built-in's name).
    std::int64_t network_parameters = 0;
    for (const workloads::Layer& layer : network.layers) network_parameters += layer.parameters;
    const std::string workload = network.name + "|" + std::to_string(network.layers.size()) + "|" +
                                 std::to_string(network_parameters) + "|" + std::to_string(batch);
    const std::string key = workload + "|" + std::to_string(setting.threads) + "|" + std::to_string(setting.smt) + "|" +
                            std::to_string(setting.co_running) + "|" + std::to_string(setting.packages_spanned) +
                            (fitted ? "" : "|" + parameters_key(parameters));
    {
      std::lock_guard<std::mutex> lock(memo_->mutex);
      const auto& parts = fitted ? memo_->parts : memo_->replicate_parts;
      if (const auto found = parts.find(key); found != parts.end()) part = found->second;
    }
    if (!part) {  // computed outside the lock: the workers of a search compute in parallel
      part = std::make_shared<const ComputePart>(
          compute_part(network, batch, setting, parameters, *workload_costs(network, batch, workload)));
      std::lock_guard<std::mutex> lock(memo_->mutex);
      if (fitted) {
        memo_->parts.emplace(key, part);
      } else {
        if (memo_->replicate_layers > max_replicate_layers) {
          memo_->replicate_parts.clear();
          memo_->replicate_layers = 0;
        }
        if (memo_->replicate_parts.emplace(key, part).second) memo_->replicate_layers += network.layers.size();
      }
    }
  }
  IterationTotals totals = part->totals;
  IterationTerms& terms = totals.terms;
  const auto& backward_layers = part->backward_layers;
  const double gradient_bytes = part->gradient_bytes;
  const double compute_seconds = totals.layer_seconds + terms.gradient_sums + terms.optimizer;

  CommunicationLinks links = calibration_.links;
  links.inter_node = *inter_node_link(configuration.fabric);  // checked by predict()
  const int ranks = configuration.processes_per_node * configuration.nodes;
  // With every core busy computing, communication progress (MPI copies, reductions) takes its
  // share of the cores while it overlaps the backward pass: one more runnable thread per rank.
  const bool cores_all_busy = placement.cores_per_process * configuration.processes_per_node >= rates_.cores();
  const double cpu_share = cores_all_busy ? 1.0 / (configuration.threads_per_process + 1) : 0.0;
  int workers = ranks;
  // A barrier across nodes waits for the slowest node's work (the step spread the anchors measured).
  const double stragglers =
      configuration.nodes > 1 ? straggler_seconds(compute_seconds, node_step_spread(network.name, configuration.fabric),
                                                  configuration.nodes)
                              : 0.0;
  if (configuration.scheme == CommunicationScheme::allreduce) {
    const OverlapResult overlap = simulate_allreduce_overlap(
        backward_layers, configuration.fusion_bytes, configuration.processes_per_node, configuration.nodes, links);
    terms.communication = overlap.communication;
    terms.exposed_communication = overlap.exposed;
    terms.communication_cpu = overlap.overlapped * cpu_share;
    terms.stragglers = stragglers;
    totals.iteration_seconds = compute_seconds + terms.exposed_communication + terms.communication_cpu + stragglers;
    totals.images_per_second = ranks * batch / totals.iteration_seconds;
  } else {
    workers = ranks - configuration.parameter_servers;
    terms.communication =
        parameter_server_seconds(gradient_bytes, workers, configuration.parameter_servers, configuration.nodes, links);
    if (!configuration.asynchronous) {
      // Push after the backward pass, pull before the next forward: nothing overlaps.
      terms.exposed_communication = terms.communication;
      terms.stragglers = stragglers;
      totals.iteration_seconds = compute_seconds + terms.communication + stragglers;
      totals.images_per_second = workers * batch / totals.iteration_seconds;
    } else {
      // No barrier: each worker waits only for its own push and pull; the servers' links cap
      // the steps per second of all workers together.
      const LinkModel& link = configuration.nodes > 1 ? links.inter_node : links.intra_node;
      const double own_exchange = 2 * gradient_bytes / (link.bandwidth_gbs * 1e9);
      const double server_steps_per_second =
          configuration.parameter_servers * link.bandwidth_gbs * 1e9 / (2 * gradient_bytes);
      const double worker_step = compute_seconds + own_exchange;
      const double steps_per_second = std::min(workers / worker_step, server_steps_per_second);
      totals.iteration_seconds = workers / steps_per_second;
      terms.exposed_communication = totals.iteration_seconds - compute_seconds;
      totals.images_per_second = steps_per_second * batch;
    }
  }
  return totals;
}

namespace {

// What the iteration is spent on, to name the bottleneck.
std::string bottleneck_of(const IterationTerms& terms, double iteration_seconds) {
  const std::pair<double, const char*> candidates[] = {
      {terms.compute_bound, "compute-bound layers"},
      {terms.memory_bound, "memory bandwidth (memory-bound layers)"},
      {terms.overhead_bound, "per-layer framework overhead"},
      {terms.exposed_communication + terms.communication_cpu, "communication"},
      {terms.stragglers, "waiting for the slowest node (stragglers)"},
      {terms.optimizer + terms.gradient_sums, "optimizer and gradient sums (memory traffic)"}};
  const auto* largest = std::max_element(std::begin(candidates), std::end(candidates),
                                         [](const auto& a, const auto& b) { return a.first < b.first; });
  return std::string(largest->second) + " (" +
         std::to_string(static_cast<int>(std::lround(100 * largest->first / iteration_seconds))) +
         "% of the iteration)";
}

// The band's share from the anchor that corrects `prediction` (its step, the correction carried
// to this configuration, how much a run's median moves); sets the prediction's run spread.
// `allocator_run_spread`: what glibc's defaults add to a run's spread here.
double anchor_log_variance(Prediction& prediction, const IterationTerms& terms, bool checked, bool context_corrected,
                           const std::vector<Anchor>& anchors, double allocator_run_spread) {
  const Anchor& anchor = prediction.anchor.anchor;
  const double iteration = prediction.iteration_seconds;
  double log_variance = 0;
  if (checked) {
    // What the correction leaves between this prediction and the real step (the optimizer and
    // gradient sums are still modelled).
    const double residual = std::log(iteration / anchor.iteration_seconds);
    log_variance += residual * residual;
  } else if (!context_corrected) {
    // A correction carried from another batch or setting may be off by as much as it corrects.
    const double corrected = terms.forward + terms.backward_data + terms.backward_weights;
    const double uncorrected = terms.forward / prediction.anchor.forward_ratio +
                               (terms.backward_data + terms.backward_weights) / prediction.anchor.backward_ratio;
    const double carried = std::log(corrected / uncorrected) * corrected / iteration;
    // ... and by as much as the anchors disagree with each other (a cliff between settings).
    const double disagreement = prediction.anchor.disagreement * corrected / iteration;
    log_variance += carried * carried + disagreement * disagreement;
  }
  // The band is where a new run's median falls. A run's median moves between runs by about as
  // much as its steps spread (not that over the root of their count: what slows a step, the
  // share of buffers glibc faults in anew, the neighbours of a VM, holds for a whole run), and
  // by at least run_to_run_log_sd (model/anchors.hpp); the anchor's run and the new run
  // each do. The spread is the anchor's, at least the node's median over its anchors (a few
  // steps can agree by chance), at least what its runs spread when the setting was trained again,
  // at least what the node's processes spread where a setting was (one run shows none of it).
  const double per_run =
      std::max({anchor.iteration_coefficient_of_variation, anchor.between_runs_log_sd,
                step_spread(anchors, prediction.network).coefficient_of_variation,
                between_processes_log_sd(anchors, prediction.network), run_to_run_log_sd, allocator_run_spread});
  prediction.run_spread_log_sd = per_run;
  return log_variance + 2 * per_run * per_run;
}

// A prior's spread is as uncertain as its range: the straggler term moves with it (its range
// read as a 90% interval). 0 where the spread has no range or nothing waits for stragglers.
double straggler_log_variance(const StepSpread& spread, double straggler_seconds, double iteration_seconds) {
  if (!(straggler_seconds > 0) || !(spread.coefficient_of_variation_high > spread.coefficient_of_variation_low))
    return 0;
  const double relative_range =
      (spread.coefficient_of_variation_high - spread.coefficient_of_variation_low) / spread.coefficient_of_variation;
  const double straggler_log_sd = straggler_seconds / iteration_seconds * relative_range / (2 * z_90_percent);
  return straggler_log_sd * straggler_log_sd;
}

// How the answer was obtained: a spec machine's; "measured" where a real step of this very
// setting checked it; "partly measured" where micro-runs timed its layers (all of them exactly,
// or half its layer time); else "modelled".
const char* confidence_of(bool spec_only, bool checked, double exact_fraction, double measured_fraction) {
  if (spec_only) return "spec";
  if (checked) return "measured";
  return exact_fraction >= 0.99 || measured_fraction >= 0.5 ? "partly measured" : "modelled";
}

}  // namespace

Expected<std::vector<double>> Predictor::replicate_images_per_second(const workloads::Network& network,
                                                                     const TrainingConfiguration& configuration) const {
  auto placement = place(configuration, rates_);
  if (!placement) return placement.error();
  std::vector<double> values;
  for (const auto& replicate : calibration_.bootstrap_parameters)
    values.push_back(iterate(network, configuration, *placement, unflatten(replicate)).images_per_second);
  return values;
}

Expected<Prediction> Predictor::predict(const workloads::Network& network, const TrainingConfiguration& configuration,
                                        bool with_band, std::vector<double>* replicate_images_per_second) const {
  if (configuration.batch_per_process < 1 || configuration.batch_per_process > workloads::max_batch)
    return bad_input("batch " + std::to_string(configuration.batch_per_process) + " per process is outside 1.." +
                     std::to_string(workloads::max_batch));
  auto placement = place(configuration, rates_);
  if (!placement) return placement.error();
  // iterate() takes the fabric whenever the inter-node link was not measured or numbers replace
  // it, at any node count: check it here, where a bad one is an error and not a crash.
  auto inter_node_checked = inter_node_link(configuration.fabric);
  if (!inter_node_checked) return inter_node_checked.error();
  const LinkModel inter_node = *inter_node_checked;
  const IterationTotals totals = iterate(network, configuration, *placement, calibration_.parameters);

  Prediction prediction;
  prediction.network = network.name;
  prediction.backend = calibration_.backend;
  prediction.machine = calibration_.machine.name;
  prediction.configuration = configuration;
  prediction.placement = *placement;
  prediction.iteration_seconds = totals.iteration_seconds;
  prediction.images_per_second = totals.images_per_second;
  prediction.terms = totals.terms;
  const bool barrier = configuration.scheme == CommunicationScheme::allreduce || !configuration.asynchronous;
  if (configuration.nodes > 1 && barrier)
    prediction.step_spread_source = node_step_spread(network.name, configuration.fabric).source;
  if (configuration.nodes > 1) {
    const FabricTerms* fitted = fabric_terms(configuration.fabric);
    prediction.inter_node_link_source = fitted ? fitted->source : inter_node.source;
  }
  prediction.measured_fraction = totals.layer_seconds > 0 ? totals.measured_seconds / totals.layer_seconds : 0;
  const double exact_fraction = totals.layer_seconds > 0 ? totals.exactly_measured_seconds / totals.layer_seconds : 0;
  prediction.anchor = anchor_for(network.name, configuration.batch_per_process,
                                 {configuration.threads_per_process, configuration.smt,
                                  placement->processes_per_package, placement->packages_spanned},
                                 configuration.processes_per_node);
  // Measured means checked against a real step: layer micro-runs alone have missed training by
  // 2.4x (page faults a training loop does not take); measured layers are "partly measured".
  const bool checked = prediction.anchor.exact && configuration.nodes == 1;
  prediction.confidence = confidence_of(spec_only_, checked, exact_fraction, prediction.measured_fraction);

  // The one-node comparison doubles the work, so a ranking pass (no band) leaves it out.
  if (with_band && configuration.nodes > 1 && configuration.scheme == CommunicationScheme::parameter_server) {
    // One node cannot hold the same servers-per-worker ratio (with one rank per node it holds no
    // worker at all), so a parameter server is measured per worker against a worker that trains
    // alone: the same compute without any exchange. It cannot exceed 100%.
    const int workers = configuration.processes_per_node * configuration.nodes - configuration.parameter_servers;
    const double compute_seconds = totals.layer_seconds + totals.terms.gradient_sums + totals.terms.optimizer;
    const double alone_images_per_second = configuration.batch_per_process / compute_seconds;
    if (workers > 0 && compute_seconds > 0)
      prediction.scaling_efficiency = totals.images_per_second / workers / alone_images_per_second;
  } else if (with_band && configuration.nodes > 1) {
    TrainingConfiguration one_node = configuration;
    one_node.nodes = 1;
    auto one_placement = place(one_node, rates_);
    if (one_placement) {
      const double single = iterate(network, one_node, *one_placement, calibration_.parameters).images_per_second;
      prediction.scaling_efficiency = totals.images_per_second / (configuration.nodes * single);
    }
  }

  prediction.bottleneck = bottleneck_of(totals.terms, totals.iteration_seconds);

  // The band: parameter uncertainty (bootstrap replicates), the noise of the medians used, the
  // held-out model error of the modelled part, and for a spec machine the transfer itself.
  double log_variance = 0;
  if (with_band && !calibration_.bootstrap_parameters.empty()) {
    // An anchored prediction is corrected, in each replicate too, by that replicate's own ratio
    // of the anchor's measured passes to its layer sums there: what the parameters leave
    // uncertain is then only how the anchor's step carries to this configuration (nothing, for
    // an exact anchor), not the layer sums the anchor measured.
    // (Layers under class context ratios were corrected by those, not by the anchor's ratio.)
    std::optional<std::pair<TrainingConfiguration, Placement>> anchored;
    if (prediction.anchor.used && (checked || totals.context_corrected_seconds == 0)) {
      const Anchor& anchor = prediction.anchor.anchor;
      TrainingConfiguration there;
      there.batch_per_process = anchor.batch;
      there.threads_per_process = anchor.threads;
      there.smt = anchor.smt;
      there.processes_per_node = anchor.processes;
      if (auto placed = place(there, rates_)) anchored.emplace(there, *placed);
    }
    std::vector<double> logs;
    for (const auto& replicate : calibration_.bootstrap_parameters) {
      const ModelParameters parameters = unflatten(replicate);
      const IterationTotals drawn = iterate(network, configuration, *placement, parameters);
      double iteration_seconds = drawn.iteration_seconds;
      if (anchored) {
        const Anchor& anchor = prediction.anchor.anchor;
        const IterationTerms at_anchor =
            checked ? drawn.terms : iterate(network, anchored->first, anchored->second, parameters).terms;
        const double backward_there = at_anchor.backward_data + at_anchor.backward_weights;
        if (at_anchor.forward > 0 && backward_there > 0) {
          const double backward = drawn.terms.backward_data + drawn.terms.backward_weights;
          const double recorrected = drawn.terms.forward * anchor.forward_seconds / at_anchor.forward +
                                     backward * anchor.backward_seconds / backward_there;
          iteration_seconds = std::max(0.5 * drawn.iteration_seconds,
                                       drawn.iteration_seconds - (drawn.terms.forward + backward) + recorrected);
        }
      }
      logs.push_back(std::log(iteration_seconds));
      if (replicate_images_per_second)
        replicate_images_per_second->push_back(drawn.images_per_second * drawn.iteration_seconds / iteration_seconds);
    }
    double mean = 0;
    for (double value : logs) mean += value;
    mean /= logs.size();
    for (double value : logs)
      log_variance += (value - mean) * (value - mean) / std::max<std::size_t>(1, logs.size() - 1);
  }
  const double iteration = totals.iteration_seconds;
  log_variance += totals.measurement_variance / (iteration * iteration);
  // The model's held-out error applies to the layer time no measurement pins down; a real step
  // of this very configuration pins all of it (its residual and noise are added below).
  const double modelled_share = checked ? 0 : (totals.layer_seconds - totals.exactly_measured_seconds) / iteration;
  log_variance += std::pow(calibration_.summary.held_out_log_sd * modelled_share, 2);
  if (spec_only_) log_variance += spec_transfer_log_sd * spec_transfer_log_sd;
  log_variance +=
      straggler_log_variance(node_step_spread(network.name, configuration.fabric), totals.terms.stragglers, iteration);
  if (prediction.anchor.used)
    log_variance +=
        anchor_log_variance(prediction, totals.terms, checked, totals.context_corrected_seconds > 0,
                            calibration_.anchors, default_allocator_run_spread(network, configuration, iteration));
  // The pass ratios carried here are as uncertain as they spread over the anchors' runs (taken
  // as one error across the passes: they share the step's conditions).
  if (totals.context_corrected_seconds > 0) {
    const double spread = totals.context_spread_seconds / iteration;
    log_variance += spread * spread;
    prediction.context_corrected_share = totals.context_corrected_seconds / iteration;
  }
  const double half_width = z_90_percent * std::sqrt(log_variance);
  // The gate (model/plausibility.hpp): the readers refuse unphysical calibrations and profiles; no
  // answer is faster than the nodes' cores at their peak allow, or slower than the floor.
  AnswerFigures figures{
      prediction.iteration_seconds, prediction.images_per_second, prediction.images_per_second * std::exp(-half_width),
      prediction.images_per_second * std::exp(half_width),
      with_band ? roofline_images_per_second(network, configuration, calibration_.machine, inter_node) : 0};
  hold_band_at_roofline(figures);
  prediction.images_per_second_low = figures.band_low;
  prediction.images_per_second_high = figures.band_high;
  if (auto usable = check_answer(network.name + ", " + describe(configuration) + " on " + prediction.machine, figures);
      !usable)
    return usable.error();
  return prediction;
}

}  // namespace dnntune::model
