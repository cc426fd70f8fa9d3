// model/calibration.cpp — Calibration to and from JSON (see calibration.hpp).
#include "model/calibration.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"

namespace dnntune::model {

using nlohmann::json;

std::string measured_layer_key(const std::string& descriptor, int pass, std::int64_t batch) {
  return descriptor + "|" + std::to_string(pass) + "|" + std::to_string(batch);
}

std::string fused_pass_key(workloads::LayerKind kind, int pass) {
  return workloads::kind_name(kind) + "|" + std::to_string(pass);
}

namespace {

json link_to_json(const LinkModel& link) {
  return {{"latency_seconds", link.latency_seconds}, {"bandwidth_gbs", link.bandwidth_gbs},
          {"measured", link.measured}, {"source", link.source}};
}
LinkModel link_from_json(const json& in) {
  return {in.at("latency_seconds").get<double>(), in.at("bandwidth_gbs").get<double>(), in.at("measured").get<bool>(),
          in.at("source").get<std::string>()};
}

json errors_to_json(const std::vector<HeldOutError>& errors) {
  json out = json::array();
  for (const auto& error : errors)
    out.push_back({{"group", error.group}, {"samples", error.samples},
                   {"mean_absolute_percentage_error", error.mean_absolute_percentage_error}});
  return out;
}
std::vector<HeldOutError> errors_from_json(const json& in) {
  std::vector<HeldOutError> errors;
  for (const auto& item : in)
    errors.push_back({item.at("group").get<std::string>(), item.at("samples").get<int>(),
                      item.at("mean_absolute_percentage_error").get<double>()});
  return errors;
}

// Parameters within the bounds the model declares (parameter_table), finite: a hand-edited or
// damaged file would otherwise give NaN or negative images/s.
// `member` is the JSON path of `values` ("/parameters").
Expected<void> check_parameters(const std::vector<double>& values, const std::string& origin, const std::string& member) {
  for (std::size_t index = 0; index < values.size(); ++index) {
    const ParameterInfo& info = parameter_table()[index];
    // The fit works on log(value) for some: exp(log(bound)) may miss the bound in the last digit.
    const double slack = 1e-9 * std::max(std::abs(info.lower), std::abs(info.upper));
    if (!(values[index] >= info.lower - slack && values[index] <= info.upper + slack))
      return bad_input(origin + ": (" + member + "/" + info.name + ") " + json(values[index]).dump() +
                       " is outside the model's bounds " + json(info.lower).dump() + ".." + json(info.upper).dump());
  }
  return {};
}

Expected<void> check_link(const LinkModel& link, const std::string& origin, const std::string& member) {
  if (!(std::isfinite(link.latency_seconds) && link.latency_seconds >= 0))
    return bad_input(origin + ": (" + member + "/latency_seconds) must be a finite number >= 0");
  if (!(std::isfinite(link.bandwidth_gbs) && link.bandwidth_gbs > 0))
    return bad_input(origin + ": (" + member + "/bandwidth_gbs) must be a finite number > 0");
  return {};
}

// Every figure a prediction uses is finite and physical; names the member that is not.
Expected<void> check_values(const Calibration& calibration, const std::string& origin) {
  if (auto valid = check_parameters(flatten(calibration.parameters), origin, "/parameters"); !valid) return valid;
  for (const auto& replicate : calibration.bootstrap_parameters)
    if (auto valid = check_parameters(replicate, origin, "/bootstrap_parameters"); !valid) return valid;
  for (const auto& [key, layers] : calibration.measured_layers)
    for (const auto& layer : layers)
      if (!(std::isfinite(layer.seconds) && layer.seconds > 0 && std::isfinite(layer.coefficient_of_variation) &&
            layer.coefficient_of_variation >= 0 && layer.threads >= 1 && layer.co_running >= 1 && layer.repetitions >= 0))
        return bad_input(origin + ": (/measured_layers/" + key +
                         ") needs threads and co-running >= 1, seconds > 0, a coefficient of variation >= 0");
  if (auto valid = check_link(calibration.links.intra_node, origin, "/links/intra_node"); !valid) return valid;
  // An unmeasured inter-node link is stored as (0, 0): predictions take the --network preset.
  if (calibration.links.inter_node.measured)
    if (auto valid = check_link(calibration.links.inter_node, origin, "/links/inter_node"); !valid) return valid;
  if (!(std::isfinite(calibration.summary.held_out_log_sd) && calibration.summary.held_out_log_sd >= 0))
    return bad_input(origin + ": (/fit/held_out_log_sd) must be a finite number >= 0");
  return {};
}

}  // namespace

std::string to_json_text(const Calibration& calibration) {
  json out = {{"schema", calibration_schema},
              {"schema_version", calibration_schema_version},
              {"backend", calibration.backend},
              {"backend_version", calibration.backend_version},
              {"machine", json::parse(probe::to_json_text(calibration.machine))}};
  json parameters = json::object();
  const auto values = flatten(calibration.parameters);
  for (std::size_t index = 0; index < values.size(); ++index) parameters[parameter_table()[index].name] = values[index];
  out["parameters"] = parameters;
  out["bootstrap_parameters"] = calibration.bootstrap_parameters;
  json measured = json::object();
  for (const auto& [key, layers] : calibration.measured_layers) {
    json list = json::array();
    for (const auto& layer : layers)
      list.push_back({layer.threads, layer.smt, layer.co_running, layer.seconds, layer.coefficient_of_variation,
                      layer.repetitions});
    measured[key] = list;
  }
  out["measured_layers"] = measured;
  out["fused_passes"] = calibration.fused_passes;
  out["links"] = {{"intra_node", link_to_json(calibration.links.intra_node)},
                  {"inter_node", link_to_json(calibration.links.inter_node)}};
  json anchors = json::array();
  for (const Anchor& anchor : calibration.anchors)
    anchors.push_back({{"network", anchor.network}, {"batch", anchor.batch}, {"threads", anchor.threads},
                       {"smt", anchor.smt}, {"processes", anchor.processes}, {"steps", anchor.steps},
                       {"forward_seconds", anchor.forward_seconds}, {"backward_seconds", anchor.backward_seconds},
                       {"iteration_seconds", anchor.iteration_seconds},
                       {"iteration_coefficient_of_variation", anchor.iteration_coefficient_of_variation},
                       {"layers_forward_seconds", anchor.layers_forward_seconds},
                       {"layers_backward_seconds", anchor.layers_backward_seconds}});
  out["anchors"] = anchors;
  if (calibration.allocation) out["allocation"] = allocation_to_json(*calibration.allocation);
  const FitSummary& summary = calibration.summary;
  json estimates = json::array();
  for (const auto& estimate : summary.parameters)
    estimates.push_back({{"name", estimate.name}, {"value", estimate.value}, {"low", estimate.low},
                         {"high", estimate.high}, {"pinned", estimate.pinned}});
  out["fit"] = {{"samples", summary.samples},
                {"records_ignored", summary.records_ignored},
                {"fit_seconds", summary.fit_seconds},
                {"held_out_log_sd", summary.held_out_log_sd},
                {"parameters", estimates},
                {"held_out_by_class", errors_to_json(summary.held_out_by_class)},
                {"held_out_by_setting", errors_to_json(summary.held_out_by_setting)},
                {"sources", summary.sources}};
  return out.dump(1) + "\n";
}

Expected<Calibration> calibration_from_json_text(const std::string& text, const std::string& origin) {
  auto document = parse_json(text, origin);
  if (!document) return document.error();
  if (auto valid = check_schema(*document, calibration_schema, calibration_schema_version, origin); !valid)
    return valid.error();
  Calibration calibration;
  try {
    const json& in = *document;
    calibration.backend = in.at("backend").get<std::string>();
    calibration.backend_version = in.at("backend_version").get<std::string>();
    auto machine = probe::machine_profile_from_json_text(in.at("machine").dump(), origin + " (machine)");
    if (!machine) return machine.error();
    calibration.machine = std::move(*machine);
    std::vector<double> values;
    for (const auto& info : parameter_table()) values.push_back(in.at("parameters").at(info.name).get<double>());
    calibration.parameters = unflatten(values);
    calibration.bootstrap_parameters = in.at("bootstrap_parameters").get<std::vector<std::vector<double>>>();
    for (const auto& replicate : calibration.bootstrap_parameters)
      if (replicate.size() != parameter_table().size())
        return bad_input(origin + ": a bootstrap replicate has " + std::to_string(replicate.size()) +
                         " parameters, expected " + std::to_string(parameter_table().size()));
    for (const auto& [key, list] : in.at("measured_layers").items())
      for (const auto& item : list)
        calibration.measured_layers[key].push_back({item.at(0).get<int>(), item.at(1).get<bool>(), item.at(2).get<int>(),
                                                    item.at(3).get<double>(), item.at(4).get<double>(),
                                                    item.at(5).get<int>()});
    if (in.contains("fused_passes"))  // absent in calibrations written before dnntune 0.2
      calibration.fused_passes = in.at("fused_passes").get<std::set<std::string>>();
    calibration.links.intra_node = link_from_json(in.at("links").at("intra_node"));
    calibration.links.inter_node = link_from_json(in.at("links").at("inter_node"));
    if (in.contains("anchors"))  // absent in calibrations written before anchors
      for (const auto& item : in.at("anchors"))
        calibration.anchors.push_back(
            {item.at("network").get<std::string>(), item.at("batch").get<std::int64_t>(), item.at("threads").get<int>(),
             item.at("smt").get<bool>(), item.at("processes").get<int>(), item.at("steps").get<int>(),
             item.at("forward_seconds").get<double>(), item.at("backward_seconds").get<double>(),
             item.at("iteration_seconds").get<double>(), item.at("iteration_coefficient_of_variation").get<double>(),
             item.at("layers_forward_seconds").get<double>(), item.at("layers_backward_seconds").get<double>()});
    if (in.contains("allocation")) {  // optional: absent, the prior (model/allocation.hpp)
      auto allocation = allocation_from_json(in.at("allocation"), origin);
      if (!allocation) return allocation.error();
      calibration.allocation = std::move(*allocation);
    }
    const json& fit = in.at("fit");
    FitSummary& summary = calibration.summary;
    summary.samples = fit.at("samples").get<int>();
    summary.records_ignored = fit.at("records_ignored").get<int>();
    summary.fit_seconds = fit.at("fit_seconds").get<double>();
    summary.held_out_log_sd = fit.at("held_out_log_sd").get<double>();
    for (const auto& item : fit.at("parameters"))
      summary.parameters.push_back({item.at("name").get<std::string>(), item.at("value").get<double>(),
                                    item.at("low").get<double>(), item.at("high").get<double>(),
                                    item.at("pinned").get<bool>()});
    summary.held_out_by_class = errors_from_json(fit.at("held_out_by_class"));
    summary.held_out_by_setting = errors_from_json(fit.at("held_out_by_setting"));
    summary.sources = fit.at("sources").get<std::vector<std::string>>();
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin);
  }
  if (auto valid = check_values(calibration, origin); !valid) return valid.error();
  return calibration;
}

Expected<Calibration> read_calibration(const std::string& path) {
  auto document = read_json_file(path);
  if (!document) return document.error();
  return calibration_from_json_text(document->dump(), path);
}

}  // namespace dnntune::model
