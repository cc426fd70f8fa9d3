// model/calibration.cpp — Calibration to and from JSON (see calibration.hpp).
#include "model/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "common/parse_number.hpp"
#include "model/plausibility.hpp"
#include "records/record_bounds.hpp"
#include "workloads/zoo.hpp"
#include "workloads/kernel_class.hpp"

namespace dnntune::model {

using nlohmann::json;

std::string MeasuredLayerKey::to_text() const {
  return descriptor + "|" + std::to_string(pass) + "|" + std::to_string(batch);
}

Expected<MeasuredLayerKey> MeasuredLayerKey::from_text(const std::string& text) {
  const auto malformed = [&] {
    return bad_input("\"" + text + "\" is not descriptor|pass|batch (a pass index 0-2, a batch of 1-" +
                     std::to_string(workloads::max_batch) + ")");
  };
  // Descriptors never hold '|' (workloads/layer.hpp): the last two split off pass and batch.
  const auto batch_bar = text.rfind('|');
  if (batch_bar == std::string::npos || batch_bar == 0) return malformed();
  const auto pass_bar = text.rfind('|', batch_bar - 1);
  if (pass_bar == std::string::npos || pass_bar == 0) return malformed();
  const auto pass = parse_int64(std::string_view(text).substr(pass_bar + 1, batch_bar - pass_bar - 1));
  const auto batch = parse_int64(std::string_view(text).substr(batch_bar + 1));
  if (!pass || *pass < 0 || *pass > 2 || !batch || *batch < 1 || *batch > workloads::max_batch) return malformed();
  return MeasuredLayerKey{text.substr(0, pass_bar), static_cast<int>(*pass), *batch};
}

MeasuredLayerKey measured_layer_key(const std::string& descriptor, int pass, std::int64_t batch) {
  return {descriptor, pass, batch};
}

std::string fused_pass_key(workloads::LayerKind kind, int pass) {
  return workloads::kind_name(kind) + "|" + std::to_string(pass);
}

namespace {

json link_to_json(const LinkModel& link) {
  return {{"latency_seconds", link.latency_seconds},
          {"bandwidth_gbs", link.bandwidth_gbs},
          {"measured", link.measured},
          {"source", link.source}};
}
LinkModel link_from_json(const json& in) {
  return {in.at("latency_seconds").get<double>(), in.at("bandwidth_gbs").get<double>(), in.at("measured").get<bool>(),
          in.at("source").get<std::string>()};
}

json errors_to_json(const std::vector<HeldOutError>& errors) {
  json out = json::array();
  for (const auto& error : errors)
    out.push_back({{"group", error.group},
                   {"samples", error.samples},
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
Expected<void> check_parameters(const std::vector<double>& values, const std::string& origin,
                                const std::string& member) {
  for (std::size_t index = 0; index < values.size(); ++index) {
    const ParameterDescriptor& info = parameter_table()[index];
    // The fit works on log(value) for some: exp(log(bound)) may miss the bound in the last digit.
    const double slack = 1e-9 * std::max(std::abs(info.lower), std::abs(info.upper));
    if (!(values[index] >= info.lower - slack && values[index] <= info.upper + slack))
      return bad_input(origin + ": (" + member + "/" + info.name + ") " + json(values[index]).dump() +
                       " is outside the model's bounds " + json(info.lower).dump() + ".." + json(info.upper).dump());
  }
  return {};
}

Expected<void> check_link(const LinkModel& link, const std::string& origin, const std::string& member,
                          const records::PhysicalRange& bandwidth) {
  if (!(std::isfinite(link.latency_seconds) && link.latency_seconds >= 0 && link.latency_seconds <= 1))
    return bad_input(origin + ": (" + member + "/latency_seconds) must be a finite number from 0 to 1 s");
  return records::check_physical(link.bandwidth_gbs, bandwidth, origin, member + "/bandwidth_gbs");
}

// An anchor is a real training step on this node: its setting within the node's bounds and every
// time it measured finite, above 0 (forward 0 dropped the forward pass from a prediction) and at
// most max_record_seconds. `where` names the file and the anchor.
Expected<void> check_anchor_bounds(const Anchor& anchor, const std::string& where) {
  const auto outside = [&](const std::string& field, const std::string& range) {
    return bad_input(where + " " + field + " must be " + range);
  };
  if (anchor.network.empty()) return outside("network", "a network's name");
  if (anchor.batch < 1 || anchor.batch > workloads::max_batch)
    return outside("batch", "1.." + std::to_string(workloads::max_batch) + ", not " + std::to_string(anchor.batch));
  if (anchor.threads < 1 || anchor.threads > records::max_threads_per_process)
    return outside("threads", "1.." + std::to_string(records::max_threads_per_process) + ", not " +
                                  std::to_string(anchor.threads));
  if (anchor.processes < 1 || anchor.processes > records::max_threads_per_process)
    return outside("processes", "1.." + std::to_string(records::max_threads_per_process) + " (on the node), not " +
                                    std::to_string(anchor.processes));
  if (anchor.steps < 1) return outside("steps", "at least 1, not " + std::to_string(anchor.steps));
  const std::pair<const char*, double> timed[] = {{"forward_seconds", anchor.forward_seconds},
                                                  {"backward_seconds", anchor.backward_seconds},
                                                  {"iteration_seconds", anchor.iteration_seconds}};
  for (const auto& [field, value] : timed)
    if (!(std::isfinite(value) && value > 0 && value <= records::max_record_seconds))
      return outside(field, "a finite number in (0, 1e6], not " + json(value).dump());
  const std::pair<const char*, double> summed[] = {
      {"layers_forward_seconds", anchor.layers_forward_seconds},
      {"layers_backward_seconds", anchor.layers_backward_seconds},
      {"optimizer_seconds", anchor.optimizer_seconds},
      {"streaming_seconds", anchor.streaming_seconds},
      {"iteration_coefficient_of_variation", anchor.iteration_coefficient_of_variation}};
  for (const auto& [field, value] : summed)
    if (!(std::isfinite(value) && value >= 0 && value <= records::max_record_seconds))
      return outside(field, "a finite number in [0, 1e6], not " + json(value).dump());
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
            layer.coefficient_of_variation >= 0 && layer.threads >= 1 && layer.co_running >= 1 &&
            layer.repetitions >= 0))
        return bad_input(origin + ": (/measured_layers/" + key.to_text() +
                         ") needs threads and co-running >= 1, seconds > 0, a coefficient of variation >= 0");
      else if (layer.threads > records::max_threads_per_process ||
               layer.co_running > records::max_threads_per_process || layer.seconds > records::max_record_seconds ||
               layer.repetitions < 1)
        // A band divides the median's noise by the root of the repetitions.
        return bad_input(origin + ": (/measured_layers/" + key.to_text() + ") needs threads and co-running 1.." +
                         std::to_string(records::max_threads_per_process) + ", seconds up to 1e6 and repetitions >= 1");
  if (auto valid = check_link(calibration.links.intra_node, origin, "/links/intra_node",
                              records::intra_node_bandwidth_gbs_range);
      !valid)
    return valid;
  // An unmeasured inter-node link is stored as (0, 0): predictions take the --network preset.
  if (calibration.links.inter_node.measured)
    if (auto valid = check_link(calibration.links.inter_node, origin, "/links/inter_node",
                                records::inter_node_bandwidth_gbs_range);
        !valid)
      return valid;
  if (!(std::isfinite(calibration.summary.held_out_log_sd) && calibration.summary.held_out_log_sd >= 0))
    return bad_input(origin + ": (/fit/held_out_log_sd) must be a finite number >= 0");
  return {};
}

// The parameters, their bootstrap replicates and their estimates, by name (parameter_table).
// The parameters a file's writer knew are those its fit report lists, in the order of the
// replicates' columns. One it did not know (the file predates it) loads at its prior, pinned;
// one it knew but left out is a damaged file. Parameters this dnntune does not know are dropped.
// Throws json::exception on members of the wrong type.
Expected<void> read_parameters(const json& in, const std::string& origin, Calibration& calibration) {
  const auto& table = parameter_table();
  const json& values = in.at("parameters");
  std::vector<std::string> columns;  // the writer's parameters, in its flat order
  std::map<std::string, ParameterEstimate> estimates;
  for (const auto& item : in.at("fit").at("parameters")) {
    ParameterEstimate estimate{item.at("name").get<std::string>(), item.at("value").get<double>(),
                               item.at("low").get<double>(), item.at("high").get<double>(),
                               item.at("pinned").get<bool>()};
    columns.push_back(estimate.name);
    estimates.emplace(estimate.name, std::move(estimate));
  }
  const bool writer_listed_parameters = !columns.empty();
  if (!writer_listed_parameters)  // a file without a fit report: its columns are this table's
    for (const ParameterDescriptor& descriptor : table) columns.push_back(descriptor.name);

  for (const ParameterDescriptor& descriptor : table) {
    double& value = descriptor.value_in(calibration.parameters);  // the prior until read
    if (values.contains(descriptor.name)) {
      value = values.at(descriptor.name).get<double>();
    } else if (!writer_listed_parameters || estimates.count(descriptor.name)) {
      return bad_input(origin + ": (/parameters/" + descriptor.name + ") is missing");
    }
    auto estimate = estimates.find(descriptor.name);
    if (writer_listed_parameters)
      calibration.summary.parameters.push_back(estimate != estimates.end()
                                                   ? estimate->second
                                                   : ParameterEstimate{descriptor.name, value, value, value, true});
  }

  std::vector<int> column_of;  // per table row, its column in the file's replicates, or -1
  for (const ParameterDescriptor& descriptor : table) {
    const auto found = std::find(columns.begin(), columns.end(), descriptor.name);
    column_of.push_back(found == columns.end() ? -1 : static_cast<int>(found - columns.begin()));
  }
  const auto prior_or_loaded = flatten(calibration.parameters);
  for (const auto& replicate : in.at("bootstrap_parameters").get<std::vector<std::vector<double>>>()) {
    if (replicate.size() != columns.size())
      return bad_input(origin + ": a bootstrap replicate has " + std::to_string(replicate.size()) +
                       " parameters, expected " + std::to_string(columns.size()));
    std::vector<double> row = prior_or_loaded;  // a parameter the writer did not know is pinned
    for (std::size_t index = 0; index < table.size(); ++index)
      if (column_of[index] >= 0) row[index] = replicate[column_of[index]];
    calibration.bootstrap_parameters.push_back(std::move(row));
  }
  return {};
}

}  // namespace

std::string to_json_text(const Calibration& calibration) {
  json out = {{"schema", calibration_schema},
              {"schema_version", calibration_schema_version},
              {"backend", calibration.backend},
              {"backend_version", calibration.backend_version},
              {"machine", json::parse(records::to_json_text(calibration.machine))}};
  json parameters = json::object();
  for (const ParameterDescriptor& descriptor : parameter_table())
    parameters[descriptor.name] = descriptor.value_in(calibration.parameters);
  out["parameters"] = parameters;
  out["bootstrap_parameters"] = calibration.bootstrap_parameters;
  json measured = json::object();
  for (const auto& [key, layers] : calibration.measured_layers) {
    json list = json::array();
    for (const auto& layer : layers)
      list.push_back({layer.threads, layer.smt, layer.co_running, layer.seconds, layer.coefficient_of_variation,
                      layer.repetitions});
    measured[key.to_text()] = list;
  }
  out["measured_layers"] = measured;
  out["fused_passes"] = calibration.fused_passes;
  out["links"] = {{"intra_node", link_to_json(calibration.links.intra_node)},
                  {"inter_node", link_to_json(calibration.links.inter_node)}};
  json anchors = json::array();
  for (const Anchor& anchor : calibration.anchors)
    anchors.push_back({{"network", anchor.network},
                       {"batch", anchor.batch},
                       {"threads", anchor.threads},
                       {"smt", anchor.smt},
                       {"processes", anchor.processes},
                       {"steps", anchor.steps},
                       {"forward_seconds", anchor.forward_seconds},
                       {"backward_seconds", anchor.backward_seconds},
                       {"iteration_seconds", anchor.iteration_seconds},
                       {"iteration_coefficient_of_variation", anchor.iteration_coefficient_of_variation},
                       {"layers_forward_seconds", anchor.layers_forward_seconds},
                       {"layers_backward_seconds", anchor.layers_backward_seconds},
                       {"optimizer_seconds", anchor.optimizer_seconds},
                       {"streaming_seconds", anchor.streaming_seconds},
                       {"runs", anchor.runs},
                       {"between_runs_log_sd", anchor.between_runs_log_sd}});
  out["anchors"] = anchors;
  if (!calibration.context_ratios.empty()) {
    json context = json::array();
    for (const ContextRatio& ratio : calibration.context_ratios)
      context.push_back({{"pass", ratio.pass},
                         {"ratio", ratio.ratio},
                         {"log_sd", ratio.log_sd},
                         {"modules", ratio.modules},
                         {"runs", ratio.runs},
                         {"threads", ratio.threads}});
    out["context_ratios"] = context;
  }
  if (calibration.allocation) out["allocation"] = allocation_to_json(*calibration.allocation);
  const FitSummary& summary = calibration.summary;
  json estimates = json::array();
  for (const auto& estimate : summary.parameters)
    estimates.push_back({{"name", estimate.name},
                         {"value", estimate.value},
                         {"low", estimate.low},
                         {"high", estimate.high},
                         {"pinned", estimate.pinned}});
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

namespace {

// Every real step the calibration holds (its anchors, the setups PyTorch timed) no faster than
// the roofline of the cores it ran on (model/plausibility.hpp): a step of 1e-6 s for resnet152 on
// two cores answered 64000000 images/s and changed an allocator pick. Built-in networks only (a
// network file named in a calibration is not read from here); the answers' gate covers the rest.
Expected<void> check_measured_steps(const Calibration& calibration, const std::string& origin) {
  std::map<std::string, std::optional<workloads::Network>> networks;
  const auto network_named = [&](const std::string& name) -> const workloads::Network* {
    auto [found, added] = networks.try_emplace(name);
    if (added) {
      const auto& known = workloads::known_network_names();
      if (std::find(known.begin(), known.end(), name) != known.end())
        if (auto built = workloads::build_network(name)) found->second = std::move(*built);
    }
    return found->second ? &*found->second : nullptr;
  };
  for (std::size_t index = 0; index < calibration.anchors.size(); ++index) {
    const Anchor& anchor = calibration.anchors[index];
    if (const workloads::Network* network = network_named(anchor.network))
      if (auto held = check_measured_step(*network, anchor.batch, anchor.processes, anchor.threads,
                                          anchor.iteration_seconds, calibration.machine, origin,
                                          "/anchors/" + std::to_string(index) + "/iteration_seconds");
          !held)
        return held;
  }
  if (!calibration.allocation) return {};
  const auto& setups = calibration.allocation->pytorch_setups;
  for (std::size_t index = 0; index < setups.size(); ++index)
    if (const workloads::Network* network = network_named(setups[index].network))
      for (const double seconds : setups[index].iteration_seconds)
        if (auto held =
                check_measured_step(*network, setups[index].batch, setups[index].processes, setups[index].threads,
                                    seconds, calibration.machine, origin,
                                    "/allocation/pytorch_setups/" + std::to_string(index) + "/iteration_seconds");
            !held)
          return held;
  return {};
}

}  // namespace

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
    auto machine = records::machine_profile_from_json_text(in.at("machine").dump(), origin + " (machine)");
    if (!machine) return machine.error();
    calibration.machine = std::move(*machine);
    if (auto read = read_parameters(in, origin, calibration); !read) return read.error();
    for (const auto& [text, list] : in.at("measured_layers").items()) {
      auto key = MeasuredLayerKey::from_text(text);
      if (!key) return bad_input(origin + ": (/measured_layers) " + key.error().message);
      for (const auto& item : list)
        calibration.measured_layers[*key].push_back({json_integer<int>(item.at(0)), item.at(1).get<bool>(),
                                                     json_integer<int>(item.at(2)), item.at(3).get<double>(),
                                                     item.at(4).get<double>(), json_integer<int>(item.at(5))});
    }
    if (in.contains("fused_passes"))  // absent in calibrations written before dnntune 0.2
      calibration.fused_passes = in.at("fused_passes").get<std::set<std::string>>();
    calibration.links.intra_node = link_from_json(in.at("links").at("intra_node"));
    calibration.links.inter_node = link_from_json(in.at("links").at("inter_node"));
    if (in.contains("anchors"))  // absent in calibrations written before anchors
      for (const auto& item : in.at("anchors")) {
        calibration.anchors.push_back(
            {item.at("network").get<std::string>(), json_integer<std::int64_t>(item.at("batch")),
             json_integer<int>(item.at("threads")), item.at("smt").get<bool>(), json_integer<int>(item.at("processes")),
             json_integer<int>(item.at("steps")), item.at("forward_seconds").get<double>(),
             item.at("backward_seconds").get<double>(), item.at("iteration_seconds").get<double>(),
             item.at("iteration_coefficient_of_variation").get<double>(),
             item.at("layers_forward_seconds").get<double>(), item.at("layers_backward_seconds").get<double>()});
        // Absent in calibrations written before anchors kept their optimizer: the streaming
        // terms then stay the model's.
        calibration.anchors.back().optimizer_seconds = item.value("optimizer_seconds", 0.0);
        calibration.anchors.back().streaming_seconds = item.value("streaming_seconds", 0.0);
        // Absent in calibrations written before anchors pooled repeated runs: one run.
        if (item.contains("runs")) calibration.anchors.back().runs = json_integer<int>(item.at("runs"));
        calibration.anchors.back().between_runs_log_sd = item.value("between_runs_log_sd", 0.0);
        const Anchor& read = calibration.anchors.back();
        if (read.runs < 1 || !std::isfinite(read.between_runs_log_sd) || read.between_runs_log_sd < 0)
          return bad_input(origin + ": anchors: runs must be at least 1 and between_runs_log_sd finite and at least 0");
        const std::string where = origin + ": (/anchors/" + std::to_string(calibration.anchors.size() - 1) + ")";
        if (auto bounded = check_anchor_bounds(read, where); !bounded) return bounded.error();
      }
    if (in.contains("context_ratios"))  // absent without module times: no context correction
      for (const auto& item : in.at("context_ratios")) {
        // A per-class ratio of an earlier dnntune is left out: the next refit pools them per pass.
        if (item.contains("class")) continue;
        ContextRatio ratio{
            item.at("pass").get<std::string>(), item.at("ratio").get<double>(),
            item.at("log_sd").get<double>(),    json_integer<int>(item.at("modules")),
            json_integer<int>(item.at("runs")), item.contains("threads") ? json_integer<int>(item.at("threads")) : 1};
        if ((ratio.pass != "forward" && ratio.pass != "backward") || !std::isfinite(ratio.ratio) ||
            !(ratio.ratio > 0) || !std::isfinite(ratio.log_sd) || ratio.log_sd < 0 || ratio.threads < 1)
          return bad_input(origin +
                           ": context_ratios: a ratio needs pass forward or backward, "
                           "a finite ratio above 0, a finite log_sd of at least 0 and threads of at least 1");
        calibration.context_ratios.push_back(std::move(ratio));
      }
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
    summary.held_out_by_class = errors_from_json(fit.at("held_out_by_class"));
    summary.held_out_by_setting = errors_from_json(fit.at("held_out_by_setting"));
    summary.sources = fit.at("sources").get<std::vector<std::string>>();
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin);
  }
  if (auto valid = check_values(calibration, origin); !valid) return valid.error();
  if (auto physical = check_measured_steps(calibration, origin); !physical) return physical.error();
  return calibration;
}

Expected<Calibration> read_calibration(const std::string& path) {
  auto document = read_json_file(path);
  if (!document) return document.error();
  return calibration_from_json_text(document->dump(), path);
}

}  // namespace dnntune::model
