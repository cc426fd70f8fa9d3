// model/parameters.hpp — the fitted parameters of the layer cost model, by layer class, and
// their flat form for the optimiser: every parameter has a name, bounds and a prior value that
// is used when the data cannot identify it (it is then "pinned", and reported as such).
#pragma once

#include <string>
#include <vector>

#include "model/layer_class.hpp"

namespace dnntune::model {

struct ClassParameters {
  double efficiency[pass_count] = {0.3, 0.3, 0.3};  // fraction of the FMA peak, one core, per pass
  double overhead_seconds[pass_count] = {5e-6, 5e-6, 5e-6};  // per call: dispatch, set-up
  double contention = 0.05;  // USL s: serial fraction as threads are added
  double coherency = 0.0;    // USL c: cross-thread coherency cost (needs >= 3 thread counts)
  double smt_gain = 0.1;     // extra throughput from a core's SMT siblings (negative: they hurt)
  double corun_slowdown = 0.05;  // compute slow-down per extra co-running process (shared caches)
};

struct ModelParameters {
  ClassParameters classes[layer_class_count];
  double bandwidth_efficiency = 0.8;  // share of the STREAM triad bandwidth a kernel streams at
  double smooth_max_exponent = 3.0;   // g in (Tc^g + Tm^g)^(1/g): 1 = sum, large = max

  // The priors (what a parameter the data cannot identify keeps): the defaults above, but for
  // libtorch's own convolution kernel, which reached 2-3% of the FMA peak where it was measured.
  ModelParameters() {
    for (double& efficiency : of(LayerClass::conv_native).efficiency) efficiency = 0.03;
  }

  const ClassParameters& of(LayerClass layer_class) const { return classes[static_cast<int>(layer_class)]; }
  ClassParameters& of(LayerClass layer_class) { return classes[static_cast<int>(layer_class)]; }
};

// What one flat parameter is. The optimiser works on log(value) for log_scale parameters.
struct ParameterInfo {
  std::string name;  // "conv_spatial.efficiency.forward", "bandwidth_efficiency", ...
  double lower;
  double upper;
  bool log_scale;
  LayerClass layer_class;  // count_ for the global parameters
};

// The flat layout: per class efficiency x3, overhead x3, contention, coherency, smt_gain,
// corun_slowdown; then bandwidth_efficiency and smooth_max_exponent.
const std::vector<ParameterInfo>& parameter_table();
std::vector<double> flatten(const ModelParameters& parameters);
ModelParameters unflatten(const std::vector<double>& values);

// Index of the parameter called `name` in parameter_table(), or -1.
int parameter_index(const std::string& name);

}  // namespace dnntune::model
