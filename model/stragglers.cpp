// model/stragglers.cpp — see stragglers.hpp.
#include "model/stragglers.hpp"

#include <algorithm>
#include <cmath>

#include "model/anchors.hpp"

namespace dnntune::model {
namespace {

// Phi^-1(p) for 0.5 <= p < 1, by Acklam's rational approximation (relative error below 1.2e-9).
double standard_normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
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

}  // namespace

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
  spread.anchors = static_cast<int>(median.anchors);
  spread.source = "median step spread of " + std::to_string(median.anchors) + " anchor" +
                  (median.anchors == 1 ? "" : "s") + (median.own ? " of " + network : " of other networks on this node");
  return spread;
}

double straggler_seconds(double step_seconds, const StepSpread& spread, int nodes) {
  if (!(step_seconds > 0) || !(spread.coefficient_of_variation > 0)) return 0;
  return step_seconds * spread.coefficient_of_variation * expected_maximum_of_standard_normals(nodes);
}

}  // namespace dnntune::model
