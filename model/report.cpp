// model/report.cpp — see report.hpp.
#include "model/report.hpp"
#include "model/plausibility.hpp"
#include "common/text_format.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace dnntune::model {
namespace {

// The anchor's images/s as trained, and as its layers sum (the step with the forward and
// backward the micro-runs add up to in their place).
double anchor_images_per_second(const Anchor& anchor) {
  return anchor.processes * anchor.batch / anchor.iteration_seconds;
}
double layers_images_per_second(const Anchor& anchor) {
  return anchor.processes * anchor.batch /
         (anchor.iteration_seconds - anchor.forward_seconds - anchor.backward_seconds + anchor.layers_forward_seconds +
          anchor.layers_backward_seconds);
}

// "trained 3 steps at 1x2 b8: 14.2 images/s measured, layers sum to 13.1 (-8%), corrected"
// ("trained 8 steps in 2 runs at ..." once the setting was trained again: model/anchors.hpp)
std::string anchor_text(const AnchorUse& use) {
  if (!use.used) return "none: not checked against a real training step";
  const Anchor& a = use.anchor;
  const double measured = anchor_images_per_second(a), layers = layers_images_per_second(a);
  std::string text = "trained " + std::to_string(a.steps) + (a.steps == 1 ? " step" : " steps") +
                     (a.runs > 1 ? " in " + std::to_string(a.runs) + " runs" : std::string()) + " at " +
                     std::to_string(a.processes) + "x" + std::to_string(a.threads) + (a.smt ? " smt" : "") + " b" +
                     std::to_string(a.batch) + ": " + format_fixed(measured, 1) + " images/s measured, layers sum to " +
                     format_fixed(layers, 1) + " (" + (layers >= measured ? "+" : "") +
                     format_fixed(100 * (layers / measured - 1), 0) + "%), ";
  return text + (use.exact ? "corrected" : "correction carried over (nearest anchor of this network)");
}

}  // namespace

std::string images_per_second_text(double value, double low, double high, const std::string& confidence) {
  const std::string band = "90% band " + format_fixed(low, 1) + " - " + format_fixed(high, 1);
  if (band_is_known(low, high)) return format_fixed(value, 1) + "  (" + band + ", " + confidence + ")";
  return "unknown  (" + band + ", wider than " + format_fixed(widest_band_ratio, 0) + "x: the model does not know; " +
         confidence + ")";
}

void put_images_per_second(nlohmann::json& out, double value, double low, double high) {
  const bool known = band_is_known(low, high);
  out["images_per_second"] = known ? nlohmann::json(value) : nlohmann::json(nullptr);
  out["band"] = {{"low", low}, {"high", high}, {"level", 0.9}, {"known", known}};
}

std::string images_per_second_cell(double value, double low, double high) {
  return band_is_known(low, high) ? format_significant(value, 3) : "unknown";
}

std::string unknown_rows_note() {
  return "unknown: a 90% band wider than " + format_fixed(widest_band_ratio, 0) +
         "x: the model does not know that row's images/s\n";
}

std::string format_seconds(double seconds) {
  if (seconds >= 1) return format_fixed(seconds, 2) + " s";
  if (seconds >= 1e-3) return format_fixed(seconds * 1e3, 1) + " ms";
  return format_fixed(seconds * 1e6, 0) + " us";
}

std::string prediction_text(const Prediction& p) {
  std::ostringstream out;
  const IterationTerms& t = p.terms;
  out << p.network << " on " << p.machine << " (" << p.backend << "): " << describe(p.configuration) << "\n";
  out << "  images/s      "
      << images_per_second_text(p.images_per_second, p.images_per_second_low, p.images_per_second_high, p.confidence)
      << "\n";
  out << "  iteration     " << format_seconds(p.iteration_seconds) << "\n";
  const std::pair<const char*, double> rows[] = {{"forward", t.forward},
                                                 {"backward-data", t.backward_data},
                                                 {"backward-weights", t.backward_weights},
                                                 {"gradient sums", t.gradient_sums},
                                                 {"optimizer", t.optimizer},
                                                 {"exposed comm", t.exposed_communication},
                                                 {"comm CPU", t.communication_cpu},
                                                 {"stragglers", t.stragglers}};
  for (const auto& [name, seconds] : rows)
    if (seconds > 0)
      out << "    " << name << std::string(18 - std::string(name).size(), ' ') << format_seconds(seconds) << "  ("
          << format_percent(seconds, p.iteration_seconds) << ")\n";
  if (t.communication > 0)
    out << "  communication " << format_seconds(t.communication) << " in all, "
        << format_percent(t.communication - t.exposed_communication, t.communication)
        << " hidden behind the backward pass\n";
  if (p.configuration.nodes > 1) out << "  scaling efficiency " << format_fixed(100 * p.scaling_efficiency, 1) << "%\n";
  if (!p.step_spread_source.empty()) out << "  step spread   " << p.step_spread_source << "\n";
  if (!p.inter_node_link_source.empty()) out << "  between nodes " << p.inter_node_link_source << "\n";
  out << "  bottleneck    " << p.bottleneck << "\n";
  out << "  measured      " << format_fixed(100 * p.measured_fraction, 0)
      << "% of layer time from this machine's micro-runs\n";
  out << "  anchor        " << anchor_text(p.anchor) << "\n";
  if (p.context_corrected_share > 0)
    out << "  context       " << format_fixed(100 * p.context_corrected_share, 0)
        << "% of the iteration corrected by layer-class ratios from the anchors' in-network module times"
        << (p.anchor.used ? " (instead of the anchor's ratio)" : "") << ", the band widened by their spread\n";
  return out.str();
}

nlohmann::json prediction_json(const Prediction& p) {
  const IterationTerms& t = p.terms;
  const TrainingConfiguration& c = p.configuration;
  nlohmann::json out = {
      {"network", p.network},
      {"backend", p.backend},
      {"machine", p.machine},
      {"configuration",
       {{"batch_per_process", c.batch_per_process},
        {"processes_per_node", c.processes_per_node},
        {"threads_per_process", c.threads_per_process},
        {"smt", c.smt},
        {"nodes", c.nodes},
        {"scheme", c.scheme == CommunicationScheme::allreduce ? "allreduce" : "parameter-server"},
        {"parameter_servers", c.parameter_servers},
        {"asynchronous", c.asynchronous},
        {"fusion_bytes", c.fusion_bytes},
        {"fabric", c.fabric}}},
      {"placement",
       {{"processes_per_package", p.placement.processes_per_package},
        {"packages_spanned", p.placement.packages_spanned},
        {"cores_per_process", p.placement.cores_per_process}}},
      {"iteration_seconds", p.iteration_seconds},
      {"scaling_efficiency", p.scaling_efficiency},
      {"terms_seconds",
       {{"forward", t.forward},
        {"backward_data", t.backward_data},
        {"backward_weights", t.backward_weights},
        {"gradient_sums", t.gradient_sums},
        {"optimizer", t.optimizer},
        {"communication", t.communication},
        {"exposed_communication", t.exposed_communication},
        {"communication_cpu", t.communication_cpu},
        {"stragglers", t.stragglers}}},
      {"layer_time_by_bound_seconds",
       {{"compute", t.compute_bound}, {"memory", t.memory_bound}, {"overhead", t.overhead_bound}}},
      {"measured_fraction", p.measured_fraction},
      {"confidence", p.confidence},
      {"anchor",
       p.anchor.used ? nlohmann::json{{"exact", p.anchor.exact},
                                      {"network", p.anchor.anchor.network},
                                      {"batch", p.anchor.anchor.batch},
                                      {"threads", p.anchor.anchor.threads},
                                      {"smt", p.anchor.anchor.smt},
                                      {"processes", p.anchor.anchor.processes},
                                      {"steps", p.anchor.anchor.steps},
                                      {"runs", p.anchor.anchor.runs},
                                      {"run_spread_log_sd", p.run_spread_log_sd},
                                      {"measured_images_per_second", anchor_images_per_second(p.anchor.anchor)},
                                      {"layers_images_per_second", layers_images_per_second(p.anchor.anchor)},
                                      {"forward_ratio", p.anchor.forward_ratio},
                                      {"backward_ratio", p.anchor.backward_ratio},
                                      {"text", anchor_text(p.anchor)}}
                     : nlohmann::json(nullptr)},
      {"context_corrected_share", p.context_corrected_share},
      {"bottleneck", p.bottleneck}};
  put_images_per_second(out, p.images_per_second, p.images_per_second_low, p.images_per_second_high);
  if (!p.step_spread_source.empty()) out["step_spread"] = p.step_spread_source;
  if (!p.inter_node_link_source.empty()) out["inter_node_link"] = p.inter_node_link_source;
  return out;
}

std::string fit_report_text(const Calibration& calibration) {
  std::ostringstream out;
  const FitSummary& s = calibration.summary;
  out << "Calibration of " << calibration.machine.name << " (fingerprint " << records::fingerprint(calibration.machine)
      << "), backend " << calibration.backend << " " << calibration.backend_version << "\n";
  out << "  " << s.samples << " layer measurements fitted in " << format_fixed(s.fit_seconds, 2) << " s ("
      << s.records_ignored << " records of other kinds, backends, allocators or statuses ignored)\n";
  out << "  held-out error (5-fold by layer shape; the model alone, before measured layers are reused):\n";
  for (const auto& error : s.held_out_by_class)
    out << "    " << error.group << std::string(std::max<int>(1, 28 - static_cast<int>(error.group.size())), ' ')
        << format_fixed(error.mean_absolute_percentage_error, 1) << "% MAPE over " << error.samples << "\n";
  for (const auto& error : s.held_out_by_setting)
    out << "    " << error.group << std::string(std::max<int>(1, 28 - static_cast<int>(error.group.size())), ' ')
        << format_fixed(error.mean_absolute_percentage_error, 1) << "% MAPE over " << error.samples << "\n";
  out << "  parameters (value [5%, 95%] over " << calibration.bootstrap_parameters.size()
      << " bootstrap replicates; pinned ones kept at their prior):\n";
  int pinned = 0;
  for (const auto& estimate : s.parameters) {
    if (estimate.pinned) {
      ++pinned;
      continue;
    }
    const int index = parameter_index(estimate.name);  // its unit from the parameter table
    const std::string unit = index >= 0 ? parameter_table()[index].unit : "";
    char range[64], line[200];
    std::snprintf(range, sizeof range, "[%.4g, %.4g]", estimate.low, estimate.high);
    std::snprintf(line, sizeof line, "    %-44s %11.4g %-24s %s", estimate.name.c_str(), estimate.value, range,
                  unit.c_str());
    std::string text = line;
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << "\n";
  }
  out << "    (" << pinned << " parameters pinned: the measurements cannot identify them)\n";
  out << "  intra-node link: " << format_fixed(calibration.links.intra_node.latency_seconds * 1e6, 2) << " us, "
      << format_fixed(calibration.links.intra_node.bandwidth_gbs, 2) << " GB/s (" << calibration.links.intra_node.source
      << ")\n";
  const LinkModel& inter = calibration.links.inter_node;
  out << "  inter-node link: ";
  if (inter.measured)
    out << format_fixed(inter.latency_seconds * 1e6, 2) << " us, " << format_fixed(inter.bandwidth_gbs, 4) << " GB/s (";
  out << inter.source << (inter.measured ? ")" : "") << "\n";
  return out.str();
}

nlohmann::json fit_report_json(const Calibration& calibration) {
  auto document = nlohmann::json::parse(to_json_text(calibration));
  document.erase("measured_layers");  // the report is about the fit, not the raw table
  document.erase("bootstrap_parameters");
  return document;
}

}  // namespace dnntune::model
