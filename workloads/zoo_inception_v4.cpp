// workloads/zoo_inception_v4.cpp — Inception-v4 (Szegedy et al. 2016, "Inception-v4,
// Inception-ResNet and the Impact of Residual Connections on Learning") exactly as the common
// PyTorch port builds it: Cadene's pretrainedmodels/models/inceptionv4.py, at 299x299, with
// 1000 classes (its pretrained 'imagenet+background' variant has 1001). Layer names are that
// port's module paths (features.N...), so its state_dict maps 1:1 onto the parameterised layers.
#include "workloads/zoo_networks.hpp"

namespace dnntune::workloads::zoo {
namespace {

// Mixed_3a, Mixed_4a, Mixed_5a: the stem after the three first convolutions.
LayerId stem(NetworkBuilder& net, LayerId x) {
  const LayerId mixed_3a_pool = net.layer("features.3.maxpool", max_pool2d(3, 2), x);
  const LayerId mixed_3a_conv = basic_conv2d(net, x, "features.3.conv", 96, 3, 2);
  x = net.layer("features.3.concat", concat(), {mixed_3a_pool, mixed_3a_conv});

  LayerId branch0 = basic_conv2d(net, x, "features.4.branch0.0", 64, 1);
  branch0 = basic_conv2d(net, branch0, "features.4.branch0.1", 96, 3);
  LayerId branch1 = basic_conv2d(net, x, "features.4.branch1.0", 64, 1);
  branch1 = basic_conv2d(net, branch1, "features.4.branch1.1", 64, {1, 7}, 1, {0, 3});
  branch1 = basic_conv2d(net, branch1, "features.4.branch1.2", 64, {7, 1}, 1, {3, 0});
  branch1 = basic_conv2d(net, branch1, "features.4.branch1.3", 96, 3);
  x = net.layer("features.4.concat", concat(), {branch0, branch1});

  const LayerId mixed_5a_conv = basic_conv2d(net, x, "features.5.conv", 192, 3, 2);
  const LayerId mixed_5a_pool = net.layer("features.5.maxpool", max_pool2d(3, 2), x);
  return net.layer("features.5.concat", concat(), {mixed_5a_conv, mixed_5a_pool});
}

// The average-pooled branch of Inception_A/B/C: 3x3 average that ignores the padding.
LayerId pooled_branch(NetworkBuilder& net, LayerId x, const std::string& p, std::int64_t out) {
  const LayerId pooled = net.layer(p + "branch3.0", avg_pool2d(3, 1, 1, false, false), x);
  return basic_conv2d(net, pooled, p + "branch3.1", out, 1);
}

// Inception_A: 35x35x384.
LayerId inception_v4_a(NetworkBuilder& net, LayerId x, const std::string& p) {
  const LayerId branch0 = basic_conv2d(net, x, p + "branch0", 96, 1);
  LayerId branch1 = basic_conv2d(net, x, p + "branch1.0", 64, 1);
  branch1 = basic_conv2d(net, branch1, p + "branch1.1", 96, 3, 1, 1);
  LayerId branch2 = basic_conv2d(net, x, p + "branch2.0", 64, 1);
  branch2 = basic_conv2d(net, branch2, p + "branch2.1", 96, 3, 1, 1);
  branch2 = basic_conv2d(net, branch2, p + "branch2.2", 96, 3, 1, 1);
  const LayerId branch3 = pooled_branch(net, x, p, 96);
  return net.layer(p + "concat", concat(), {branch0, branch1, branch2, branch3});
}

// Reduction_A: 35x35 -> 17x17, 1024 channels.
LayerId reduction_a(NetworkBuilder& net, LayerId x, const std::string& p) {
  const LayerId branch0 = basic_conv2d(net, x, p + "branch0", 384, 3, 2);
  LayerId branch1 = basic_conv2d(net, x, p + "branch1.0", 192, 1);
  branch1 = basic_conv2d(net, branch1, p + "branch1.1", 224, 3, 1, 1);
  branch1 = basic_conv2d(net, branch1, p + "branch1.2", 256, 3, 2);
  const LayerId branch2 = net.layer(p + "branch2", max_pool2d(3, 2), x);
  return net.layer(p + "concat", concat(), {branch0, branch1, branch2});
}

// Inception_B: 17x17x1024 with factorised 7x7 convolutions.
LayerId inception_v4_b(NetworkBuilder& net, LayerId x, const std::string& p) {
  const LayerId branch0 = basic_conv2d(net, x, p + "branch0", 384, 1);
  LayerId branch1 = basic_conv2d(net, x, p + "branch1.0", 192, 1);
  branch1 = basic_conv2d(net, branch1, p + "branch1.1", 224, {1, 7}, 1, {0, 3});
  branch1 = basic_conv2d(net, branch1, p + "branch1.2", 256, {7, 1}, 1, {3, 0});
  LayerId branch2 = basic_conv2d(net, x, p + "branch2.0", 192, 1);
  branch2 = basic_conv2d(net, branch2, p + "branch2.1", 192, {7, 1}, 1, {3, 0});
  branch2 = basic_conv2d(net, branch2, p + "branch2.2", 224, {1, 7}, 1, {0, 3});
  branch2 = basic_conv2d(net, branch2, p + "branch2.3", 224, {7, 1}, 1, {3, 0});
  branch2 = basic_conv2d(net, branch2, p + "branch2.4", 256, {1, 7}, 1, {0, 3});
  const LayerId branch3 = pooled_branch(net, x, p, 128);
  return net.layer(p + "concat", concat(), {branch0, branch1, branch2, branch3});
}

// Reduction_B: 17x17 -> 8x8, 1536 channels.
LayerId reduction_b(NetworkBuilder& net, LayerId x, const std::string& p) {
  LayerId branch0 = basic_conv2d(net, x, p + "branch0.0", 192, 1);
  branch0 = basic_conv2d(net, branch0, p + "branch0.1", 192, 3, 2);
  LayerId branch1 = basic_conv2d(net, x, p + "branch1.0", 256, 1);
  branch1 = basic_conv2d(net, branch1, p + "branch1.1", 256, {1, 7}, 1, {0, 3});
  branch1 = basic_conv2d(net, branch1, p + "branch1.2", 320, {7, 1}, 1, {3, 0});
  branch1 = basic_conv2d(net, branch1, p + "branch1.3", 320, 3, 2);
  const LayerId branch2 = net.layer(p + "branch2", max_pool2d(3, 2), x);
  return net.layer(p + "concat", concat(), {branch0, branch1, branch2});
}

// Inception_C: 8x8x1536 with 1x3 / 3x1 pairs concatenated inside branches 1 and 2.
LayerId inception_v4_c(NetworkBuilder& net, LayerId x, const std::string& p) {
  const LayerId branch0 = basic_conv2d(net, x, p + "branch0", 256, 1);
  const LayerId branch1_0 = basic_conv2d(net, x, p + "branch1_0", 384, 1);
  const LayerId branch1_1a = basic_conv2d(net, branch1_0, p + "branch1_1a", 256, {1, 3}, 1, {0, 1});
  const LayerId branch1_1b = basic_conv2d(net, branch1_0, p + "branch1_1b", 256, {3, 1}, 1, {1, 0});
  const LayerId branch1 = net.layer(p + "branch1.concat", concat(), {branch1_1a, branch1_1b});
  LayerId branch2 = basic_conv2d(net, x, p + "branch2_0", 384, 1);
  branch2 = basic_conv2d(net, branch2, p + "branch2_1", 448, {3, 1}, 1, {1, 0});
  branch2 = basic_conv2d(net, branch2, p + "branch2_2", 512, {1, 3}, 1, {0, 1});
  const LayerId branch2_3a = basic_conv2d(net, branch2, p + "branch2_3a", 256, {1, 3}, 1, {0, 1});
  const LayerId branch2_3b = basic_conv2d(net, branch2, p + "branch2_3b", 256, {3, 1}, 1, {1, 0});
  branch2 = net.layer(p + "branch2.concat", concat(), {branch2_3a, branch2_3b});
  const LayerId branch3 = pooled_branch(net, x, p, 256);
  return net.layer(p + "concat", concat(), {branch0, branch1, branch2, branch3});
}

}  // namespace

Expected<Network> build_inception_v4() {
  NetworkBuilder net("inception_v4");
  LayerId x = net.input("input", {3, 299, 299});
  x = basic_conv2d(net, x, "features.0", 32, 3, 2);
  x = basic_conv2d(net, x, "features.1", 32, 3, 1);
  x = basic_conv2d(net, x, "features.2", 64, 3, 1, 1);
  x = stem(net, x);
  int module = 6;  // index in the port's `features` Sequential
  const auto next = [&module] { return "features." + std::to_string(module++) + "."; };
  for (int i = 0; i < 4; ++i) x = inception_v4_a(net, x, next());
  x = reduction_a(net, x, next());
  for (int i = 0; i < 7; ++i) x = inception_v4_b(net, x, next());
  x = reduction_b(net, x, next());
  for (int i = 0; i < 3; ++i) x = inception_v4_c(net, x, next());
  // The port's nn.AvgPool2d(8, count_include_pad=False): global on the 8x8 map.
  x = net.layer("avg_pool", avg_pool2d(8, 8, 0, false, false), x);
  x = net.layer("flatten", flatten(), x);
  x = net.layer("last_linear", linear(imagenet_classes), x);
  loss(net, x, "loss");
  return net.finish();
}

}  // namespace dnntune::workloads::zoo
