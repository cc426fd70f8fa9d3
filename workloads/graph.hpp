// workloads/graph.hpp — a network as a DAG of layers, validated and in topological order.
// make_network is the one place where a network is checked (built-in ones through
// NetworkBuilder, files through network_json.hpp): unique names, known inputs, no cycles,
// inputs whose number and shapes match each layer's spec. Errors name the layers involved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "workloads/layer.hpp"

namespace dnntune::workloads {

// One layer in a network: a plain struct, cheap to copy.
struct Layer {
  // Unique in the network. Layers with parameters carry their PyTorch module path
  // ("layer1.0.conv1", "Mixed_5b.branch1x1.conv", "fc"), so parameters map 1:1 onto the
  // reference model's state_dict; other layers get names in the same namespace.
  std::string name;
  LayerSpec spec;
  std::string descriptor;   // to_descriptor(spec): batch-free, equal for identical layers
  std::vector<int> inputs;  // ids (indices in Network::layers) of the producers, in order
  Shape output;             // per image
  std::int64_t parameters = 0;
  // Whether backward-data runs: some input carries a gradient. False for a layer fed only by
  // the image (the first convolution), as in PyTorch where the input needs no gradient.
  bool computes_data_gradient = false;
  // Whether the layer appears in the backward pass at all (has parameters, or passes a
  // gradient on). Batch norm and ReLU are always layers of their own, never fused.
  bool runs_backward = false;
};

struct Network {
  std::string name;
  // Topologically ordered: every input id of layers[i] is smaller than i.
  std::vector<Layer> layers;

  // The id of the layer called `name`, or -1.
  int find(const std::string& layer_name) const;
  // The shape of the (first) input layer: the image size.
  Shape input_shape() const;
};

// A layer as written by whoever defines a network: inputs by name, in any order.
struct LayerDefinition {
  std::string name;
  LayerSpec spec;
  std::vector<std::string> inputs;
};

// The most layers a network may have: every prediction walks all of them, for every configuration
// a search scores and every bootstrap replicate of its band (a 100,000-layer file ran past 120 s
// without a word). Eight times the largest built-in network (resnet152, 517 layers).
constexpr std::size_t max_network_layers = 4096;

// Validates `definitions` and returns the network, ordered topologically (stable: already
// ordered definitions keep their order). Fails on: no layers, empty or repeated names, an
// input that is not a layer, a cycle (the message lists it: "a -> b -> a"), a spec that does
// not describe a valid layer, a wrong number of inputs, inputs whose shapes disagree with each
// other (add of different shapes, concat of different spatial sizes) or with the spec. A whole
// network's per-image work is bounded (2^44 FLOPs and bytes) so costs fit in 64-bit integers;
// it has at most max_network_layers layers and at least one that computes something (a network of
// only its input layer trains in no time: 320,000,000 images/s).
Expected<Network> make_network(const std::string& name, const std::vector<LayerDefinition>& definitions);

}  // namespace dnntune::workloads
