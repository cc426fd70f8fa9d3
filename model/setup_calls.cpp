// model/setup_calls.cpp — see setup_calls.hpp.
#include "model/setup_calls.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/statistics.hpp"

namespace dnntune::model {

double setup_run_log_sd(const MeasuredSetup& setup) {
  if (setup.iteration_seconds.size() < 2) return 0;
  std::vector<double> logs;
  for (const double seconds : setup.iteration_seconds) logs.push_back(std::log(seconds));
  const double spread = sample_standard_deviation(logs);
  return std::isfinite(spread) ? spread : 0;
}

SetupCall compare_setups(const MeasuredSetup& a, const MeasuredSetup& b, double floor_log_sd) {
  const double sd = std::max({floor_log_sd, setup_run_log_sd(a), setup_run_log_sd(b)});
  const double runs_a = static_cast<double>(std::max<std::size_t>(1, a.iteration_seconds.size()));
  const double runs_b = static_cast<double>(std::max<std::size_t>(1, b.iteration_seconds.size()));
  SetupCall call;
  call.apart_log = std::abs(std::log(a.images_per_second() / b.images_per_second()));
  call.half_width_log = z_90_percent * sd * std::sqrt(1 / runs_a + 1 / runs_b);
  return call;
}

}  // namespace dnntune::model
