// model/parameters.hpp — the fitted parameters of the layer cost model, by layer class, and the
// one table that describes them. Every parameter has one row in parameter_table(): its name,
// where it lives in ModelParameters, bounds, prior (what it keeps when the data cannot identify
// it: it is then "pinned", and reported as such), the rule that says which measurements
// identify it, and its unit. The optimiser's flat vector (flatten / unflatten), the fit's
// bounds and identifiability, the fit report and the calibration file all derive from it, so
// a new cost term adds its member to the struct and its row to the table (parameters.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "model/layer_class.hpp"

namespace dnntune::model {

// Values only: priors and bounds are in the table. The terms they enter are in layer_time.hpp.
struct ClassParameters {
  double efficiency[pass_count] = {};        // fraction of the FMA peak, one core, per pass
  double overhead_seconds[pass_count] = {};  // per call: dispatch, set-up
  double contention = 0;                     // USL s: serial fraction as threads are added
  double coherency = 0;                      // USL c: cross-thread coherency cost (needs >= 3 thread counts)
  double smt_gain = 0;                       // extra throughput from a core's SMT siblings (negative: they hurt)
  double corun_slowdown = 0;                 // compute slow-down per extra co-running process (shared caches)
};

struct ModelParameters {
  ClassParameters classes[layer_class_count];
  double bandwidth_efficiency = 0;  // share of the STREAM triad bandwidth a kernel streams at
  double smooth_max_exponent = 0;   // g in (Tc^g + Tm^g)^(1/g): 1 = sum, large = max
  // What a process's threads cost on a node the calibration never ran on (layer_time.hpp). No
  // micro-run on one package measures them, so every fit keeps their priors, at which they cost
  // nothing; a spec answer sets them from published figures (model/spec_priors.cpp).
  double fork_join_seconds_per_doubling = 0;  // a parallel region's barrier, per doubling of threads
  double cross_package_bandwidth_ratio = 0;   // remote over local DRAM bandwidth (1: no penalty)
  double work_item_channels = 0;              // channels in one thread's work item (0: no imbalance)

  ModelParameters();  // every parameter at its prior
  struct AllZero {};
  explicit ModelParameters(AllZero) {}  // for code that sets every parameter (unflatten)

  const ClassParameters& of(LayerClass layer_class) const { return classes[static_cast<int>(layer_class)]; }
  ClassParameters& of(LayerClass layer_class) { return classes[static_cast<int>(layer_class)]; }
};

// What a set of layer measurements shows about one class: the evidence identifiability rules
// read (model/fit.cpp gathers it from the samples).
struct ClassEvidence {
  bool measured_in_pass[pass_count] = {};
  int core_counts = 0;      // distinct thread counts measured without SMT
  bool with_smt = false;    // measured with threads on SMT siblings
  bool co_running = false;  // measured with more than one process on the package
};
struct FitEvidence {
  int samples = 0;
  ClassEvidence classes[layer_class_count];
  const ClassEvidence& of(LayerClass layer_class) const { return classes[static_cast<int>(layer_class)]; }
  ClassEvidence& of(LayerClass layer_class) { return classes[static_cast<int>(layer_class)]; }
};

// One flat parameter. The optimiser works on log(value) for log_scale parameters.
struct ParameterDescriptor {
  std::string name;  // "conv_spatial.efficiency.forward", "bandwidth_efficiency", ...
  double lower = 0;
  double upper = 0;
  bool log_scale = false;
  double prior = 0;
  LayerClass layer_class = LayerClass::count_;  // count_ for the global parameters
  int pass = -1;                                // pass_index() for per-pass parameters, else -1
  std::string unit;                             // "of FMA peak", "s", ... (for reports)
  // Where the value lives: its byte offset in ModelParameters (taken from the table's member
  // accessor once, so that the fit's unflatten, called per objective evaluation, is plain stores).
  std::size_t offset = 0;
  // Whether `evidence` can identify it (else it is pinned at its prior).
  bool (*identifiable)(const FitEvidence& evidence, LayerClass layer_class, int pass) = nullptr;

  double& value_in(ModelParameters& parameters) const {
    return *reinterpret_cast<double*>(reinterpret_cast<unsigned char*>(&parameters) + offset);
  }
  double value_in(const ModelParameters& parameters) const {
    return *reinterpret_cast<const double*>(reinterpret_cast<const unsigned char*>(&parameters) + offset);
  }
  bool identifiable_from(const FitEvidence& evidence) const { return identifiable(evidence, layer_class, pass); }
};
static_assert(std::is_standard_layout_v<ModelParameters>, "parameters are addressed by their offset");

// The flat layout: per class efficiency x3, overhead x3, contention, coherency, smt_gain,
// corun_slowdown; then bandwidth_efficiency, smooth_max_exponent and the three node terms. Bootstrap replicates and
// the fit's coordinates are in this order.
const std::vector<ParameterDescriptor>& parameter_table();
std::vector<double> flatten(const ModelParameters& parameters);
ModelParameters unflatten(const std::vector<double>& values);

// Index of the parameter called `name` in parameter_table(), or -1.
int parameter_index(const std::string& name);

}  // namespace dnntune::model
