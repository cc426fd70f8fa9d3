// tests/train_torch_network_test.cpp — the workload graph as libtorch modules: every built-in
// network has exactly the zoo's parameters under torchvision's names, the loss is a real
// cross-entropy, and SGD on a fixed tiny batch lowers it.
#include "tests/torch_catch.hpp"

#include <cmath>

#include "train/torch_network.hpp"
#include "tests/cli_support.hpp"
#include "workloads/builder.hpp"
#include "workloads/zoo.hpp"

using dnntune::train::TorchNetwork;

namespace {

dnntune::workloads::Network tiny_network() {
  auto network = dnntune::workloads::load_network(dnntune::test::source_path("tests/fixtures/tiny_network.json"));
  REQUIRE(network);
  return *network;
}

}  // namespace

TEST_CASE("every built-in network builds with the zoo's parameter count", "[slow]") {
  for (const std::string& name : dnntune::workloads::known_network_names()) {
    INFO(name);
    const auto workload = dnntune::workloads::build_network(name);
    REQUIRE(workload);
    std::int64_t zoo_parameters = 0;
    for (const auto& layer : workload->layers) zoo_parameters += layer.parameters;
    const auto network = TorchNetwork::build(*workload);
    REQUIRE(network);
    CHECK(network->parameter_count() == zoo_parameters);
  }
}

TEST_CASE("parameters carry torchvision's module paths, in layer order", "[slow]") {
  const auto workload = dnntune::workloads::build_network("resnet18");
  REQUIRE(workload);
  const auto network = TorchNetwork::build(*workload);
  REQUIRE(network);
  const auto named = network->named_parameters();
  REQUIRE(named.size() == 62);  // torchvision's resnet18 has 62 parameter tensors
  CHECK(named.front().first == "conv1.weight");
  CHECK(named[2].first == "bn1.bias");
  CHECK(named.back().first == "fc.bias");
  CHECK(named.back().second.sizes() == torch::IntArrayRef{1000});
  bool found_downsample = false;
  for (const auto& [name, tensor] : named)
    if (name == "layer2.0.downsample.0.weight") {
      found_downsample = true;
      CHECK(tensor.sizes() == torch::IntArrayRef{128, 64, 1, 1});
    }
  CHECK(found_downsample);
  CHECK(network->classes() == 1000);
}

TEST_CASE("the loss is the cross-entropy of the logits, and SGD on a fixed batch lowers it", "[slow]") {
  torch::manual_seed(3);
  auto network = TorchNetwork::build(tiny_network());
  REQUIRE(network);
  CHECK(network->classes() == 10);
  const torch::Tensor images = torch::randn({8, 3, 16, 16});
  const torch::Tensor labels = torch::randint(0, 10, {8}, torch::kLong);

  const torch::Tensor first = network->forward(images, labels);
  REQUIRE(first.dim() == 0);
  // Untrained logits are small: the loss starts near log(10), the loss of a uniform guess.
  CHECK(first.item<double>() == Approx(std::log(10.0)).epsilon(0.3));

  torch::optim::SGD optimizer(network->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  double last = first.item<double>();
  for (int step = 0; step < 30; ++step) {
    optimizer.zero_grad();
    const torch::Tensor loss = network->forward(images, labels);
    loss.backward();
    optimizer.step();
    last = loss.item<double>();
  }
  CHECK(last < 0.5 * first.item<double>());
}

TEST_CASE("a network without a loss layer has nothing to train", "[slow]") {
  using namespace dnntune::workloads;
  NetworkBuilder builder("no_loss");
  const auto x = builder.input("input", {3, 8, 8});
  builder.layer("conv", conv2d(4, 3), x);
  const auto workload = builder.finish();
  REQUIRE(workload);
  const auto network = TorchNetwork::build(*workload);
  REQUIRE_FALSE(network);
  CHECK(network.error().message.find("no loss layer") != std::string::npos);
}
