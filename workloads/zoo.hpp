// workloads/zoo.hpp — the built-in networks, and the one way every command turns a --model
// argument into a Network: a built-in name, or else a path to a network JSON file.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "workloads/graph.hpp"

namespace dnntune::workloads {

// The built-in networks, in the order `dnntune models` lists them: resnet18, resnet34,
// resnet50, resnet101, resnet152, inception_v3 (with the auxiliary classifier, as torchvision
// trains it), inception_v3_noaux, inception_v4, vgg16, alexnet, mobilenet_v2.
const std::vector<std::string>& known_network_names();

// Builds a built-in network; an unknown name fails with the list of known ones.
Expected<Network> build_network(const std::string& name);

// A built-in name, or else a path to a network JSON file (network_json.hpp). A built-in name
// wins over a file of the same name in the working directory; write ./NAME for the file.
Expected<Network> load_network(const std::string& name_or_path);

}  // namespace dnntune::workloads
