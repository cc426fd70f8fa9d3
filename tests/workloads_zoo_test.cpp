// tests/workloads_zoo_test.cpp — the built-in networks against their reference implementations:
// exact parameter counts and forward multiply-adds, module names, and structural facts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "workloads/costs.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune::workloads;

namespace {

Network built(const std::string& name) {
  auto network = build_network(name);
  INFO(name << ": " << (network ? "" : network.error().message));
  REQUIRE(network);
  return *network;
}

NetworkCost cost_of(const Network& network, std::int64_t batch = 1) {
  auto cost = network_cost(network, batch);
  REQUIRE(cost);
  return *cost;
}

}  // namespace

// Expected figures: parameters = sum(p.numel() for p in model.parameters()), and forward
// multiply-adds per image of every Conv2d and Linear as a forward hook counts them, obtained
// with Debian's python3-torch 1.13 and python3-torchvision 0.14 (/usr/bin/python3):
//
//   def count(model, size, batch=2):
//       macs = [0]
//       def hook(m, inp, out):
//           if isinstance(m, nn.Conv2d):
//               macs[0] += out.numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]
//           else:
//               macs[0] += out.numel() * m.in_features
//       for m in model.modules():
//           if isinstance(m, (nn.Conv2d, nn.Linear)): m.register_forward_hook(hook)
//       model.train()   # the auxiliary head runs in training; batch 2 because batch norm
//       with torch.no_grad():  # in training refuses a single value per channel
//           model(torch.zeros(batch, 3, size, size))
//       return sum(p.numel() for p in model.parameters()), macs[0] // batch
//
//   count(torchvision.models.resnet50(), 224)  # likewise resnet18/34/101/152, vgg16, alexnet,
//                                              # mobilenet_v2 at 224
//   count(torchvision.models.inception_v3(aux_logits=True, init_weights=False), 299)
//   count(torchvision.models.inception_v3(aux_logits=False, init_weights=False), 299)
//   count(InceptionV4(num_classes=1000), 299)
//
// InceptionV4 is Cadene's pretrainedmodels/models/inceptionv4.py (module classes copied
// verbatim). Its 42,679,816 parameters are for 1000 classes; the port's default
// InceptionV4(num_classes=1001) has 1,537 more (one more row of last_linear: 1536 + 1) and
// 1,536 more multiply-adds.
TEST_CASE("every built-in network has torchvision's parameters and forward multiply-adds") {
  struct Reference {
    const char* name;
    std::int64_t parameters;
    std::int64_t forward_macs;
  };
  const Reference references[] = {
      {"resnet18", 11689512, 1814073344},
      {"resnet34", 21797672, 3663761408},
      {"resnet50", 25557032, 4089184256},
      {"resnet101", 44549160, 7801405440},
      {"resnet152", 60192808, 11513626624},
      {"inception_v3", 27161264, 5718899296},
      {"inception_v3_noaux", 23834568, 5713216096},
      {"inception_v4", 42679816, 12253974624},
      {"vgg16", 138357544, 15470264320},
      {"alexnet", 61100840, 714188480},
      {"mobilenet_v2", 3504872, 300774272},
  };
  REQUIRE(known_network_names().size() == std::size(references));
  for (const Reference& reference : references) {
    INFO(reference.name);
    const Network network = built(reference.name);
    const NetworkCost cost = cost_of(network);
    CHECK(network.name == reference.name);
    CHECK(cost.parameters == reference.parameters);
    CHECK(cost.forward.macs == reference.forward_macs);
    CHECK(cost.gradient_bytes == 4 * reference.parameters);
    CHECK(cost.optimizer_update_bytes == 20 * reference.parameters);
  }
}

TEST_CASE("parameterised layers carry the reference model's module names") {
  // From the same models: [n for n, m in model.named_modules() if any(m.parameters(False))].
  const Network resnet = built("resnet50");
  for (const char* name : {"conv1", "bn1", "layer1.0.conv1", "layer1.0.downsample.0", "layer1.0.downsample.1",
                           "layer3.5.bn3", "layer4.2.conv3", "fc"})
    CHECK(resnet.find(name) >= 0);
  const Network inception = built("inception_v3");
  for (const char* name : {"Conv2d_1a_3x3.conv", "Mixed_5b.branch_pool.bn", "Mixed_7c.branch3x3dbl_3b.conv",
                           "AuxLogits.conv0.conv", "AuxLogits.fc", "fc"})
    CHECK(inception.find(name) >= 0);
  CHECK(built("inception_v3_noaux").find("AuxLogits.fc") < 0);
  const Network v4 = built("inception_v4");
  for (const char* name : {"features.0.conv", "features.3.conv.conv", "features.4.branch1.3.bn",
                           "features.6.branch3.1.conv", "features.21.branch2_3b.conv", "last_linear"})
    CHECK(v4.find(name) >= 0);
  const Network mobilenet = built("mobilenet_v2");
  for (const char* name : {"features.0.0", "features.1.conv.0.0", "features.1.conv.1", "features.2.conv.3",
                           "features.18.1", "classifier.1"})
    CHECK(mobilenet.find(name) >= 0);
  CHECK(built("vgg16").find("classifier.6") >= 0);
  CHECK(built("alexnet").find("features.10") >= 0);
}

TEST_CASE("the graphs carry what is needed to rebuild the reference modules") {
  const Network inception = built("inception_v3");
  const LayerSpec& bn = inception.layers[inception.find("Mixed_6b.branch7x7_2.bn")].spec;
  CHECK(bn.batch_norm_epsilon == 0.001);
  const LayerSpec& factorised = inception.layers[inception.find("Mixed_6b.branch7x7_2.conv")].spec;
  CHECK(factorised.kernel_h == 1);
  CHECK(factorised.kernel_w == 7);
  CHECK(factorised.pad_w == 3);
  CHECK(inception.layers[inception.find("dropout")].spec.dropout_probability == 0.5);

  const Network resnet = built("resnet50");
  CHECK(resnet.layers[resnet.find("bn1")].spec.batch_norm_epsilon == 1e-5);
  CHECK_FALSE(resnet.layers[resnet.find("conv1")].spec.bias);
  CHECK(resnet.layers[resnet.find("fc")].spec.bias);
  CHECK(resnet.layers[resnet.find("layer2.0.conv2")].spec.stride_h == 2);  // v1.5: stride on 3x3

  const Network v4 = built("inception_v4");
  const LayerSpec& pool = v4.layers[v4.find("features.6.branch3.0")].spec;
  CHECK_FALSE(pool.count_include_pad);
  CHECK(v4.layers[v4.find("avg_pool")].output == Shape{1536, 1, 1});

  const Network mobilenet = built("mobilenet_v2");
  const LayerSpec& depthwise = mobilenet.layers[mobilenet.find("features.2.conv.1.0")].spec;
  CHECK(depthwise.groups == 96);
  CHECK(mobilenet.layers[mobilenet.find("features.2.conv.1.2")].spec.eltwise == EltwiseAlgorithm::relu6);
  CHECK(mobilenet.layers[mobilenet.find("classifier.0")].spec.dropout_probability == 0.2);
}

TEST_CASE("every built-in network is a DAG from one image input to its losses") {
  for (const std::string& name : known_network_names()) {
    INFO(name);
    const Network network = built(name);
    const std::int64_t size = name.find("inception") == 0 ? 299 : 224;
    CHECK(network.input_shape() == Shape{3, size, size});
    int losses = 0;
    for (std::size_t id = 0; id < network.layers.size(); ++id) {
      const Layer& layer = network.layers[id];
      for (const int input : layer.inputs) CHECK(input < static_cast<int>(id));
      if (layer.spec.kind == LayerKind::softmax_cross_entropy) {
        ++losses;
        CHECK(layer.output == Shape{1000, 1, 1});
      }
      // Only the input layer and layers fed by it alone compute no data gradient.
      const bool fed_by_image_only = std::all_of(layer.inputs.begin(), layer.inputs.end(), [&](int input) {
        return network.layers[input].spec.kind == LayerKind::input;
      });
      CHECK(layer.computes_data_gradient == !fed_by_image_only);
    }
    CHECK(losses == (name == "inception_v3" ? 2 : 1));
  }
}

TEST_CASE("distinct layers dedupe identical shapes across a network") {
  const Network resnet = built("resnet50");
  const auto distinct = distinct_layers(resnet);
  CHECK(static_cast<std::int64_t>(distinct.size()) == cost_of(resnet).distinct_layers);
  std::int64_t occurrences = 0;
  std::set<std::string> descriptors;
  for (const DistinctLayer& entry : distinct) {
    occurrences += entry.count;
    CHECK(descriptors.insert(entry.descriptor).second);
    CHECK(resnet.layers[entry.first_layer].descriptor == entry.descriptor);
  }
  CHECK(occurrences == static_cast<std::int64_t>(resnet.layers.size()) - 1);  // all but the input
  // layer1's two identity blocks share every shape: its 3x3 convolution occurs 3 times.
  const auto conv3x3 = std::find_if(distinct.begin(), distinct.end(), [](const DistinctLayer& entry) {
    return entry.descriptor == "conv:ic64ih56iw56oc64kh3kw3sh1ph1";
  });
  REQUIRE(conv3x3 != distinct.end());
  CHECK(conv3x3->count == 3);
  // Deeper ResNets repeat the same blocks: same distinct layers as ResNet-50.
  CHECK(distinct_layers(built("resnet152")).size() == distinct.size());
}

TEST_CASE("load_network takes a built-in name, an unknown name lists the known ones") {
  auto network = load_network("resnet18");
  REQUIRE(network);
  CHECK(network->name == "resnet18");
  auto unknown = load_network("resnet19");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().kind == dnntune::ErrorKind::bad_input);
  CHECK(unknown.error().message.find("unknown network 'resnet19'") != std::string::npos);
  for (const std::string& name : known_network_names()) CHECK(unknown.error().message.find(name) != std::string::npos);
  auto missing_file = load_network("/nonexistent/net.json");
  REQUIRE_FALSE(missing_file);
  CHECK(missing_file.error().message.find("/nonexistent/net.json: cannot open") == 0);
  CHECK_FALSE(build_network("./resnet18"));
}
