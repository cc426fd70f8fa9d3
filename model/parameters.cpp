// model/parameters.cpp — the parameter table (see parameters.hpp): one row per field of
// ModelParameters, expanded over the layer classes (and passes) into the flat table.
#include "model/parameters.hpp"

#include <unordered_map>

#include "workloads/costs.hpp"

namespace dnntune::model {
namespace {

enum class Scope {
  per_class_and_pass,  // one parameter per layer class and pass: "CLASS.NAME.PASS"
  per_class,           // one per layer class: "CLASS.NAME"
  global,              // one: "NAME"
};

using Member = double& (*)(ModelParameters&, LayerClass, int pass);
using Rule = bool (*)(const FitEvidence&, LayerClass, int pass);

struct Field {
  const char* name;
  Scope scope;
  double lower, upper;
  bool log_scale;
  double (*prior)(LayerClass);
  const char* unit;
  Member member;
  Rule identifiable;
};

bool never(const FitEvidence&, LayerClass, int) { return false; }

// The fields, in the flat order: every per-class field of a class before the next class, the
// global ones last. Files are read by name, so a new row may go anywhere in its scope; existing
// rows stay where they are, since the fit's coordinate order (and so its last digits) follows
// theirs.
// Each row: name, scope, lower and upper bound, log scale, prior, unit, member, identifiability.
const Field fields[] = {
    // The fraction of one core's FMA peak the class's kernels reach in this pass.
    {"efficiency", Scope::per_class_and_pass, 1e-4, 1.2, true,
     // libtorch's own convolution kernel reached 2-3% of the FMA peak where it was measured.
     [](LayerClass layer_class) { return layer_class == LayerClass::conv_native ? 0.03 : 0.3; }, "of FMA peak",
     [](ModelParameters& p, LayerClass c, int pass) -> double& { return p.of(c).efficiency[pass]; },
     [](const FitEvidence& e, LayerClass c, int pass) { return e.of(c).measured_in_pass[pass]; }},
    // Fixed time per call: dispatch and set-up.
    {"overhead_seconds", Scope::per_class_and_pass, 1e-7, 0.05, true, [](LayerClass) { return 5e-6; }, "s",
     [](ModelParameters& p, LayerClass c, int pass) -> double& { return p.of(c).overhead_seconds[pass]; },
     [](const FitEvidence& e, LayerClass c, int pass) { return e.of(c).measured_in_pass[pass]; }},
    // USL serial fraction as threads are added: two core counts tell it.
    {"contention", Scope::per_class, 0.0, 1.0, false, [](LayerClass) { return 0.05; }, "",
     [](ModelParameters& p, LayerClass c, int) -> double& { return p.of(c).contention; },
     [](const FitEvidence& e, LayerClass c, int) { return e.of(c).core_counts >= 2; }},
    // USL cross-thread coherency cost: a third core count tells it from contention.
    {"coherency", Scope::per_class, 0.0, 0.05, false, [](LayerClass) { return 0.0; }, "",
     [](ModelParameters& p, LayerClass c, int) -> double& { return p.of(c).coherency; },
     [](const FitEvidence& e, LayerClass c, int) { return e.of(c).core_counts >= 3; }},
    // Extra throughput from a core's SMT siblings (negative: they hurt).
    {"smt_gain", Scope::per_class, -0.6, 0.8, false, [](LayerClass) { return 0.1; }, "per SMT sibling",
     [](ModelParameters& p, LayerClass c, int) -> double& { return p.of(c).smt_gain; },
     [](const FitEvidence& e, LayerClass c, int) { return e.of(c).with_smt; }},
    // Compute slow-down per extra co-running process on the package (shared caches).
    {"corun_slowdown", Scope::per_class, 0.0, 2.0, false, [](LayerClass) { return 0.05; }, "per extra process",
     [](ModelParameters& p, LayerClass c, int) -> double& { return p.of(c).corun_slowdown; },
     [](const FitEvidence& e, LayerClass c, int) { return e.of(c).co_running; }},
    // The globals enter every sample: any measurement identifies them.
    // The share of the STREAM triad bandwidth a kernel streams at.
    {"bandwidth_efficiency", Scope::global, 0.05, 2.0, true, [](LayerClass) { return 0.8; }, "of triad bandwidth",
     [](ModelParameters& p, LayerClass, int) -> double& { return p.bandwidth_efficiency; },
     [](const FitEvidence& e, LayerClass, int) { return e.samples > 0; }},
    // g in (Tc^g + Tm^g)^(1/g): 1 adds compute and memory time, large takes the larger.
    {"smooth_max_exponent", Scope::global, 1.0, 10.0, false, [](LayerClass) { return 3.0; }, "",
     [](ModelParameters& p, LayerClass, int) -> double& { return p.smooth_max_exponent; },
     [](const FitEvidence& e, LayerClass, int) { return e.samples > 0; }},
    // The node terms (parameters.hpp): micro-runs on one package never show them, so no fit frees
    // them; their priors cost nothing, and only a spec answer's priors set them.
    {"fork_join_seconds_per_doubling", Scope::global, 0.0, 1e-4, false, [](LayerClass) { return 0.0; }, "s",
     [](ModelParameters& p, LayerClass, int) -> double& { return p.fork_join_seconds_per_doubling; }, never},
    {"cross_package_bandwidth_ratio", Scope::global, 0.05, 1.0, false, [](LayerClass) { return 1.0; },
     "of local bandwidth",
     [](ModelParameters& p, LayerClass, int) -> double& { return p.cross_package_bandwidth_ratio; }, never},
    {"work_item_channels", Scope::global, 0.0, 256.0, false, [](LayerClass) { return 0.0; }, "channels",
     [](ModelParameters& p, LayerClass, int) -> double& { return p.work_item_channels; }, never},
};

ParameterDescriptor expand(const Field& field, LayerClass layer_class, int pass) {
  ParameterDescriptor descriptor;
  descriptor.name = field.name;
  if (field.scope != Scope::global) descriptor.name = class_name(layer_class) + "." + descriptor.name;
  if (field.scope == Scope::per_class_and_pass)
    descriptor.name += "." + workloads::pass_name(workloads::all_passes[pass]);
  descriptor.lower = field.lower;
  descriptor.upper = field.upper;
  descriptor.log_scale = field.log_scale;
  descriptor.prior = field.prior(layer_class);
  descriptor.layer_class = layer_class;
  descriptor.pass = pass;
  descriptor.unit = field.unit;
  ModelParameters located{ModelParameters::AllZero{}};  // any instance: the offset is the same in all
  descriptor.offset =
      static_cast<std::size_t>(reinterpret_cast<unsigned char*>(&field.member(located, layer_class, pass)) -
                               reinterpret_cast<unsigned char*>(&located));
  descriptor.identifiable = field.identifiable;
  return descriptor;
}

std::vector<ParameterDescriptor> make_table() {
  std::vector<ParameterDescriptor> table;
  for (int index = 0; index < layer_class_count; ++index) {
    const auto layer_class = static_cast<LayerClass>(index);
    for (const Field& field : fields) {
      if (field.scope == Scope::per_class_and_pass)
        for (int pass = 0; pass < pass_count; ++pass) table.push_back(expand(field, layer_class, pass));
      if (field.scope == Scope::per_class) table.push_back(expand(field, layer_class, -1));
    }
  }
  for (const Field& field : fields)
    if (field.scope == Scope::global) table.push_back(expand(field, LayerClass::count_, -1));
  return table;
}

}  // namespace

const std::vector<ParameterDescriptor>& parameter_table() {
  static const std::vector<ParameterDescriptor> table = make_table();
  return table;
}

ModelParameters::ModelParameters() {
  for (const ParameterDescriptor& descriptor : parameter_table()) descriptor.value_in(*this) = descriptor.prior;
}

std::vector<double> flatten(const ModelParameters& parameters) {
  std::vector<double> values;
  values.reserve(parameter_table().size());
  for (const ParameterDescriptor& descriptor : parameter_table()) values.push_back(descriptor.value_in(parameters));
  return values;
}

ModelParameters unflatten(const std::vector<double>& values) {
  ModelParameters parameters{ModelParameters::AllZero{}};
  const auto& table = parameter_table();
  for (std::size_t index = 0; index < table.size(); ++index) table[index].value_in(parameters) = values[index];
  return parameters;
}

int parameter_index(const std::string& name) {
  static const std::unordered_map<std::string, int> by_name = [] {
    std::unordered_map<std::string, int> map;
    const auto& table = parameter_table();
    for (std::size_t index = 0; index < table.size(); ++index) map.emplace(table[index].name, static_cast<int>(index));
    return map;
  }();
  const auto found = by_name.find(name);
  return found == by_name.end() ? -1 : found->second;
}

}  // namespace dnntune::model
