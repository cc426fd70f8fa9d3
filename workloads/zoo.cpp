// workloads/zoo.cpp — the table of built-in networks, load_network, and the building blocks
// the zoo files share (see zoo.hpp, zoo_networks.hpp).
#include "workloads/zoo.hpp"

#include <filesystem>
#include <functional>
#include <utility>

#include "workloads/network_json.hpp"
#include "workloads/zoo_networks.hpp"

namespace dnntune::workloads {
namespace {

using Builder = std::function<Expected<Network>()>;

const std::vector<std::pair<std::string, Builder>>& builders() {
  static const std::vector<std::pair<std::string, Builder>> table{
      {"resnet18", [] { return zoo::build_resnet(18); }},
      {"resnet34", [] { return zoo::build_resnet(34); }},
      {"resnet50", [] { return zoo::build_resnet(50); }},
      {"resnet101", [] { return zoo::build_resnet(101); }},
      {"resnet152", [] { return zoo::build_resnet(152); }},
      {"inception_v3", [] { return zoo::build_inception_v3(true); }},
      {"inception_v3_noaux", [] { return zoo::build_inception_v3(false); }},
      {"inception_v4", zoo::build_inception_v4},
      {"vgg16", zoo::build_vgg16},
      {"alexnet", zoo::build_alexnet},
      {"mobilenet_v2", zoo::build_mobilenet_v2},
  };
  return table;
}

std::string known_list() {
  std::string list;
  for (const std::string& name : known_network_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

}  // namespace

const std::vector<std::string>& known_network_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& [name, build] : builders()) list.push_back(name);
    return list;
  }();
  return names;
}

Expected<Network> build_network(const std::string& name) {
  for (const auto& [known, build] : builders())
    if (known == name) return build();
  return bad_input("unknown network '" + name + "' (built-in: " + known_list() + ")");
}

Expected<Network> load_network(const std::string& name_or_path) {
  for (const auto& [known, build] : builders())
    if (known == name_or_path) return build();
  std::error_code ignored;
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               name_or_path.find('.') != std::string::npos ||
                               std::filesystem::exists(name_or_path, ignored);
  if (looks_like_path) return read_network_file(name_or_path);
  return bad_input("unknown network '" + name_or_path + "' (built-in: " + known_list() +
                   "; or give the path of a network JSON file, as `dnntune models show NAME "
                   "--json` writes)");
}

namespace zoo {

LayerId basic_conv2d(NetworkBuilder& net, LayerId x, const std::string& prefix, std::int64_t out_channels,
                     HeightWidth kernel, HeightWidth stride, HeightWidth padding) {
  x = net.layer(prefix + ".conv", conv2d(out_channels, kernel, stride, padding), x);
  x = net.layer(prefix + ".bn", batch_norm2d(0.001), x);
  return net.layer(prefix + ".relu", relu(), x);
}

LayerId loss(NetworkBuilder& net, LayerId logits, const std::string& name) {
  return net.layer(name, softmax_cross_entropy(), logits);
}

}  // namespace zoo
}  // namespace dnntune::workloads
