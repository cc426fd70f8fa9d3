// model/stragglers.cpp — see stragglers.hpp.
#include "model/stragglers.hpp"

#include <algorithm>
#include <cmath>

#include "model/anchors.hpp"

namespace dnntune::model {
namespace {

// Phi^-1(p) for 0.5 <= p < 1, by Acklam's rational approximation (relative error below 1.2e-9).
double standard_normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  if (p > 0.97575) {  // the tail
    const double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

// What one HPC node's step time spreads by against its peers, as a fraction of the step. Noise
// on each node (OS daemons, interrupts: Petrini, Kerbyson and Pakin, SC 2003, "The case of the
// missing supercomputer performance"; Hoefler, Schneider and Lumsdaine, SC 2010, "Characterizing
// the influence of system noise on large-scale applications by simulation") is absorbed by the
// slowest process at every synchronisation, so its cost grows with the node count; and chips of
// one model run compute-bound kernels at different speeds (Acun, Miller and Kale, ICS 2016,
// "Variation among processors under Turbo Boost in HPC systems": up to 16% between the fastest and
// slowest processors of Edison, Cab and Stampede with Turbo Boost, under 1% on Blue Waters
// without it). Read as a standard deviation, a range over thousands of processors spans about 6.5
// of them (2 E[max of 1000 normals]): 16% is 2.5%, 1% is 0.15%. Neither end is a typical node, so
// the prior is their geometric middle, 0.6%, with the two ends as its range.
constexpr double spec_spread_low = 0.0015, spec_spread_high = 0.025, spec_spread_value = 0.006;

}  // namespace

StepSpread spec_node_step_spread() {
  StepSpread spread;
  spread.coefficient_of_variation = spec_spread_value;
  spread.coefficient_of_variation_low = spec_spread_low;
  spread.coefficient_of_variation_high = spec_spread_high;
  spread.source =
      "spec node, not measured: prior 0.6% of the step (range 0.15% to 2.5%) from published HPC node variation "
      "(Acun et al., ICS 2016: up to 16% between the processors of Turbo Boost systems, under 1% without; "
      "OS noise: Petrini et al., SC 2003; Hoefler et al., SC 2010)";
  return spread;
}

double expected_maximum_of_standard_normals(int count) {
  if (count <= 1) return 0;
  return standard_normal_quantile((count - 0.375) / (count + 0.25));
}

StepSpread step_spread(const std::vector<Anchor>& anchors, const std::string& network) {
  const AnchorMedian median = median_over_anchors(anchors, network, [](const Anchor& anchor) -> std::optional<double> {
    // One timed step has no spread; a spread that is not a finite fraction is no measurement.
    const double cv = anchor.iteration_coefficient_of_variation;
    if (anchor.steps < 2 || !std::isfinite(cv) || cv < 0) return std::nullopt;
    return cv;
  });
  StepSpread spread;
  if (median.anchors == 0) {
    spread.source = "not measured (no anchor of 2 or more timed steps): no straggler term";
    return spread;
  }
  spread.coefficient_of_variation = median.value;
  spread.coefficient_of_variation_low = spread.coefficient_of_variation_high = median.value;
  spread.anchors = static_cast<int>(median.anchors);
  spread.source = "median step spread of " + std::to_string(median.anchors) + " anchor" +
                  (median.anchors == 1 ? "" : "s") +
                  (median.own ? " of " + network : " of other networks on this node");
  return spread;
}

double straggler_seconds(double step_seconds, const StepSpread& spread, int nodes) {
  if (!(step_seconds > 0) || !(spread.coefficient_of_variation > 0)) return 0;
  return step_seconds * spread.coefficient_of_variation * expected_maximum_of_standard_normals(nodes);
}

}  // namespace dnntune::model
