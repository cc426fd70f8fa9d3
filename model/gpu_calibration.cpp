// model/gpu_calibration.cpp — see gpu_calibration.hpp.
#include "model/gpu_calibration.hpp"
#include "model/plausibility.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "common/statistics.hpp"
#include "common/text_format.hpp"

namespace dnntune::model {
namespace {

using nlohmann::json;

int slot_of(workloads::Pass pass) {
  return pass == workloads::Pass::forward ? 0 : pass == workloads::Pass::backward_data ? 1 : 2;
}

// Efficiencies stay above a floor that keeps predictions finite, and a memory efficiency at most
// 2 (the L2 serves some of the bytes counted).
double clamp_efficiency(double value) { return std::clamp(value, 0.005, 2.0); }
// A compute efficiency stays within what the class's algorithms can reach against the directly
// counted FLOPs (model/plausibility.hpp: Winograd convolutions pass 100% of them, GEMMs never).
double clamp_compute_efficiency(double value, GpuKernelClass kernel_class) {
  return std::clamp(value, 0.005, gpu_class_saving_bound(kernel_class));
}

constexpr int fit_rounds = 3;

struct UsableRecord {
  workloads::LayerSpec spec;
  workloads::Pass pass;
  GpuNumerics numerics;
  const records::Measurement* record;
};

double predict(const UsableRecord& usable, const GpuNode& node, const GpuEfficiencies& efficiencies) {
  const auto cost = workloads::layer_cost(usable.spec, usable.record->batch).pass(usable.pass);
  return gpu_pass_time(usable.spec, usable.pass, cost, usable.record->batch, node, efficiencies, usable.numerics)
      .seconds;
}

double median_error(const std::vector<GpuPassCheck>& checks, double GpuPassCheck::*predicted) {
  std::vector<double> errors;
  for (const GpuPassCheck& check : checks) errors.push_back(std::abs(check.*predicted / check.measured_seconds - 1));
  return errors.empty() ? 0 : median(errors);
}

// The fit proper (see the header) on `usable`, per precision for the classes that run at a
// precision's own peak. A tensor precision without micro-runs inherits the share of peak fitted
// for a measured one (bf16 and fp16 from TF32): the peak ratio carries it over.
GpuEfficiencies fit_round(const std::vector<const UsableRecord*>& usable, const GpuNode& node,
                          const GpuEfficiencies& priors) {
  std::vector<double> compute_ratios[gpu_precision_count][gpu_kernel_class_count][3];
  std::vector<double> memory_ratios[gpu_kernel_class_count][3];
  std::vector<double> overhead_seconds;
  for (const UsableRecord* entry : usable) {
    const auto cost = workloads::layer_cost(entry->spec, entry->record->batch).pass(entry->pass);
    const GpuPassTime time =
        gpu_pass_time(entry->spec, entry->pass, cost, entry->record->batch, node, priors, entry->numerics);
    if (time.seconds <= 0) continue;
    const int kernel_class = static_cast<int>(gpu_kernel_class(entry->spec));
    const int precision = static_cast<int>(entry->numerics.precision);
    // The roofline's part against what the record leaves once the fixed part is taken off.
    const GpuClassEfficiency& current = priors.classes[static_cast<int>(gpu_kernel_class(entry->spec))];
    const double variable = entry->record->median_seconds - current.fixed_seconds[slot_of(entry->pass)] -
                            current.kernels_per_pass * priors.kernel_gap_seconds;
    const double roofline = std::max(time.compute_seconds, time.memory_seconds);
    if (time.limit != "overhead" && (variable <= 0 || roofline <= 0)) continue;
    const double ratio = variable / roofline;
    if (time.limit == "compute")
      compute_ratios[precision][kernel_class][slot_of(entry->pass)].push_back(ratio);
    else if (time.limit == "memory")
      memory_ratios[kernel_class][slot_of(entry->pass)].push_back(ratio);
    else if (time.limit == "overhead")
      overhead_seconds.push_back(entry->record->median_seconds);
  }
  GpuEfficiencies fitted = priors;
  for (int kernel_class = 0; kernel_class < gpu_kernel_class_count; ++kernel_class) {
    GpuClassEfficiency& efficiency = fitted.classes[kernel_class];
    const auto class_id = static_cast<GpuKernelClass>(kernel_class);
    for (int precision = 0; precision < gpu_precision_count; ++precision) {
      const auto numerics = static_cast<GpuPrecision>(precision);
      if (precision > 0 && !uses_precision_peak(class_id, numerics)) continue;  // fp32's row, fitted once
      std::array<double, 3>& compute = class_compute(efficiency, class_id, numerics);
      for (int slot = 0; slot < 3; ++slot) {
        std::vector<double> ratios = compute_ratios[precision][kernel_class][slot];
        // A class off the precision's peak (streaming kernels) computes at fp32's: pool them.
        if (precision == 0)
          for (int other = 1; other < gpu_precision_count; ++other)
            if (!uses_precision_peak(class_id, static_cast<GpuPrecision>(other)))
              ratios.insert(ratios.end(), compute_ratios[other][kernel_class][slot].begin(),
                            compute_ratios[other][kernel_class][slot].end());
        if (!ratios.empty()) compute[slot] = clamp_compute_efficiency(compute[slot] / median(ratios), class_id);
      }
    }
    // The class's memory efficiency from all its memory-bound passes, each pass's factor from its own.
    std::vector<double> all;
    for (const auto& slot_ratios : memory_ratios[kernel_class])
      all.insert(all.end(), slot_ratios.begin(), slot_ratios.end());
    if (all.empty()) continue;
    const double overall = median(all);
    efficiency.memory = clamp_efficiency(efficiency.memory / overall);
    for (int slot = 0; slot < 3; ++slot)
      if (!memory_ratios[kernel_class][slot].empty())
        efficiency.memory_pass_factor[slot] = std::clamp(
            efficiency.memory_pass_factor[slot] * overall / median(memory_ratios[kernel_class][slot]), 0.05, 20.0);
  }
  if (!overhead_seconds.empty()) fitted.dispatch_seconds_per_op = median(overhead_seconds);
  return fitted;
}

// Per class and pass, the time that does not grow with the batch: for each shape measured at two
// batches (the smallest and largest), the intercept of the line through them, t = fixed + v, where
// the roofline's part v grows from one batch to the other by the ratio rho the model gives it (the
// batch ratio, less where a small batch does not fill the chip): fixed = (rho t1 - t2) / (rho - 1).
// The class's median less its kernels' gaps (a term of their own), at least 0. A pass the model (fitted once without
// this term) finds held by
// the host's dispatch at either batch, or whose time grows by less than a third of rho, says
// nothing about its kernel here.
void fit_fixed_seconds(const std::vector<const UsableRecord*>& usable, const GpuNode& node, GpuEfficiencies& fitted) {
  struct Ends {
    const UsableRecord* small = nullptr;
    const UsableRecord* large = nullptr;
  };
  std::map<std::string, Ends> shapes;
  for (const UsableRecord* entry : usable) {
    Ends& ends = shapes[entry->record->descriptor + "|" + entry->record->pass + "|" +
                        gpu_precision_name(entry->numerics.precision) + "|" +
                        gpu_memory_format_name(entry->numerics.memory_format)];
    if (!ends.small || entry->record->batch < ends.small->record->batch) ends.small = entry;
    if (!ends.large || entry->record->batch > ends.large->record->batch) ends.large = entry;
  }
  const auto roofline = [&](const UsableRecord& entry) {
    const auto cost = workloads::layer_cost(entry.spec, entry.record->batch).pass(entry.pass);
    const GpuPassTime time =
        gpu_pass_time(entry.spec, entry.pass, cost, entry.record->batch, node, fitted, entry.numerics);
    return time.limit == "overhead" ? 0.0 : std::max(time.compute_seconds, time.memory_seconds);
  };
  std::vector<double> intercepts[gpu_kernel_class_count][3];
  for (const auto& [key, ends] : shapes) {
    if (!ends.small || ends.small->record->batch >= ends.large->record->batch) continue;
    const double r1 = roofline(*ends.small), r2 = roofline(*ends.large);
    if (!(r1 > 0) || !(r2 > r1)) continue;
    const double rho = r2 / r1;
    const double t1 = ends.small->record->median_seconds, t2 = ends.large->record->median_seconds;
    if (t2 / t1 < 1 + (rho - 1) / 3) continue;
    intercepts[static_cast<int>(gpu_kernel_class(ends.small->spec))][slot_of(ends.small->pass)].push_back(
        (rho * t1 - t2) / (rho - 1));
  }
  for (int kernel_class = 0; kernel_class < gpu_kernel_class_count; ++kernel_class)
    for (int slot = 0; slot < 3; ++slot)
      if (!intercepts[kernel_class][slot].empty())
        fitted.classes[kernel_class].fixed_seconds[slot] =
            std::max(0.0, median(intercepts[kernel_class][slot]) -
                              fitted.classes[kernel_class].kernels_per_pass * fitted.kernel_gap_seconds);
}

// A few rounds: a pass that the first round moves across its roofline's knee (compute to memory)
// is classed by its new limit in the next.
GpuEfficiencies fit_efficiencies(const std::vector<const UsableRecord*>& usable, const GpuNode& node,
                                 const GpuEfficiencies& priors) {
  GpuEfficiencies fitted = fit_round(usable, node, priors);
  fit_fixed_seconds(usable, node, fitted);
  for (int round = 0; round < fit_rounds; ++round) fitted = fit_round(usable, node, fitted);
  return fitted;
}

// Carries a measured tensor precision's fitted shares of peak to the unmeasured ones.
void carry_over_precisions(GpuEfficiencies& fitted, const std::vector<std::string>& measured) {
  const auto has = [&](GpuPrecision precision) {
    return std::find(measured.begin(), measured.end(), gpu_precision_name(precision)) != measured.end();
  };
  std::optional<GpuPrecision> source;
  for (GpuPrecision candidate : {GpuPrecision::bf16, GpuPrecision::fp16, GpuPrecision::tf32})
    if (!source && has(candidate)) source = candidate;
  if (!source) return;
  for (GpuClassEfficiency& efficiency : fitted.classes)
    for (GpuPrecision target : {GpuPrecision::tf32, GpuPrecision::bf16, GpuPrecision::fp16})
      if (!has(target))
        efficiency.reduced_compute[static_cast<int>(target)] = efficiency.reduced_compute[static_cast<int>(*source)];
}

}  // namespace

Expected<GpuCalibration> fit_gpu_calibration(const std::vector<records::Measurement>& records, const GpuNode& node,
                                             const GpuEfficiencies& priors) {
  std::vector<UsableRecord> usable;
  std::string backend_version;
  std::vector<std::string> measured_precisions;
  for (const records::Measurement& record : records) {
    if (record.kind != records::MeasurementKind::layer || record.backend != "torch-cuda" ||
        record.status != records::MeasurementStatus::ok || record.processes != 1 || !(record.median_seconds > 0))
      continue;
    auto spec = workloads::parse_descriptor(record.descriptor);
    if (!spec) continue;
    workloads::Pass pass = workloads::Pass::forward;
    bool known = false;
    for (workloads::Pass candidate : workloads::all_passes)
      if (workloads::pass_name(candidate) == record.pass) pass = candidate, known = true;
    if (!known) continue;
    auto precision = parse_gpu_precision(record.precision);
    auto memory_format = parse_gpu_memory_format(record.memory_format);
    if (!precision || !memory_format) continue;
    if (!check_gpu_precision(node, *precision))
      return bad_input("a " + record.precision + " record (" + record.descriptor + ") cannot come from a " + node.name +
                       ": it has no " + record.precision + " math");
    usable.push_back({*spec, pass, {*precision, *memory_format, true}, &record});
    backend_version = record.backend_version;
    if (std::find(measured_precisions.begin(), measured_precisions.end(), record.precision) ==
        measured_precisions.end())
      measured_precisions.push_back(record.precision);
  }
  if (usable.empty())
    return bad_input("no torch-cuda layer measurements to fit (calibrate on the GPU with --backend torch-cuda)");

  // Two folds by layer shape (every other distinct descriptor): a shape is never checked by a fit
  // that saw it, at any batch or pass.
  std::vector<const UsableRecord*> all, folds[2];
  std::map<std::string, int> fold_of;
  for (const UsableRecord& entry : usable) {
    all.push_back(&entry);
    const auto found = fold_of.emplace(entry.record->descriptor, static_cast<int>(fold_of.size() % 2)).first;
    folds[found->second].push_back(&entry);
  }
  GpuCalibration calibration;
  calibration.machine = node.name;
  calibration.backend_version = backend_version;
  GpuEfficiencies& fitted = calibration.efficiencies = fit_efficiencies(all, node, priors);
  carry_over_precisions(fitted, measured_precisions);

  for (const UsableRecord& entry : usable) {
    GpuPassCheck check{entry.record->descriptor,     entry.record->pass,           entry.record->batch,
                       entry.record->median_seconds, predict(entry, node, priors), predict(entry, node, fitted)};
    if (check.fitted_seconds <= 0) continue;
    calibration.checks.push_back(std::move(check));
  }
  for (const GpuPassCheck& check : calibration.checks)
    calibration.efficiencies.measured_passes.insert(gpu_pass_key(check.descriptor, check.pass, check.batch));
  calibration.prior_median_error = median_error(calibration.checks, &GpuPassCheck::prior_seconds);
  calibration.fitted_median_error = median_error(calibration.checks, &GpuPassCheck::fitted_seconds);
  // The band from held-out residuals: fit on every other record, check the rest, both ways (a
  // median absolute deviation as a standard deviation), no narrower than 10%: a whole step adds
  // what single passes do not show.
  std::vector<double> held_out;
  for (int fold = 0; fold < 2; ++fold) {
    if (folds[fold].empty() || folds[1 - fold].empty()) continue;
    const GpuEfficiencies half = fit_efficiencies(folds[fold], node, priors);
    for (const UsableRecord* entry : folds[1 - fold]) {
      const double predicted = predict(*entry, node, half);
      if (predicted > 0) held_out.push_back(std::abs(std::log(predicted / entry->record->median_seconds)));
    }
  }
  calibration.held_out_median_error = held_out.empty() ? 0 : std::exp(median(held_out)) - 1;
  fitted.log_sd = std::max(0.10, 1.4826 * (held_out.empty() ? 0.0 : median(held_out)));
  fitted.measured_on = node.name;
  fitted.measured_precisions = measured_precisions;
  fitted.source = "GPU reference calibration fitted on " + node.name + " (" + backend_version + ", " +
                  std::to_string(calibration.checks.size()) + " layer passes)";
  return calibration;
}

// --- JSON ---

std::string to_json_text(const GpuCalibration& calibration) {
  const GpuEfficiencies& e = calibration.efficiencies;
  json classes = json::object();
  for (int kernel_class = 0; kernel_class < gpu_kernel_class_count; ++kernel_class) {
    const GpuClassEfficiency& efficiency = e.classes[kernel_class];
    json row = {{"compute", efficiency.compute},
                {"memory", efficiency.memory},
                {"memory_pass_factor", efficiency.memory_pass_factor},
                {"kernels_per_pass", efficiency.kernels_per_pass},
                {"fixed_seconds", efficiency.fixed_seconds}};
    const auto class_id = static_cast<GpuKernelClass>(kernel_class);
    for (GpuPrecision precision : {GpuPrecision::tf32, GpuPrecision::bf16, GpuPrecision::fp16})
      if (uses_precision_peak(class_id, precision))
        row["compute_by_precision"][gpu_precision_name(precision)] =
            efficiency.reduced_compute[static_cast<int>(precision)];
    classes[gpu_kernel_class_name(class_id)] = row;
  }
  json checks = json::array();
  for (const GpuPassCheck& check : calibration.checks)
    checks.push_back({{"descriptor", check.descriptor},
                      {"pass", check.pass},
                      {"batch", check.batch},
                      {"measured_seconds", check.measured_seconds},
                      {"prior_seconds", check.prior_seconds},
                      {"fitted_seconds", check.fitted_seconds}});
  const json out = {{"schema", gpu_calibration_schema},
                    {"schema_version", gpu_calibration_schema_version},
                    {"machine", calibration.machine},
                    {"backend_version", calibration.backend_version},
                    {"efficiencies",
                     {{"classes", classes},
                      {"kernel_gap_seconds", e.kernel_gap_seconds},
                      {"dispatch_seconds_per_op", e.dispatch_seconds_per_op},
                      {"half_fill_threads_per_sm", e.half_fill_threads_per_sm},
                      {"framework_memory_bytes", e.framework_memory_bytes},
                      {"log_sd", e.log_sd},
                      {"source", e.source},
                      {"measured_on", e.measured_on},
                      {"measured_precisions", e.measured_precisions}}},
                    {"held_out_median_error", calibration.held_out_median_error},
                    {"prior_median_error", calibration.prior_median_error},
                    {"fitted_median_error", calibration.fitted_median_error},
                    {"checks", checks}};
  return out.dump(2) + "\n";
}

namespace {

Expected<GpuCalibration> gpu_calibration_from_document(const json& document, const std::string& origin) {
  if (auto valid = check_schema(document, gpu_calibration_schema, gpu_calibration_schema_version, origin); !valid)
    return valid.error();
  GpuCalibration calibration;
  try {
    calibration.machine = document.at("machine").get<std::string>();
    calibration.backend_version = document.value("backend_version", "");
    const json& in = document.at("efficiencies");
    GpuEfficiencies& e = calibration.efficiencies = gpu_efficiency_priors();
    // A calibration with no class measured nothing: its efficiencies would be the priors, labelled
    // as this GPU's.
    if (!in.at("classes").is_object() || in.at("classes").empty())
      return bad_input(origin + ": (/efficiencies/classes) holds no kernel class: a calibration fits at least one");
    for (int kernel_class = 0; kernel_class < gpu_kernel_class_count; ++kernel_class) {
      const std::string name = gpu_kernel_class_name(static_cast<GpuKernelClass>(kernel_class));
      if (!in.at("classes").contains(name)) continue;
      const json& row = in.at("classes").at(name);
      GpuClassEfficiency& efficiency = e.classes[kernel_class];
      efficiency.compute = row.at("compute").get<std::array<double, 3>>();
      efficiency.memory = row.at("memory").get<double>();
      if (row.contains("kernels_per_pass")) efficiency.kernels_per_pass = json_integer<int>(row.at("kernels_per_pass"));
      if (row.contains("memory_pass_factor"))
        efficiency.memory_pass_factor = row.at("memory_pass_factor").get<std::array<double, 3>>();
      if (row.contains("fixed_seconds"))
        efficiency.fixed_seconds = row.at("fixed_seconds").get<std::array<double, 3>>();
      for (double value : efficiency.fixed_seconds)
        if (!std::isfinite(value) || value < 0 || value > 1)
          return bad_input(origin + ": (/efficiencies/classes/" + name + "/fixed_seconds) must be seconds in [0, 1]");
      for (double value : efficiency.memory_pass_factor)
        if (!std::isfinite(value) || value <= 0 || value > 20)
          return bad_input(origin + ": (/efficiencies/classes/" + name +
                           "/memory_pass_factor) must be numbers in (0, 20]");
      for (GpuPrecision precision : {GpuPrecision::tf32, GpuPrecision::bf16, GpuPrecision::fp16}) {
        const std::string key = gpu_precision_name(precision);
        if (!row.contains("compute_by_precision") || !row.at("compute_by_precision").contains(key)) continue;
        auto& reduced = efficiency.reduced_compute[static_cast<int>(precision)];
        reduced = row.at("compute_by_precision").at(key).get<std::array<double, 3>>();
        for (double value : reduced)
          if (auto held = check_gpu_efficiency(value, static_cast<GpuKernelClass>(kernel_class), origin,
                                               "/efficiencies/classes/" + name + "/compute_by_precision/" + key);
              !held)
            return held.error();
      }
      for (double value : efficiency.compute)
        if (auto held = check_gpu_efficiency(value, static_cast<GpuKernelClass>(kernel_class), origin,
                                             "/efficiencies/classes/" + name + "/compute");
            !held)
          return held.error();
      if (!std::isfinite(efficiency.memory) || efficiency.memory <= 0 || efficiency.memory > 2)
        return bad_input(origin + ": (/efficiencies/classes/" + name + "/memory) must be a number in (0, 2]");
      if (efficiency.kernels_per_pass < 0 || efficiency.kernels_per_pass > 1000)
        return bad_input(origin + ": (/efficiencies/classes/" + name + "/kernels_per_pass) must be 0..1000");
    }
    const std::pair<const char*, double*> numbers[] = {{"kernel_gap_seconds", &e.kernel_gap_seconds},
                                                       {"dispatch_seconds_per_op", &e.dispatch_seconds_per_op},
                                                       {"half_fill_threads_per_sm", &e.half_fill_threads_per_sm},
                                                       {"framework_memory_bytes", &e.framework_memory_bytes},
                                                       {"log_sd", &e.log_sd}};
    for (const auto& [key, value] : numbers) {
      *value = in.at(key).get<double>();
      if (!std::isfinite(*value) || *value < 0 || *value > 1e15)
        return bad_input(origin + ": (/efficiencies/" + key + ") must be a finite number >= 0");
    }
    e.source = in.at("source").get<std::string>();
    // A calibration before precisions: measured on its machine, PyTorch's default numerics.
    e.measured_on = in.value("measured_on", calibration.machine);
    e.measured_precisions = in.value("measured_precisions", std::vector<std::string>{"tf32"});
    for (const std::string& precision : e.measured_precisions)
      if (!parse_gpu_precision(precision))
        return bad_input(origin + ": (/efficiencies/measured_precisions) must name fp32, tf32, bf16 or fp16");
    if (document.contains("checks"))  // the passes measured: what a prediction's measured share counts
      for (const json& item : document.at("checks")) {
        GpuPassCheck check{item.at("descriptor").get<std::string>(),     item.at("pass").get<std::string>(),
                           json_integer<std::int64_t>(item.at("batch")), item.at("measured_seconds").get<double>(),
                           item.at("prior_seconds").get<double>(),       item.at("fitted_seconds").get<double>()};
        e.measured_passes.insert(gpu_pass_key(check.descriptor, check.pass, check.batch));
        calibration.checks.push_back(std::move(check));
      }
    calibration.held_out_median_error = document.value("held_out_median_error", 0.0);
    calibration.prior_median_error = document.value("prior_median_error", 0.0);
    calibration.fitted_median_error = document.value("fitted_median_error", 0.0);
    for (const double error : {calibration.prior_median_error, calibration.fitted_median_error})
      if (!std::isfinite(error) || error < 0 || error > 1e6)
        return bad_input(origin + ": (/prior_median_error, /fitted_median_error) must be finite numbers >= 0");
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin);
  }
  return calibration;
}

}  // namespace

Expected<GpuCalibration> gpu_calibration_from_json_text(const std::string& text, const std::string& origin_name) {
  auto document = parse_json(text, origin_name);
  if (!document) return document.error();
  return gpu_calibration_from_document(*document, origin_name);
}

Expected<GpuCalibration> read_gpu_calibration(const std::string& path) {
  auto document = read_json_file(path);
  if (!document) return document.error();
  return gpu_calibration_from_document(*document, path);
}

Expected<GpuEfficiencies> reference_gpu_efficiencies(const char* reference_text) {
  if (!reference_text) return gpu_efficiency_priors();
  auto reference = gpu_calibration_from_json_text(reference_text, "<built-in torch-cuda reference>");
  if (!reference) return reference.error();
  return reference->efficiencies;
}

std::string gpu_calibration_text(const GpuCalibration& calibration) {
  std::ostringstream out;
  const GpuEfficiencies& e = calibration.efficiencies;
  out << "GPU calibration of " << calibration.machine << " (" << calibration.backend_version
      << "): " << calibration.checks.size() << " layer passes\n";
  out << "  class                 forward  bwd-data  bwd-weights  memory\n";
  for (int kernel_class = 0; kernel_class < gpu_kernel_class_count; ++kernel_class) {
    std::string name = gpu_kernel_class_name(static_cast<GpuKernelClass>(kernel_class));
    if (name == "view") continue;
    name.resize(std::max<std::size_t>(name.size(), 20), ' ');
    const GpuClassEfficiency& c = e.classes[kernel_class];
    out << "  " << name << "  " << format_fixed(c.compute[0], 2) << "     " << format_fixed(c.compute[1], 2) << "      "
        << format_fixed(c.compute[2], 2) << "         " << format_fixed(c.memory, 2) << "\n";
    // The shares of a tensor precision's own peak, for the classes that run on it.
    for (GpuPrecision precision : {GpuPrecision::tf32, GpuPrecision::bf16}) {
      if (!uses_precision_peak(static_cast<GpuKernelClass>(kernel_class), precision)) continue;
      const auto& r = c.reduced_compute[static_cast<int>(precision)];
      std::string label = "    " + gpu_precision_name(precision) + " (of its peak)";
      label.resize(std::max<std::size_t>(label.size(), 24), ' ');
      out << label << format_fixed(r[0], 2) << "     " << format_fixed(r[1], 2) << "      " << format_fixed(r[2], 2)
          << "\n";
    }
  }
  out << "  host dispatch per op " << format_fixed(e.dispatch_seconds_per_op * 1e6, 1) << " us\n";
  out << "  per-pass median |error|: priors " << format_fixed(100 * calibration.prior_median_error, 1) << "%, fitted "
      << format_fixed(100 * calibration.fitted_median_error, 1) << "%\n";
  out << "  per-pass median |error| held out (fit on half, checked on the other half): "
      << format_fixed(100 * calibration.held_out_median_error, 1) << "%\n";
  out << "  band log-sd " << format_fixed(e.log_sd, 3) << " (from the held-out residuals)\n";
  std::string precisions;
  for (const std::string& precision : e.measured_precisions) precisions += (precisions.empty() ? "" : ", ") + precision;
  out << "  measured in " << precisions << "; other tensor precisions carried over by their peaks\n";
  return out.str();
}

}  // namespace dnntune::model
