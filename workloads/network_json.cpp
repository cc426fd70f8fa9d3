// workloads/network_json.cpp — writing and reading network files (see network_json.hpp).
#include "workloads/network_json.hpp"

#include "common/json_file.hpp"
#include "workloads/costs.hpp"

namespace dnntune::workloads {
namespace {

using nlohmann::json;

json pass_json(const PassCost& cost) { return {{"flops", cost.flops}, {"macs", cost.macs}, {"bytes", cost.bytes}}; }

json shape_json(const Shape& shape) { return json::array({shape.channels, shape.height, shape.width}); }

json layer_json(const Network& network, const Layer& layer, std::int64_t batch) {
  json inputs = json::array();
  for (const int input : layer.inputs) inputs.push_back(network.layers[input].name);
  const LayerCost cost = layer_cost(layer, batch);
  return {{"name", layer.name},
          {"kind", kind_name(layer.spec.kind)},
          {"descriptor", layer.descriptor},
          {"inputs", inputs},
          {"output", shape_json(layer.output)},
          {"parameters", layer.parameters},
          {"computes_data_gradient", layer.computes_data_gradient},
          {"runs_backward", layer.runs_backward},
          {"forward", pass_json(cost.forward)},
          {"backward_data", pass_json(cost.backward_data)},
          {"backward_weights", pass_json(cost.backward_weights)},
          {"saved_activation_bytes", cost.saved_activation_bytes}};
}

json totals_json(const NetworkCost& cost) {
  return {{"layers", cost.layers},
          {"distinct_layers", cost.distinct_layers},
          {"parameters", cost.parameters},
          {"forward", pass_json(cost.forward)},
          {"backward_data", pass_json(cost.backward_data)},
          {"backward_weights", pass_json(cost.backward_weights)},
          {"gradient_sums", pass_json(cost.gradient_sums)},
          {"training", pass_json(cost.training())},
          {"gradient_bytes", cost.gradient_bytes},
          {"optimizer_update_flops", cost.optimizer_update_flops},
          {"optimizer_update_bytes", cost.optimizer_update_bytes},
          {"activation_bytes_kept", cost.activation_bytes_kept}};
}

// A name printed into reports, job scripts and launch lines: control characters (a newline
// would start a line of its own in a generated script) are refused.
bool printable_name(const std::string& name) {
  for (const unsigned char character : name)
    if (character < 0x20 || character == 0x7f) return false;
  return !name.empty();
}

// Reads one layer's definition; throws nlohmann exceptions (with the member's path) on a
// missing member or a wrong type.
Expected<LayerDefinition> read_layer(const json& entry, const std::string& origin) {
  LayerDefinition definition;
  definition.name = entry.at("name").get<std::string>();
  if (!printable_name(definition.name))
    return bad_input(origin + ": a layer name is empty or holds control characters (newlines, tabs, ...)");
  definition.inputs = entry.at("inputs").get<std::vector<std::string>>();
  const auto spec = parse_descriptor(entry.at("descriptor").get<std::string>());
  if (!spec) return bad_input(origin + ": layer '" + definition.name + "': " + spec.error().message);
  definition.spec = *spec;
  return definition;
}

}  // namespace

Expected<json> network_to_json(const Network& network, std::int64_t batch) {
  const auto cost = network_cost(network, batch);
  if (!cost) return cost.error();
  json layers = json::array();
  for (const Layer& layer : network.layers) layers.push_back(layer_json(network, layer, batch));
  json distinct = json::array();
  for (const DistinctLayer& entry : distinct_layers(network))
    distinct.push_back({{"descriptor", entry.descriptor},
                        {"count", entry.count},
                        {"first_layer", network.layers[entry.first_layer].name}});
  return json{{"schema", network_schema},
              {"schema_version", network_schema_version},
              {"name", network.name},
              {"batch", batch},
              {"layers", layers},
              {"distinct_layers", distinct},
              {"totals", totals_json(*cost)}};
}

Expected<Network> network_from_json(const json& document, const std::string& origin) {
  if (auto ok = check_schema(document, network_schema, network_schema_version, origin); !ok) return ok.error();
  std::string name;
  std::vector<LayerDefinition> definitions;
  try {
    name = document.at("name").get<std::string>();
    if (!printable_name(name))
      return bad_input(origin +
                       ": (/name) the network name is empty or holds control characters (newlines, tabs, ...)");
    const json& layers = document.at("layers");
    if (!layers.is_array()) return bad_input(origin + ": \"layers\" must be an array of layers");
    for (const json& entry : layers) {
      auto definition = read_layer(entry, origin);
      if (!definition) return definition.error();
      definitions.push_back(std::move(*definition));
    }
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin);
  }
  auto network = make_network(name, definitions);
  if (!network) return bad_input(origin + ": " + network.error().message);
  return network;
}

Expected<Network> read_network_file(const std::string& path) {
  const auto document = read_json_file(path);
  if (!document) return document.error();
  return network_from_json(*document, path);
}

}  // namespace dnntune::workloads
