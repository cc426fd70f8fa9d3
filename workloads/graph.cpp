// workloads/graph.cpp — validating and ordering a network DAG (see graph.hpp).
#include "workloads/graph.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>

#include "workloads/costs.hpp"

namespace dnntune::workloads {
namespace {

// Bound on a whole network's per-image FLOPs and bytes: at max_batch (2^16) every total
// stays below 2^60.
constexpr double max_network_cost_per_image = 17592186044416.0;  // 2^44

std::string quoted(const std::string& name) { return "'" + name + "'"; }

// Kahn's algorithm, always taking the ready layer that was defined first, so that definitions
// already in topological order keep their order. Returns the order, shorter than the
// definitions when there is a cycle.
std::vector<int> topological_order(const std::vector<std::vector<int>>& inputs) {
  const int count = static_cast<int>(inputs.size());
  std::vector<int> missing_inputs(count);
  std::vector<std::vector<int>> consumers(count);
  for (int layer = 0; layer < count; ++layer) {
    missing_inputs[layer] = static_cast<int>(inputs[layer].size());
    for (const int producer : inputs[layer]) consumers[producer].push_back(layer);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int layer = 0; layer < count; ++layer)
    if (missing_inputs[layer] == 0) ready.push(layer);
  std::vector<int> order;
  while (!ready.empty()) {
    const int layer = ready.top();
    ready.pop();
    order.push_back(layer);
    for (const int consumer : consumers[layer])
      if (--missing_inputs[consumer] == 0) ready.push(consumer);
  }
  return order;
}

// Called when topological_order left layers out: walks back along inputs among them until a
// layer repeats, and prints that cycle in data-flow order ("a -> b -> a").
std::string describe_cycle(const std::vector<LayerDefinition>& definitions, const std::vector<std::vector<int>>& inputs,
                           const std::vector<int>& order) {
  std::vector<bool> ordered(definitions.size(), false);
  for (const int layer : order) ordered[layer] = true;
  int layer = static_cast<int>(std::find(ordered.begin(), ordered.end(), false) - ordered.begin());
  std::vector<int> path;
  std::vector<int> position(definitions.size(), -1);
  while (position[layer] < 0) {
    position[layer] = static_cast<int>(path.size());
    path.push_back(layer);
    // Every left-out layer has a left-out input, or Kahn's algorithm would have taken it.
    for (const int producer : inputs[layer])
      if (!ordered[producer]) {
        layer = producer;
        break;
      }
  }
  std::vector<int> cycle(path.begin() + position[layer], path.end());
  std::reverse(cycle.begin(), cycle.end());
  // Start at the layer defined first, so the message does not depend on where the walk began.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string text;
  for (const int member : cycle) text += quoted(definitions[member].name) + " -> ";
  return text + quoted(definitions[cycle.front()].name);
}

// Checks one layer's inputs against each other and against its spec.
Expected<void> check_inputs(const Layer& layer, const std::vector<Layer>& layers) {
  const std::string where = "layer " + quoted(layer.name) + " (" + layer.descriptor + ")";
  const std::vector<Shape> expected = expected_input_shapes(layer.spec);
  if (expected.size() != layer.inputs.size())
    return bad_input(where + " takes " + std::to_string(expected.size()) + " input(s), has " +
                     std::to_string(layer.inputs.size()));
  const auto name_and_shape = [&layers](int id) {
    return quoted(layers[id].name) + " (" + to_string(layers[id].output) + ")";
  };
  for (std::size_t i = 1; i < layer.inputs.size(); ++i) {
    const Shape& first = layers[layer.inputs[0]].output;
    const Shape& other = layers[layer.inputs[i]].output;
    if (layer.spec.kind == LayerKind::add && first != other)
      return bad_input(where + ": inputs " + name_and_shape(layer.inputs[0]) + " and " +
                       name_and_shape(layer.inputs[i]) + " differ in shape (add needs equal shapes)");
    if (layer.spec.kind == LayerKind::concat && (first.height != other.height || first.width != other.width))
      return bad_input(where + ": inputs " + name_and_shape(layer.inputs[0]) + " and " +
                       name_and_shape(layer.inputs[i]) +
                       " differ in height x width (concat joins channels of equal-sized maps)");
  }
  for (std::size_t i = 0; i < layer.inputs.size(); ++i)
    if (layers[layer.inputs[i]].output != expected[i])
      return bad_input(where + ": input " + name_and_shape(layer.inputs[i]) + " does not match the " +
                       to_string(expected[i]) + " the layer expects");
  return {};
}

}  // namespace

int Network::find(const std::string& layer_name) const {
  for (std::size_t id = 0; id < layers.size(); ++id)
    if (layers[id].name == layer_name) return static_cast<int>(id);
  return -1;
}

Shape Network::input_shape() const {
  for (const Layer& layer : layers)
    if (layer.spec.kind == LayerKind::input) return layer.output;
  return {};
}

Expected<Network> make_network(const std::string& name, const std::vector<LayerDefinition>& definitions) {
  const std::string where = "network " + quoted(name);
  if (definitions.empty()) return bad_input(where + " has no layers");
  if (definitions.size() > max_network_layers)
    return bad_input(where + " has " + std::to_string(definitions.size()) + " layers, more than the " +
                     std::to_string(max_network_layers) + " dnntune predicts");

  std::map<std::string, int> id_by_name;
  for (std::size_t i = 0; i < definitions.size(); ++i) {
    if (definitions[i].name.empty()) return bad_input(where + ": layer #" + std::to_string(i) + " has an empty name");
    if (!id_by_name.emplace(definitions[i].name, static_cast<int>(i)).second)
      return bad_input(where + ": two layers are called " + quoted(definitions[i].name));
  }
  std::vector<std::vector<int>> inputs(definitions.size());
  for (std::size_t i = 0; i < definitions.size(); ++i)
    for (const std::string& input : definitions[i].inputs) {
      const auto found = id_by_name.find(input);
      if (found == id_by_name.end())
        return bad_input(where + ": layer " + quoted(definitions[i].name) + " reads " + quoted(input) +
                         ", which is not a layer of this network");
      inputs[i].push_back(found->second);
    }

  const std::vector<int> order = topological_order(inputs);
  if (order.size() != definitions.size())
    return bad_input(where + " has a cycle: " + describe_cycle(definitions, inputs, order));
  std::vector<int> new_id(definitions.size());
  for (std::size_t position = 0; position < order.size(); ++position)
    new_id[order[position]] = static_cast<int>(position);

  Network network;
  network.name = name;
  std::vector<bool> output_has_gradient;
  double flops_per_image = 0, bytes_per_image = 0;
  for (const int old_id : order) {
    Layer layer;
    layer.name = definitions[old_id].name;
    layer.spec = definitions[old_id].spec;
    const auto output = infer_output_shape(layer.spec);
    if (!output) return bad_input("layer " + quoted(layer.name) + ": " + output.error().message);
    layer.descriptor = to_descriptor(layer.spec);
    layer.output = *output;
    layer.parameters = parameter_count(layer.spec);
    for (const int input : inputs[old_id]) layer.inputs.push_back(new_id[input]);
    if (auto ok = check_inputs(layer, network.layers); !ok) return ok.error();

    // PyTorch's rule: a tensor needs a gradient when it depends on some parameter.
    for (const int input : layer.inputs)
      layer.computes_data_gradient = layer.computes_data_gradient || output_has_gradient[input];
    layer.runs_backward = layer.parameters > 0 || layer.computes_data_gradient;
    output_has_gradient.push_back(layer.runs_backward);

    const LayerCost cost = layer_cost(layer.spec, 1);
    flops_per_image += static_cast<double>(cost.forward.flops) + cost.backward_data.flops + cost.backward_weights.flops;
    bytes_per_image += static_cast<double>(cost.forward.bytes) + cost.backward_data.bytes +
                       cost.backward_weights.bytes + cost.saved_activation_bytes;
    network.layers.push_back(std::move(layer));
  }
  if (flops_per_image > max_network_cost_per_image || bytes_per_image > max_network_cost_per_image)
    return bad_input(where + " is too large: more than 2^44 FLOPs or bytes per image");
  if (!(flops_per_image > 0))
    return bad_input(where +
                     " computes nothing: it needs a layer besides its input (a convolution, a linear layer, ...)");
  return network;
}

}  // namespace dnntune::workloads
