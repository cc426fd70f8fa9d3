// model/allocation.cpp — see allocation.hpp.
#include "model/allocation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "common/statistics.hpp"
#include "model/anchors.hpp"

namespace dnntune::model {

using nlohmann::json;

namespace {

constexpr double page_bytes = 4096;

}  // namespace

bool valid_allocator_name(const std::string& name) {
  return !name.empty() && name.size() <= 32 &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
}

AllocatorFit allocator_prior(const std::string& name) {
  // glibc keeping all freed memory maps nothing fresh after the first step; of the others
  // nothing is known before measuring (each can be the slowest on some machine: see
  // docs/results.md, "The allocator"), so the prior spans never to always.
  if (name == reference_allocator) return {name, 0, 0, 0, 0};
  return {name, 0.5, 0, 1, 0};
}

bool AllocationModel::fitted_at(const std::string& name, int threads) const {
  return threads > 0 && std::any_of(variants.begin(), variants.end(), [&](const AllocatorFit& fit) {
           return fit.name == name && fit.threads == threads;
         });
}

bool AllocationModel::measured_at(const std::string& name, int threads) const {
  if (fitted_at(name, threads)) return true;
  const bool pooled = std::any_of(variants.begin(), variants.end(), [&](const AllocatorFit& fit) {
    return fit.name == name && fit.threads == 0 && fit.anchors > 0;
  });
  return pooled && paired_threads.size() == 1 && paired_threads.front() == threads;
}

AllocatorFit AllocationModel::variant(const std::string& name, int threads) const {
  const int at = fitted_at(name, threads) && fitted_at("default", threads) ? threads : 0;
  for (const AllocatorFit& fit : variants)
    if (fit.name == name && fit.threads == at) return fit;
  return allocator_prior(name);
}

std::optional<AllocationModel> prior_allocation(const records::MachineProfile& machine) {
  const auto& one = machine.performance.first_touch_ns_per_page;
  const auto& all = machine.performance.first_touch_ns_per_page_all_cores;
  if (!one || !(one->value > 0) || !std::isfinite(one->value)) return std::nullopt;
  AllocationModel model;
  model.fault_ns_per_page = one->value;
  model.fault_ns_per_page_all_cores = all && all->value > 0 && std::isfinite(all->value) ? all->value : one->value;
  return model;
}

double fresh_bytes_per_step(const workloads::Network& network, std::int64_t batch) {
  using workloads::LayerKind;
  const double bytes_per_value = 4;  // fp32
  double values = 0;
  for (const workloads::Layer& layer : network.layers) {
    const LayerKind kind = layer.spec.kind;
    if (kind == LayerKind::input) continue;
    values += static_cast<double>(layer.parameters);  // its weight gradients (the trainer drops them each step)
    if (kind == LayerKind::flatten) continue;         // a view
    values += static_cast<double>(layer.output.elements()) * static_cast<double>(batch);
    // Add and concat hand the gradient (or slices of it) on: nothing new (workloads/costs.hpp).
    if (!layer.computes_data_gradient || kind == LayerKind::add || kind == LayerKind::concat) continue;
    for (const int input : layer.inputs)
      values += static_cast<double>(network.layers[static_cast<std::size_t>(input)].output.elements()) *
                static_cast<double>(batch);
  }
  return values * bytes_per_value;
}

double fault_seconds_per_byte(const AllocationModel& model, int threads, int processes) {
  threads = std::max(1, threads);
  // A process's threads write its buffers, and so fault them in, in parallel.
  const double ns_per_page =
      threads * std::max(1, processes) == 1 ? model.fault_ns_per_page : model.fault_ns_per_page_all_cores;
  return ns_per_page * 1e-9 / page_bytes / threads;
}

double allocation_seconds(const AllocationModel& model, const std::string& allocator, double fresh_bytes, int threads,
                          int processes) {
  return fresh_bytes * fault_seconds_per_byte(model, threads, processes) * model.variant(allocator, threads).non_reuse;
}

Expected<AllocationModel> fit_allocation(const std::vector<AllocatorAnchor>& anchors, double fault_ns_per_page,
                                         double fault_ns_per_page_all_cores) {
  if (!(fault_ns_per_page > 0) || !(fault_ns_per_page_all_cores > 0) || !std::isfinite(fault_ns_per_page) ||
      !std::isfinite(fault_ns_per_page_all_cores))
    return bad_input("the allocation term needs a positive first-touch fault cost (dnntune probe measures it)");
  AllocationModel model;
  model.fault_ns_per_page = fault_ns_per_page;
  model.fault_ns_per_page_all_cores = fault_ns_per_page_all_cores;
  const auto same_run = [](const AllocatorAnchor& a, const AllocatorAnchor& b) {
    return a.network == b.network && a.batch == b.batch && a.threads == b.threads && a.smt == b.smt &&
           a.processes == b.processes;
  };
  // Per variant (and per variant and thread count): each anchor's estimate, its standard
  // deviation, and that of its own step alone.
  struct Estimate {
    double value, sd, own_sd;
    int threads;
  };
  std::map<std::string, std::vector<Estimate>> estimates;
  std::vector<Estimate> reference_estimates;  // the reference's own spread, in the units of each pair
  std::map<int, int> reference_anchors;       // per thread count
  for (const AllocatorAnchor& reference : anchors)
    if (reference.allocator == reference_allocator) ++reference_anchors[reference.threads];
  for (const AllocatorAnchor& anchor : anchors) {
    if (anchor.allocator == reference_allocator || !(anchor.fresh_bytes > 0)) continue;
    const auto reference = std::find_if(anchors.begin(), anchors.end(), [&](const AllocatorAnchor& candidate) {
      return candidate.allocator == reference_allocator && same_run(candidate, anchor);
    });
    if (reference == anchors.end()) continue;
    const double seconds_per_unit =
        anchor.fresh_bytes * fault_seconds_per_byte(model, anchor.threads, anchor.processes);
    const double difference = anchor.iteration_seconds - reference->iteration_seconds;
    const double spread = std::hypot(anchor.iteration_spread_seconds, reference->iteration_spread_seconds);
    estimates[anchor.allocator].push_back({difference / seconds_per_unit, spread / seconds_per_unit,
                                           anchor.iteration_spread_seconds / seconds_per_unit, anchor.threads});
    reference_estimates.push_back({0, 0, reference->iteration_spread_seconds / seconds_per_unit, anchor.threads});
  }
  // The standard deviation of a mean of k estimates with these standard deviations.
  const auto sd_of_mean = [](const std::vector<double>& sds) {
    const double k = static_cast<double>(sds.size());
    double variance = 0;
    for (const double sd : sds) variance += sd * sd / (k * k);
    return std::sqrt(variance);
  };
  // The estimates at `threads` per process (0: all of them).
  const auto at = [](const std::vector<Estimate>& list, int threads) {
    std::vector<Estimate> kept;
    for (const Estimate& estimate : list)
      if (threads == 0 || estimate.threads == threads) kept.push_back(estimate);
    return kept;
  };
  const auto fit_of = [&](const std::string& name, const std::vector<Estimate>& list, int threads) {
    const double k = static_cast<double>(list.size());
    double mean = 0;
    std::vector<double> sds, own_sds;
    for (const Estimate& estimate : list) {
      mean += estimate.value / k;
      sds.push_back(estimate.sd);
      own_sds.push_back(estimate.own_sd);
    }
    // Anchors at several batches or settings that disagree widen the band too.
    double scatter = 0;
    for (const Estimate& estimate : list) scatter += (estimate.value - mean) * (estimate.value - mean);
    const double disagreement = list.size() > 1 ? scatter / (k - 1) / k : 0;
    const double sd = std::sqrt(std::pow(sd_of_mean(sds), 2) + disagreement);
    AllocatorFit fit{name, mean, mean - z_90_percent * sd, mean + z_90_percent * sd, static_cast<int>(list.size())};
    fit.own_sd = std::sqrt(std::pow(sd_of_mean(own_sds), 2) + disagreement);
    fit.threads = threads;
    return fit;
  };
  const auto reference_fit = [&](int threads, int count) {
    AllocatorFit reference{reference_allocator, 0, 0, 0, count};
    std::vector<double> own_sds;
    for (const Estimate& estimate : at(reference_estimates, threads)) own_sds.push_back(estimate.own_sd);
    if (!own_sds.empty()) reference.own_sd = sd_of_mean(own_sds);
    reference.threads = threads;
    return reference;
  };
  int all_reference_anchors = 0;
  for (const auto& [threads, count] : reference_anchors) all_reference_anchors += count;
  if (all_reference_anchors > 0) model.variants.push_back(reference_fit(0, all_reference_anchors));
  for (const auto& [name, list] : estimates) model.variants.push_back(fit_of(name, list, 0));
  // Per thread count, when the pairs span several.
  std::set<int> paired_threads;
  for (const Estimate& estimate : reference_estimates) paired_threads.insert(estimate.threads);
  model.paired_threads.assign(paired_threads.begin(), paired_threads.end());
  if (paired_threads.size() > 1)
    for (const int threads : paired_threads) {
      model.variants.push_back(reference_fit(threads, reference_anchors[threads]));
      for (const auto& [name, list] : estimates)
        if (auto kept = at(list, threads); !kept.empty()) model.variants.push_back(fit_of(name, kept, threads));
    }
  return model;
}

std::optional<AllocationModel> fit_allocation_from_records(const std::vector<records::Measurement>& records,
                                                           const records::MachineProfile& machine,
                                                           const std::string& backend) {
  const auto prior = prior_allocation(machine);
  if (!prior) return std::nullopt;
  const std::string fingerprint = records::fingerprint(machine);
  // The runs of one trainer, in file order, per allocator, network, batch and setting: PyTorch
  // allocates otherwise than the C++ trainer, so a variant is only ever compared with a run of its
  // own trainer. Per network, batch and setting, PyTorch's runs where it ran both glibc's defaults
  // and glibc-tuned there (a first run's variants trained by PyTorch from Python: the gain the job
  // sees), else the C++ trainer's. PyTorch's runs are also whole setups (below).
  using Key = std::tuple<std::string, std::string, std::int64_t, int, bool, int>;
  std::map<Key, std::vector<std::size_t>> cpp_runs, python_runs;
  for (std::size_t index = 0; index < records.size(); ++index) {
    const records::Measurement& record = records[index];
    if (record.kind == records::MeasurementKind::network && record.pass == "iteration" &&
        record.status == records::MeasurementStatus::ok && record.backend == backend &&
        record.machine_fingerprint == fingerprint && record.nodes == 1 && record.median_seconds > 0) {
      const Key key{record.allocator, record.network, record.batch, record.threads, record.smt, record.processes};
      if (records::trained_by_cpp_trainer(record))
        cpp_runs[key].push_back(index);
      else if (records::training_runner(record) == records::kPythonTrainer)
        python_runs[key].push_back(index);
    }
  }
  const auto with_allocator = [](Key key, const std::string& allocator) {
    std::get<0>(key) = allocator;
    return key;
  };
  std::map<Key, std::vector<std::size_t>> runs;
  for (const auto& [key, indices] : cpp_runs)
    if (!python_runs.count(with_allocator(key, reference_allocator)) ||
        !python_runs.count(with_allocator(key, "default")))
      runs[key] = indices;
  for (const auto& [key, indices] : python_runs)
    if (python_runs.count(with_allocator(key, reference_allocator)) &&
        python_runs.count(with_allocator(key, "default")))
      runs[key] = indices;
  // The newest glibc-tuned run of a setting, and of every other allocator the run nearest to it in
  // file order: the pair was trained back to back, and a small VM drifts over a minute. The newest
  // default run instead can be the last of a close call trained a minute after the pair, and its
  // drift would be read as glibc's defaults faulting in far more than the fresh bytes, widening
  // every prediction of that network (figures: docs/results.md, "Anchors").
  std::map<Key, const records::Measurement*> paired;
  for (const auto& [key, indices] : runs) {
    auto reference_key = key;
    std::get<0>(reference_key) = reference_allocator;
    const auto reference = runs.find(reference_key);
    std::size_t chosen = indices.back();
    if (reference != runs.end() && std::get<0>(key) != reference_allocator) {
      const auto distance = [&](std::size_t index) {
        const std::size_t to = reference->second.back();
        return index > to ? index - to : to - index;
      };
      chosen = *std::min_element(indices.begin(), indices.end(),
                                 [&](std::size_t a, std::size_t b) { return distance(a) < distance(b); });
    }
    paired[key] = &records[chosen];
  }
  std::vector<AllocatorAnchor> anchors;
  std::map<std::pair<std::string, std::int64_t>, double> fresh_bytes;  // per network and batch
  for (const auto& [key, record] : paired) {
    const auto& [allocator, name, batch, threads, smt, processes] = key;
    if (!fresh_bytes.count({name, batch})) {
      const auto network = trained_network(*record);
      fresh_bytes[{name, batch}] = network ? fresh_bytes_per_step(*network, batch) : 0;
    }
    // A run of one timed step shows no spread, yet its step moves between runs as any run's median
    // does: at least run_to_run_log_sd, so that a gain from two one-step anchors keeps a band.
    const double spread =
        std::max({record->coefficient_of_variation * record->median_seconds,
                  (record->max_seconds - record->min_seconds) / 2, run_to_run_log_sd * record->median_seconds});
    anchors.push_back(
        {allocator, name, batch, threads, smt, processes, record->median_seconds, spread, fresh_bytes[{name, batch}]});
  }
  auto model = fit_allocation(anchors, prior->fault_ns_per_page, prior->fault_ns_per_page_all_cores);
  if (!model || model->variants.size() < 2) return std::nullopt;  // glibc-tuned alone compares nothing
  model->pytorch_setups = measured_setups_from_records(records, machine, backend);
  return *model;
}

AllocatorPrediction predict_allocator(const AllocationModel& model, const std::string& allocator,
                                      double default_iteration_seconds, double fresh_bytes, int threads,
                                      int processes) {
  const AllocatorFit chosen = model.variant(allocator, threads), base = model.variant("default", threads);
  const double seconds_per_unit = fresh_bytes * fault_seconds_per_byte(model, threads, processes);
  // Outside the anchors' setting the term is extrapolated: a step never shrinks below a tenth of
  // the default's, whatever the difference of the fractions says.
  const auto step = [&](double non_reuse_difference) {
    return std::max(0.1 * default_iteration_seconds,
                    default_iteration_seconds + seconds_per_unit * non_reuse_difference);
  };
  AllocatorPrediction prediction;
  prediction.name = allocator;
  prediction.measured = chosen.anchors > 0 && (allocator == "default" || base.anchors > 0);
  if (allocator == "default") {
    prediction.iteration_seconds = prediction.iteration_seconds_low = prediction.iteration_seconds_high =
        default_iteration_seconds;
  } else {
    const double difference = chosen.non_reuse - base.non_reuse;
    prediction.iteration_seconds = step(difference);
    if (chosen.anchors > 0 && base.anchors > 0 && chosen.own_sd >= 0 && base.own_sd >= 0) {
      // Both against the same reference: the difference is that of their own anchors.
      const double sd = std::hypot(chosen.own_sd, base.own_sd);
      prediction.iteration_seconds_low = step(difference - z_90_percent * sd);
      prediction.iteration_seconds_high = step(difference + z_90_percent * sd);
    } else {
      prediction.iteration_seconds_low = step(chosen.low - base.high);
      prediction.iteration_seconds_high = step(chosen.high - base.low);
    }
    if (!prediction.measured) {  // a prior's band always holds no gain: it is never a reason to switch
      prediction.iteration_seconds_low = std::min(prediction.iteration_seconds_low, default_iteration_seconds);
      prediction.iteration_seconds_high = std::max(prediction.iteration_seconds_high, default_iteration_seconds);
    }
  }
  prediction.gain = default_iteration_seconds / prediction.iteration_seconds;
  prediction.gain_low = default_iteration_seconds / prediction.iteration_seconds_high;
  prediction.gain_high = default_iteration_seconds / prediction.iteration_seconds_low;
  return prediction;
}

json allocation_to_json(const AllocationModel& model) {
  json variants = json::array();
  for (const AllocatorFit& fit : model.variants) {
    json variant = {{"name", fit.name},
                    {"non_reuse", fit.non_reuse},
                    {"low", fit.low},
                    {"high", fit.high},
                    {"anchors", fit.anchors}};
    if (fit.own_sd >= 0) variant["own_sd"] = fit.own_sd;                // absent: unknown
    if (fit.threads > 0) variant["threads_per_process"] = fit.threads;  // absent: pooled
    variants.push_back(variant);
  }
  json out = {{"fault_ns_per_page", model.fault_ns_per_page},
              {"fault_ns_per_page_all_cores", model.fault_ns_per_page_all_cores},
              {"variants", variants}};
  if (!model.paired_threads.empty()) out["paired_threads"] = model.paired_threads;
  if (!model.pytorch_setups.empty()) out["pytorch_setups"] = measured_setups_to_json(model.pytorch_setups);
  return out;
}

Expected<AllocationModel> allocation_from_json(const json& in, const std::string& origin) {
  AllocationModel model;
  try {
    model.fault_ns_per_page = in.at("fault_ns_per_page").get<double>();
    model.fault_ns_per_page_all_cores = in.at("fault_ns_per_page_all_cores").get<double>();
    for (const auto& item : in.at("variants")) {
      AllocatorFit fit{item.at("name").get<std::string>(), item.at("non_reuse").get<double>(),
                       item.at("low").get<double>(), item.at("high").get<double>(), item.at("anchors").get<int>()};
      if (item.contains("own_sd")) {  // absent in calibrations written before it
        fit.own_sd = item.at("own_sd").get<double>();
        if (!(fit.own_sd >= 0 && fit.own_sd < 1e6))
          return bad_input(origin + ": allocation: " + fit.name + ": own_sd must be a finite number >= 0");
      }
      if (item.contains("threads_per_process")) {  // absent: pooled over every setting
        const json& threads = item.at("threads_per_process");
        if (!threads.is_number_integer() || threads.get<long long>() < 1 || threads.get<long long>() > 4096)
          return bad_input(origin + ": allocation: " + fit.name +
                           ": threads_per_process must be a whole number from 1 to 4096");
        fit.threads = threads.get<int>();
      }
      model.variants.push_back(fit);
    }
    if (in.contains("paired_threads")) {  // absent: unknown (calibrations written before it)
      if (!in.at("paired_threads").is_array())
        return bad_input(origin + ": allocation: paired_threads must be an array of whole numbers");
      for (const json& threads : in.at("paired_threads")) {
        if (!threads.is_number_integer() || threads.get<long long>() < 1 || threads.get<long long>() > 4096)
          return bad_input(origin + ": allocation: paired_threads must be whole numbers from 1 to 4096");
        model.paired_threads.push_back(threads.get<int>());
      }
      if (!std::is_sorted(model.paired_threads.begin(), model.paired_threads.end()) ||
          std::adjacent_find(model.paired_threads.begin(), model.paired_threads.end()) != model.paired_threads.end())
        return bad_input(origin + ": allocation: paired_threads must be ascending, each count once");
    }
    if (in.contains("pytorch_setups")) {  // absent: none timed (and in calibrations written before them)
      auto setups = measured_setups_from_json(in.at("pytorch_setups"), origin + ": allocation");
      if (!setups) return setups.error();
      model.pytorch_setups = std::move(*setups);
    }
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin);
  }
  const std::string where = origin + ": allocation";
  for (const double cost : {model.fault_ns_per_page, model.fault_ns_per_page_all_cores})
    if (!(cost > 0) || !(cost < 1e9)) return bad_input(where + ": fault costs must be positive nanoseconds per page");
  std::set<std::pair<std::string, int>> seen;
  for (const AllocatorFit& fit : model.variants) {
    if (!seen.insert({fit.name, fit.threads}).second)
      return bad_input(where + ": " + fit.name + " is listed twice" +
                       (fit.threads ? " at " + std::to_string(fit.threads) + " threads per process" : ""));
    if (!valid_allocator_name(fit.name))
      return bad_input(where + ": a variant's name must be lower-case letters, digits and '-'");
    if (!(std::abs(fit.non_reuse) < 1e6) || !(std::abs(fit.low) < 1e6) || !(std::abs(fit.high) < 1e6) ||
        !(fit.low <= fit.non_reuse && fit.non_reuse <= fit.high) || fit.anchors < 0)
      return bad_input(where + ": " + fit.name + ": non_reuse must be finite within its band low..high, anchors >= 0");
  }
  return model;
}

}  // namespace dnntune::model
