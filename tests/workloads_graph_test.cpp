// tests/workloads_graph_test.cpp — network validation (shape mismatches, cycles, names) and
// the network JSON file: round trip of every built-in network, and refusal of bad files.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "common/json_file.hpp"
#include "workloads/builder.hpp"
#include "workloads/costs.hpp"
#include "workloads/network_json.hpp"
#include "workloads/zoo.hpp"
#include "tests/temporary_files.hpp"

using namespace dnntune::workloads;
using nlohmann::json;

namespace {

LayerDefinition define(const std::string& name, const std::string& descriptor, std::vector<std::string> inputs) {
  const auto spec = parse_descriptor(descriptor);
  REQUIRE(spec);
  return {name, *spec, std::move(inputs)};
}

std::string graph_error_of(const std::vector<LayerDefinition>& definitions) {
  const auto network = make_network("user", definitions);
  REQUIRE_FALSE(network);
  CHECK(network.error().kind == dnntune::ErrorKind::bad_input);
  return network.error().message;
}

json small_network_document() {
  return json{{"schema", "dnntune.network"},
              {"schema_version", 1},
              {"name", "small"},
              {"layers",
               {{{"name", "image"}, {"descriptor", "input:ic3ih8iw8"}, {"inputs", json::array()}},
                {{"name", "conv"}, {"descriptor", "conv:ic3ih8iw8oc4kh3kw3sh1ph1"}, {"inputs", {"image"}}},
                {{"name", "relu"}, {"descriptor", "relu:ic4ih8iw8"}, {"inputs", {"conv"}}}}}};
}

std::string file_error(const json& document) {
  const auto network = network_from_json(document, "net.json");
  REQUIRE_FALSE(network);
  return network.error().message;
}

}  // namespace

TEST_CASE("an add of two different shapes names both inputs") {
  const std::string message = graph_error_of({define("image", "input:ic3ih8iw8", {}),
                                              define("wide", "conv:ic3ih8iw8oc8kh1kw1sh1ph0", {"image"}),
                                              define("narrow", "conv:ic3ih8iw8oc4kh1kw1sh1ph0", {"image"}),
                                              define("sum", "add:ic8ih8iw8", {"wide", "narrow"})});
  CHECK(message ==
        "layer 'sum' (add:ic8ih8iw8): inputs 'wide' (8x8x8) and 'narrow' (4x8x8) differ "
        "in shape (add needs equal shapes)");
}

TEST_CASE("a concat of different spatial sizes names both inputs") {
  const std::string message = graph_error_of({define("image", "input:ic3ih8iw8", {}),
                                              define("full", "conv:ic3ih8iw8oc4kh1kw1sh1ph0", {"image"}),
                                              define("half", "conv:ic3ih8iw8oc4kh1kw1sh2ph0", {"image"}),
                                              define("joined", "concat:ic4+4ih8iw8", {"full", "half"})});
  CHECK(message.find("layer 'joined' (concat:ic4+4ih8iw8): inputs 'full' (4x8x8) and 'half' "
                     "(4x4x4) differ in height x width") == 0);
}

TEST_CASE("a cycle is refused with the layers on it, in data-flow order") {
  const std::string message =
      graph_error_of({define("image", "input:ic4ih8iw8", {}), define("a", "relu:ic4ih8iw8", {"c"}),
                      define("b", "relu:ic4ih8iw8", {"a"}), define("c", "add:ic4ih8iw8", {"b", "image"}),
                      define("d", "relu:ic4ih8iw8", {"c"})});
  CHECK(message == "network 'user' has a cycle: 'a' -> 'b' -> 'c' -> 'a'");
  CHECK(graph_error_of({define("self", "relu:ic4ih8iw8", {"self"})}) == "network 'user' has a cycle: 'self' -> 'self'");
}

TEST_CASE("other graph errors name the layer") {
  CHECK(graph_error_of({}) == "network 'user' has no layers");
  CHECK(graph_error_of({define("image", "input:ic4ih8iw8", {}), define("image", "relu:ic4ih8iw8", {"image"})}) ==
        "network 'user': two layers are called 'image'");
  CHECK(graph_error_of({define("image", "input:ic4ih8iw8", {}), define("r", "relu:ic4ih8iw8", {"missing"})}) ==
        "network 'user': layer 'r' reads 'missing', which is not a layer of this network");
  CHECK(graph_error_of({define("image", "input:ic4ih8iw8", {}), define("r", "relu:ic4ih8iw8", {"image", "image"})}) ==
        "layer 'r' (relu:ic4ih8iw8) takes 1 input(s), has 2");
  CHECK(graph_error_of({define("image", "input:ic4ih8iw8", {}), define("r", "relu:ic4ih9iw9", {"image"})}) ==
        "layer 'r' (relu:ic4ih9iw9): input 'image' (4x8x8) does not match the 4x9x9 the layer expects");
  CHECK(graph_error_of({define("image", "input:ic4ih8iw8", {}), define("fc", "linear:ic256oc10", {"image"})})
            .find("layer 'fc' (linear:ic256oc10): input 'image' (4x8x8) does not match the 256x1x1") == 0);
}

TEST_CASE("the builder reports shape errors at finish, naming the layer") {
  NetworkBuilder net("built");
  const auto image = net.input("image", {3, 8, 8});
  const auto big = net.layer("big", conv2d(4, 11), image);  // 11x11 kernel on 8x8
  net.layer("after", relu(), big);
  const auto network = net.finish();
  REQUIRE_FALSE(network);
  CHECK(network.error().message.find("network 'built': layer 'big': kernel 11") == 0);

  NetworkBuilder mismatched("mismatched");
  const auto x = mismatched.input("image", {3, 8, 8});
  const auto left = mismatched.layer("left", conv2d(4, 1), x);
  const auto right = mismatched.layer("right", conv2d(4, 1, 2), x);
  mismatched.layer("sum", add(), {left, right});
  const auto refused = mismatched.finish();
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("inputs 'left' (4x8x8) and 'right' (4x4x4) differ in shape") != std::string::npos);
}

TEST_CASE("layers defined out of order are sorted topologically") {
  const auto network =
      make_network("user", {define("r", "relu:ic4ih8iw8", {"image"}), define("image", "input:ic4ih8iw8", {})});
  REQUIRE(network);
  CHECK(network->layers[0].name == "image");
  CHECK(network->layers[1].name == "r");
  CHECK(network->layers[1].inputs == std::vector<int>{0});
}

TEST_CASE("every built-in network round-trips through its JSON file") {
  for (const std::string& name : known_network_names()) {
    INFO(name);
    const auto network = build_network(name);
    REQUIRE(network);
    const auto written = network_to_json(*network, 16);
    REQUIRE(written);
    CHECK((*written)["schema"] == network_schema);
    CHECK((*written)["totals"]["parameters"] == network_cost(*network, 1)->parameters);
    // Through text, as a file would be.
    const auto parsed = dnntune::parse_json(written->dump(2), name + ".json");
    REQUIRE(parsed);
    const auto read = network_from_json(*parsed, name + ".json");
    INFO((read ? "" : read.error().message));
    REQUIRE(read);
    CHECK(read->name == network->name);
    REQUIRE(read->layers.size() == network->layers.size());
    for (std::size_t id = 0; id < network->layers.size(); ++id) {
      CHECK(read->layers[id].name == network->layers[id].name);
      CHECK(read->layers[id].spec == network->layers[id].spec);
      CHECK(read->layers[id].inputs == network->layers[id].inputs);
    }
    CHECK(*network_to_json(*read, 16) == *written);
  }
}

TEST_CASE("a user-defined network file loads through load_network") {
  const std::string path = dnntune::test::temporary_directory("workloads-test") + "/small.json";
  REQUIRE(dnntune::write_json_file(path, small_network_document()));
  const auto network = load_network(path);
  REQUIRE(network);
  CHECK(network->name == "small");
  CHECK(network->layers.back().output == Shape{4, 8, 8});
  CHECK(network_cost(*network, 1)->parameters == 4 * 3 * 9);
  std::remove(path.c_str());
}

TEST_CASE("bad network files are refused with the file and the member") {
  CHECK(file_error(json::array()) == "net.json: expected a JSON object at the top level");
  json document = small_network_document();
  document["schema"] = "dnntune-machine";
  CHECK(file_error(document).find("net.json: is a \"dnntune-machine\" file") == 0);

  document = small_network_document();
  document["layers"][1].erase("descriptor");
  CHECK(file_error(document).find("net.json: ") == 0);
  CHECK(file_error(document).find("descriptor") != std::string::npos);

  document = small_network_document();
  document["layers"][1]["inputs"] = "image";
  CHECK(file_error(document).find("/layers/1/inputs") != std::string::npos);

  document = small_network_document();
  document["layers"][1]["descriptor"] = "conv:ic3ih8iw8oc4kh3kw3sh1ph1bias7";
  CHECK(file_error(document) ==
        "net.json: layer 'conv': layer descriptor 'conv:ic3ih8iw8oc4kh3kw3sh1ph1bias7': 'bias' must be 0 or 1");

  document = small_network_document();
  document["layers"][2]["descriptor"] = "relu:ic8ih8iw8";
  CHECK(file_error(document) ==
        "net.json: layer 'relu' (relu:ic8ih8iw8): input 'conv' (4x8x8) does "
        "not match the 8x8x8 the layer expects");

  document = small_network_document();
  document["layers"][0]["inputs"] = {"relu"};
  CHECK(file_error(document).find("net.json: network 'small' has a cycle: ") == 0);

  document = small_network_document();
  document["layers"] = json::object();
  CHECK(file_error(document) == "net.json: \"layers\" must be an array of layers");
}

TEST_CASE("a network that computes nothing, or of more layers than dnntune predicts, is refused when read") {
  // Only its input: 320,000,000 images/s on a CPU, inf on a GPU, before.
  json only_input = small_network_document();
  only_input["layers"] = json::array({only_input["layers"][0]});
  CHECK(file_error(only_input).find("net.json: network 'small' computes nothing") == 0);
  CHECK(graph_error_of({define("image", "input:ic3ih8iw8", {}), define("flat", "flatten:ic3ih8iw8", {"image"})})
            .find("computes nothing") != std::string::npos);
  CHECK(network_from_json(small_network_document(), "net.json"));

  json deep = small_network_document();
  std::string previous = "relu";
  for (std::size_t index = deep["layers"].size(); index <= max_network_layers; ++index) {
    const std::string name = "relu" + std::to_string(index);
    deep["layers"].push_back({{"name", name}, {"descriptor", "relu:ic4ih8iw8"}, {"inputs", {previous}}});
    previous = name;
  }
  REQUIRE(deep["layers"].size() == max_network_layers + 1);
  CHECK(file_error(deep).find("has 4097 layers, more than the 4096 dnntune predicts") != std::string::npos);
  deep["layers"].erase(deep["layers"].size() - 1);
  CHECK(network_from_json(deep, "net.json"));
}
