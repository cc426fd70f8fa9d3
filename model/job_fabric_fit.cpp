// model/job_fabric_fit.cpp — see job_fabric_fit.hpp.
#include "model/job_fabric_fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <nlopt.hpp>

#include "common/statistics.hpp"
#include "common/text_format.hpp"
#include "model/communication.hpp"
#include "model/plausibility.hpp"
#include "records/record_bounds.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::model {
namespace {

// The latencies a fit may give, per ring step: 10 ns (none to speak of) to 0.1 s (no network
// the jobs could have finished over is slower).
constexpr double least_latency_seconds = 1e-8, most_latency_seconds = 0.1;
// The most jobs of one fabric a fit reads: the latest ones (each costs a prediction per trial link).
constexpr std::size_t max_jobs_per_fabric = 16;
// A job whose steps spread more than this (coefficient of variation) ran no steady step to fit.
constexpr double most_step_spread = 1.0;

// One multi-node job as the fit reads it.
struct JobPoint {
  const records::Measurement* job = nullptr;
  std::shared_ptr<const workloads::Network> network;
  TrainingConfiguration configuration;  // over its nodes
  double one_node_seconds = 0;          // the step on one node: a one-node job's, else the model's
  double model_one_node_seconds = 0;    // the model's one-node prediction (the excess's base)
  bool one_node_from_job = false;
};

using SetupKey = std::tuple<std::string, std::int64_t, int, int, bool, std::string>;
SetupKey setup_key(const records::Measurement& job) {
  return {job.network, job.batch, job.processes, job.threads, job.smt, job.allocator};
}

std::string job_name(const records::Measurement& job) {
  return "job " + job.job.id + " (" + job.network + ", " + std::to_string(job.nodes) + " nodes, " +
         job.timestamp.substr(0, 10) + ")";
}

// Why a multi-node job cannot be fitted ("" : it can).
std::string refusal(const records::Measurement& job, const workloads::Network* network,
                    const records::MachineProfile& machine) {
  const std::size_t ranks = static_cast<std::size_t>(job.processes) * static_cast<std::size_t>(job.nodes);
  if (job.job.rank_median_seconds.size() != ranks)
    return "it claims " + std::to_string(job.nodes) + " nodes x " + std::to_string(job.processes) +
           " processes but holds " + std::to_string(job.job.rank_median_seconds.size()) + " ranks' times";
  if (job.job.fabric.empty())
    return "it names no fabric (the launch line's DNNTUNE_FABRIC): its communication fits no fabric's terms";
  if (auto preset = fabric_preset(job.job.fabric); !preset) return preset.error().message;
  if (!(job.coefficient_of_variation >= 0) || job.coefficient_of_variation > most_step_spread)
    return "its steps spread " + format_fixed(100 * job.coefficient_of_variation, 0) +
           "% (coefficient of variation): no steady step to fit";
  if (network == nullptr) return "its network " + job.network + " cannot be loaded";
  if (auto plausible = check_measured_step(*network, job.batch, job.processes, job.threads, job.median_seconds, machine,
                                           "its record", "median_seconds");
      !plausible)
    return plausible.error().message;
  return "";
}

double log_error(double predicted, double observed) {
  return predicted > 0 ? std::log(predicted / observed) : std::numeric_limits<double>::infinity();
}

// One-node step + the excess `trial` predicts over the job's nodes.
double fitted_step(const Predictor& trial, const JobPoint& point) {
  auto over_nodes = trial.predict(*point.network, point.configuration, false);
  if (!over_nodes) return std::numeric_limits<double>::quiet_NaN();
  return point.one_node_seconds + over_nodes->iteration_seconds - point.model_one_node_seconds;
}

double log_rms(const Predictor& trial, const std::vector<JobPoint>& points) {
  double sum = 0;
  for (const JobPoint& point : points) {
    const double error = log_error(fitted_step(trial, point), point.job->median_seconds);
    sum += std::isfinite(error) ? error * error : 1e6;
  }
  return std::sqrt(sum / static_cast<double>(points.size()));
}

struct GridBox {
  double low_x, high_x, low_y, high_y;  // log10 bandwidth (GB/s), log10 latency (s)
};

// The minimum of `cost` over the box: the best of a coarse grid, polished by Nelder-Mead within the
// box (the error's valley runs along latency against bandwidth, which a grid alone follows badly).
std::pair<double, double> box_minimum(const std::function<double(double, double)>& cost, const GridBox& box,
                                      bool vary_y) {
  constexpr int points = 25;
  const double step_x = (box.high_x - box.low_x) / (points - 1);
  const double step_y = vary_y ? (box.high_y - box.low_y) / (points - 1) : 0;
  std::vector<double> best{box.low_x, box.low_y};
  double best_cost = std::numeric_limits<double>::infinity();
  for (int i = 0; i < points; ++i)
    for (int j = 0; j < (vary_y ? points : 1); ++j) {
      const double x = box.low_x + i * step_x, y = box.low_y + j * step_y;
      if (const double value = cost(x, y); value < best_cost) best_cost = value, best = {x, y};
    }
  const double fixed_y = best[1];
  using Objective = std::function<double(const std::vector<double>&)>;
  Objective objective = [&](const std::vector<double>& at) {
    const double value = cost(at[0], vary_y ? at[1] : fixed_y);
    return std::isfinite(value) ? value : 1e300;
  };
  const unsigned dimension = vary_y ? 2 : 1;
  nlopt::opt optimiser(nlopt::LN_NELDERMEAD, dimension);
  optimiser.set_lower_bounds(vary_y ? std::vector<double>{box.low_x, box.low_y} : std::vector<double>{box.low_x});
  optimiser.set_upper_bounds(vary_y ? std::vector<double>{box.high_x, box.high_y} : std::vector<double>{box.high_x});
  optimiser.set_initial_step(vary_y ? std::vector<double>{step_x / 2, step_y / 2} : std::vector<double>{step_x / 2});
  optimiser.set_xtol_abs(1e-5);
  optimiser.set_maxeval(400);
  optimiser.set_min_objective([](const std::vector<double>& x, std::vector<double>&,
                                 void* data) { return (*static_cast<Objective*>(data))(x); },
                              &objective);
  std::vector<double> polished(best.begin(), best.begin() + dimension);
  double polished_cost = best_cost;
  try {
    optimiser.optimize(polished, polished_cost);
  } catch (const std::exception&) {  // NLopt's roundoff-limited stop: the grid's best stands
    return {best[0], best[1]};
  }
  if (!(polished_cost <= best_cost)) return {best[0], best[1]};
  return {polished[0], vary_y ? polished[1] : fixed_y};
}

std::string node_counts_text(const std::vector<JobPoint>& points) {
  std::set<int> counts;
  for (const JobPoint& point : points) counts.insert(point.configuration.nodes);
  std::string text;
  std::size_t index = 0;
  for (const int count : counts) {
    text += (index == 0 ? "" : index + 1 == counts.size() ? " and " : ", ") + std::to_string(count);
    ++index;
  }
  return text + " nodes";
}

std::string ids_text(const std::vector<std::string>& ids) {
  std::string text;
  for (std::size_t index = 0; index < ids.size() && index < 3; ++index) text += (index ? ", " : "") + ids[index];
  if (ids.size() > 3) text += " and " + std::to_string(ids.size() - 3) + " more";
  return text;
}

// The fit of one fabric's points; a refusal (why) when it lands on the edge of what links are.
Expected<FabricFit> fit_fabric(const Predictor& predictor, const std::string& fabric,
                               const std::vector<JobPoint>& points) {
  auto before_link = predictor.inter_node_link(fabric);
  if (!before_link) return before_link.error();
  std::vector<double> spreads;
  std::set<std::tuple<SetupKey, int>> settings;
  FabricFit fit;
  fit.fabric = fabric;
  for (const JobPoint& point : points) {
    spreads.push_back(point.job->coefficient_of_variation);
    settings.insert({setup_key(*point.job), point.configuration.nodes});
    fit.job_ids.push_back(point.job->job.id);
  }
  const std::string last_day = points.back().job->timestamp.substr(0, 10);
  const std::string jobs_text = std::to_string(points.size()) + (points.size() == 1 ? " job" : " jobs") +
                                " of yours on " + fabric + " (" + node_counts_text(points) + ", the last " + last_day +
                                ": " + ids_text(fit.job_ids) + ")";
  FabricTerms& terms = fit.terms;
  terms.spread = {median(spreads), static_cast<int>(points.size()), "the median spread of the steps of " + jobs_text,
                  median(spreads), median(spreads)};
  fit.log_rms_before = log_rms(predictor, points);  // the link and spread the model had for the fabric

  const bool fit_latency = settings.size() >= 2;
  Predictor trial = predictor;
  const auto cost = [&](double log_bandwidth, double log_latency) {
    trial.set_fabric_terms(fabric,
                           {{std::pow(10.0, log_latency), std::pow(10.0, log_bandwidth), true, ""}, terms.spread, ""});
    return log_rms(trial, points);
  };
  // No faster than the fabric's line rate: jobs that ran as if over a faster link say the one-node
  // model is off, not the link.
  auto line_rate = fabric_line_rate_gbs(fabric);
  if (!line_rate) return line_rate.error();
  const records::PhysicalRange& range = records::inter_node_bandwidth_gbs_range;
  const double most_bandwidth_gbs = std::min(range.high, *line_rate);
  const GridBox box{std::log10(range.low), std::log10(most_bandwidth_gbs),
                    fit_latency ? std::log10(least_latency_seconds)
                                : std::log10(std::max(before_link->latency_seconds, least_latency_seconds)),
                    std::log10(most_latency_seconds)};
  const auto [log_bandwidth, log_latency] = box_minimum(cost, box, fit_latency);
  const double edge = 0.01;  // log10 units: within 2.3% of a bound
  if (most_bandwidth_gbs < range.high && box.high_x - log_bandwidth < edge)
    return bad_input("the jobs of yours on " + fabric + " ran as if over a link faster than its line rate (" +
                     format_fixed(most_bandwidth_gbs, 3) +
                     " GB/s): the model of one node's step is off, not the link: not fitted");
  if (log_bandwidth - box.low_x < edge || box.high_x - log_bandwidth < edge || box.high_y - log_latency < edge)
    return bad_input("the jobs of yours on " + fabric + " give a link at the edge of what links can be (" +
                     format_fixed(std::pow(10.0, log_bandwidth), 4) + " GB/s, " +
                     format_fixed(std::pow(10.0, log_latency) * 1e3, 3) + " ms per ring step; " + range.unit +
                     " spans " + format_fixed(range.low, 2) + "-" + format_fixed(range.high, 0) +
                     "): a multi-node job no slower than one node's, or far slower than any network: not fitted");
  terms.inter_node = {std::pow(10.0, log_latency), std::pow(10.0, log_bandwidth), true, ""};
  fit.log_rms_after = cost(log_bandwidth, log_latency);
  const auto percent = [](double log_rms) { return format_fixed(100 * (std::exp(log_rms) - 1), 0) + "%"; };
  terms.source = jobs_text + ": " + format_fixed(terms.inter_node.bandwidth_gbs, 4) + " GB/s, " +
                 format_fixed(terms.inter_node.latency_seconds * 1e3, 3) + " ms per ring step" +
                 (fit_latency ? "" : " (the fabric's: one setting cannot tell latency from bandwidth)") +
                 ", step spread " + format_fixed(100 * terms.spread.coefficient_of_variation, 1) +
                 "%; their steps off by " + percent(fit.log_rms_before) + " with " + before_link->source + ", " +
                 percent(fit.log_rms_after) + " fitted";
  terms.inter_node.source = terms.source;
  return fit;
}

}  // namespace

FabricFits fit_fabrics_from_jobs(const Predictor& predictor, const std::vector<records::Measurement>& jobs) {
  FabricFits result;
  std::map<std::string, std::shared_ptr<const workloads::Network>> networks;
  const auto network_of = [&](const std::string& name) -> std::shared_ptr<const workloads::Network> {
    auto& slot = networks[name];
    if (!slot)
      if (auto loaded = workloads::load_network(name)) slot = std::make_shared<const workloads::Network>(*loaded);
    return slot;
  };
  std::map<SetupKey, std::vector<double>> one_node_steps;
  std::vector<const records::Measurement*> multi_node;
  for (const records::Measurement& job : jobs) {
    if (job.kind != records::MeasurementKind::job || job.backend != predictor.backend() || job.job.device != "cpu" ||
        !(job.median_seconds > 0))
      continue;
    if (job.nodes == 1)
      one_node_steps[setup_key(job)].push_back(job.median_seconds);
    else
      multi_node.push_back(&job);
  }
  std::map<std::string, std::vector<JobPoint>> by_fabric;
  for (const records::Measurement* job : multi_node) {
    const auto network = network_of(job->network);
    if (const std::string why = refusal(*job, network.get(), predictor.machine()); !why.empty()) {
      result.not_fitted.push_back(job_name(*job) + " is not fitted: " + why);
      continue;
    }
    JobPoint point{job, network, {}, 0, 0, false};
    TrainingConfiguration& c = point.configuration;
    c.batch_per_process = job->batch;
    c.processes_per_node = job->processes;
    c.threads_per_process = job->threads;
    c.smt = job->smt;
    c.fabric = job->job.fabric;
    if (job->bucket_megabytes > 0) c.fusion_bytes = job->bucket_megabytes * 1024 * 1024;  // DDP's bucket
    TrainingConfiguration one_node = c;
    one_node.nodes = 1;
    c.nodes = job->nodes;
    auto model_one_node = predictor.predict(*network, one_node, false);
    if (!model_one_node) {
      result.not_fitted.push_back(job_name(*job) + " is not fitted: " + model_one_node.error().message);
      continue;
    }
    point.model_one_node_seconds = model_one_node->iteration_seconds;
    const auto measured = one_node_steps.find(setup_key(*job));
    point.one_node_from_job = measured != one_node_steps.end();
    point.one_node_seconds = point.one_node_from_job ? median(measured->second) : point.model_one_node_seconds;
    by_fabric[c.fabric].push_back(std::move(point));
  }
  for (auto& [fabric, points] : by_fabric) {
    // The latest jobs only: a fit's cost grows with them, and a fabric's old jobs may predate a change.
    if (points.size() > max_jobs_per_fabric)
      points.erase(points.begin(), points.end() - static_cast<std::ptrdiff_t>(max_jobs_per_fabric));
    auto fit = fit_fabric(predictor, fabric, points);
    if (fit)
      result.fits.push_back(std::move(*fit));
    else
      result.not_fitted.push_back(fit.error().message);
  }
  return result;
}

Predictor with_fabric_fits(Predictor predictor, const FabricFits& fits) {
  for (const FabricFit& fit : fits.fits) predictor.set_fabric_terms(fit.fabric, fit.terms);
  return predictor;
}

}  // namespace dnntune::model
