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

// Skylake-8180: 6 channels of DDR4-2666 (128 GB/s) over 28 cores, where the study measured.
constexpr double skylake_8180_gbs_per_core = 128.0 / 28;
// Under the model's USL form, 4 processes x 14 threads running 1.47x as fast as 1 x 56 is
// (1 + 55 s) / (1 + 13 s) = 1.47, s = 0.013.
constexpr double skylake_8180_contention = 0.013;

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
       [](const records::MachineProfile& target) {
         const double per_core = bandwidth_per_core_gbs(target);
         const double scaled =
             per_core > 0 ? skylake_8180_contention * skylake_8180_gbs_per_core / per_core : skylake_8180_contention;
         const double value = std::clamp(scaled, 0.004, 0.04);
         return PriorValue{value, value / 2, value * 2};
       },
       "Jain et al., IEEE CLUSTER 2019: multi-process up to 1.47x single-process for ResNet-152 on 2x Xeon "
       "8180; read as thread contention between 14 and 56 threads per process that is USL s = 0.013, scaled "
       "by DRAM GB/s per core (spec: channels x transfer rate / cores; 4.6 on the 8180); range /2 to x2"},
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

double bandwidth_per_core_gbs(const records::MachineProfile& profile) {
  const auto& bandwidth = profile.performance.memory_bandwidth_gbs_per_package;
  if (!bandwidth || profile.topology.cores_per_package <= 0) return 0;
  return bandwidth->value / profile.topology.cores_per_package;
}

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
