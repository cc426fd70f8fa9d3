// model/spec_priors.cpp — see spec_priors.hpp. The table of rules is spec_prior_rules().
#include "model/spec_priors.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "common/text_format.hpp"
#include "model/parameters.hpp"

namespace dnntune::model {
namespace {

struct PriorValue {
  double value, low, high;
};

struct PriorRule {
  const char* field;                // the parameter's name within its class, or a global's name
  std::vector<LayerClass> classes;  // empty: a global parameter
  // Why the reference cannot identify this parameter for `target` ("" when it can).
  std::function<std::string(const Calibration& reference, const records::MachineProfile& target,
                            const ParameterEstimate* estimate)>
      unidentified;
  std::function<PriorValue(const records::MachineProfile& target)> prior;
  const char* source;
};

const std::vector<LayerClass> compute_bound_classes = {LayerClass::conv_spatial, LayerClass::conv_pointwise,
                                                       LayerClass::conv_grouped, LayerClass::conv_native,
                                                       LayerClass::inner_product};
const std::vector<LayerClass> streaming_classes = {
    LayerClass::batch_norm,       LayerClass::eltwise, LayerClass::pooling_max, LayerClass::pooling_average,
    LayerClass::pooling_adaptive, LayerClass::add,     LayerClass::concat,      LayerClass::loss,
    LayerClass::reshape};

std::vector<LayerClass> all_classes() {
  std::vector<LayerClass> classes;
  for (int index = 0; index < layer_class_count; ++index) classes.push_back(static_cast<LayerClass>(index));
  return classes;
}

int reference_threads(const Calibration& reference) { return std::max(1, reference.machine.topology.cores); }

std::string no_smt_in_reference(const Calibration& reference, const records::MachineProfile& target,
                                const ParameterEstimate* estimate) {
  if (target.topology.pus_per_core <= 1) return "";
  if (reference.machine.topology.pus_per_core > 1 && estimate && !estimate->pinned) return "";
  return "the reference has no SMT siblings to measure; its fit kept the default";
}

std::string fewer_threads_in_reference(const Calibration& reference, const records::MachineProfile& target,
                                       const ParameterEstimate*) {
  const int threads = reference_threads(reference);
  if (target.topology.cores_per_package <= 2 * threads) return "";
  return "the reference ran at most " + std::to_string(threads) + " threads; this machine runs up to " +
         std::to_string(target.topology.cores_per_package) + " per package";
}

// What no calibration measures: micro-runs time one package's threads at a time, and no fit frees
// the node terms of layer_time.hpp, so a spec answer always takes them from the sources below.
std::string not_measured_by_micro_runs(const Calibration&, const records::MachineProfile&, const ParameterEstimate*) {
  return "micro-runs on one package never measure it; every fit keeps it at the prior that costs nothing";
}

std::string one_process_spans_packages(const Calibration& reference, const records::MachineProfile& target,
                                       const ParameterEstimate* estimate) {
  if (target.topology.packages <= 1) return "";
  return not_measured_by_micro_runs(reference, target, estimate);
}

// fp32 lanes of the widest vector unit the target's oneDNN kernels use: a convolution's work
// item is a whole number of such channel blocks.
double fp32_lanes(const records::MachineProfile& target) {
  const auto& isa = target.cpu.isa;
  if (std::find(isa.begin(), isa.end(), "avx512f") != isa.end()) return 16;
  if (std::find(isa.begin(), isa.end(), "avx2") != isa.end()) return 8;
  return 4;
}

const std::vector<PriorRule>& spec_prior_rules() {
  static const std::vector<PriorRule> rules = {
      {"smt_gain", compute_bound_classes, no_smt_in_reference,
       [](const records::MachineProfile&) {
         return PriorValue{0.0, -0.15, 0.10};
       },
       "Intel 64 and IA-32 Architectures Optimization Reference Manual: SMT siblings share one core's FMA "
       "units, so a kernel that keeps them busy gains nothing; PyTorch's CPU performance tuning guide: train "
       "on physical cores, not logical ones"},
      {"smt_gain", streaming_classes, no_smt_in_reference,
       [](const records::MachineProfile&) {
         return PriorValue{0.10, 0.0, 0.25};
       },
       "assumption (no published figure for these kernels): a sibling hides part of the DRAM latency of a "
       "streaming kernel; range 0 to +25%"},
      {"contention", compute_bound_classes, fewer_threads_in_reference,
       [](const records::MachineProfile&) {
         return PriorValue{0.0, 0.0, 0.0};
       },
       "no published thread-scaling figure of these kernels on a full package that is not a study's own ratio; "
       "so no serial fraction of their own: what a process's threads lose is in the named terms "
       "(fork_join_seconds_per_doubling, work_item_channels, cross_package_bandwidth_ratio) and in the memory "
       "term's shared bandwidth"},
      {"coherency", all_classes(),
       [](const Calibration& reference, const records::MachineProfile& target, const ParameterEstimate* estimate) {
         if (estimate && !estimate->pinned) return std::string();
         return fewer_threads_in_reference(reference, target, estimate).empty()
                    ? std::string()
                    : "USL coherency needs 3 or more thread counts; the reference fit pinned it at 0";
       },
       [](const records::MachineProfile&) {
         return PriorValue{0.0, 0.0, 1e-4};
       },
       "assumption (not measured anywhere dnntune can cite): 0, up to 1e-4, so that 28 threads lose at most "
       "7% to it (28 x 27 x 1e-4)"},
      {"bandwidth_efficiency",
       {},
       [](const Calibration&, const records::MachineProfile&, const ParameterEstimate* estimate) {
         if (!estimate) return std::string();
         const ParameterDescriptor& info = parameter_table()[parameter_index("bandwidth_efficiency")];
         const bool at_bound = estimate->value >= info.upper * 0.99 || estimate->value <= info.lower * 1.01;
         return at_bound ? "the reference fit left it at a bound of its range (" +
                               format_significant(estimate->value, 3) + ")"
                         : std::string();
       },
       [](const records::MachineProfile&) {
         return PriorValue{1.0, 0.8, 1.2};
       },
       "the machine's rates are already a sustained STREAM-triad bandwidth (probed, or 80% of a spec sheet's "
       "DRAM peak: McCalpin's STREAM on 2-socket Xeon and EPYC nodes), so a kernel streaming at the triad's "
       "rate is 1.0; range +-20% (assumption)"},
      // The three node terms (layer_time.hpp), set on every spec answer: no reference measures them.
      {"fork_join_seconds_per_doubling",
       {},
       not_measured_by_micro_runs,
       [](const records::MachineProfile&) {
         return PriorValue{0.5e-6, 0.28e-6, 0.77e-6};
       },
       "each pass is one parallel region closed by a barrier; a counter-based spinning barrier on 2x Xeon "
       "E5-2660 v3 across both NUMA nodes took 0.57-0.69 us at 4 threads, 1.38-1.45 at 8, 2.86-2.97 at 16, 3.84 "
       "at 32 (the hurdles crate's published benchmark, J. Gjengset, crates.io, 2017): 0.28-0.77 us per "
       "doubling of threads, prior their middle. An OpenMP runtime's barrier varies with the runtime and "
       "where the threads sit (G. Hager, 'Intel vs. GCC for the OpenMP vector triad: barrier shootout', "
       "2012); no EPCC syncbench figure for Skylake-SP was found"},
      {"cross_package_bandwidth_ratio",
       {},
       one_process_spans_packages,
       [](const records::MachineProfile&) {
         return PriorValue{0.45, 0.33, 0.49};
       },
       "a process spanning packages finds (packages-1)/packages of its bytes on another package's memory (the "
       "threads write under one layer's split and read under the next's); Intel Memory Latency Checker v3.9 "
       "on 2x Xeon Platinum 8269CY (Cascade Lake, the 8180's 3 UPI links, DDR4-2666): 113.1 GB/s local, 50.9 "
       "remote (0.45; idle latency 77.9 vs 143.2 ns); v3.11 on a 2-UPI Xeon Scalable node: 96.3 and 31.7 "
       "(0.33); the 3 links' spec cap, 3 x 20.8 GB/s each way over 6 x 21.3 GB/s of DDR4-2666, is 0.49 (Intel "
       "ARK: Xeon Platinum 8180, 3 UPI links at 10.4 GT/s)"},
      {"work_item_channels",
       {},
       not_measured_by_micro_runs,
       [](const records::MachineProfile& target) {
         const double lanes = fp32_lanes(target);
         return PriorValue{2 * lanes, lanes, 4 * lanes};
       },
       "oneDNN's direct convolution deals batch x output rows x channel chunks to its threads in equal whole "
       "shares (balance211 over mb x groups x oc_chunks x oh, jit_avx512_common_convolution.cpp); a chunk is "
       "nb_oc_blocking blocks of one vector's fp32 lanes (16 with AVX-512, 8 with AVX2), 1 to 4 blocks: range "
       "1 to 4 blocks, prior 2"},
  };
  return rules;
}

// Where in the stratified range replicate `replicate` of `replicates` draws group `group`:
// every replicate a different stratum, shifted by the golden ratio between groups so that two
// groups are not drawn in lock-step.
double stratified_quantile(std::size_t replicate, std::size_t replicates, std::size_t group) {
  const double base = (static_cast<double>(replicate) + 0.5) / static_cast<double>(replicates);
  return std::fmod(base + 0.6180339887 * static_cast<double>(group), 1.0);
}

}  // namespace

SpecPriors apply_spec_priors(const Calibration& reference, const records::MachineProfile& target) {
  SpecPriors result;
  result.calibration = reference;
  std::vector<double> fitted = flatten(reference.parameters);
  std::vector<std::vector<double>> replicates = reference.bootstrap_parameters;
  if (replicates.empty()) replicates.assign(24, fitted);  // the priors' range still needs draws
  std::vector<std::vector<double>> undrawn = replicates;

  const auto estimate_of = [&](const std::string& name) -> const ParameterEstimate* {
    for (const auto& estimate : reference.summary.parameters)
      if (estimate.name == name) return &estimate;
    return nullptr;
  };
  std::size_t group = 0;
  for (const PriorRule& rule : spec_prior_rules()) {
    AppliedPrior applied;
    applied.field = rule.field;
    applied.source = rule.source;
    const PriorValue prior = rule.prior(target);
    applied.value = prior.value;
    applied.low = prior.low;
    applied.high = prior.high;
    std::vector<std::string> names;
    if (rule.classes.empty()) names.push_back(rule.field);
    for (LayerClass layer_class : rule.classes) names.push_back(class_name(layer_class) + "." + rule.field);
    std::vector<int> indices;
    for (const std::string& name : names) {
      const int index = parameter_index(name);
      if (index < 0) continue;
      const std::string why = rule.unidentified(reference, target, estimate_of(name));
      if (why.empty()) continue;
      if (applied.why_unidentified.empty()) applied.why_unidentified = why;
      applied.parameters.push_back(name);
      indices.push_back(index);
    }
    if (indices.empty()) continue;
    for (std::size_t replicate = 0; replicate < replicates.size(); ++replicate) {
      const double quantile = stratified_quantile(replicate, replicates.size(), group);
      for (const int index : indices) {
        replicates[replicate][index] = prior.low + quantile * (prior.high - prior.low);
        undrawn[replicate][index] = prior.value;
      }
    }
    for (const int index : indices) fitted[index] = prior.value;
    result.applied.push_back(std::move(applied));
    ++group;
  }
  result.calibration.parameters = unflatten(fitted);
  result.calibration.bootstrap_parameters = replicates;
  result.calibration_without_prior_spread = result.calibration;
  result.calibration_without_prior_spread.bootstrap_parameters = undrawn;
  return result;
}

}  // namespace dnntune::model
