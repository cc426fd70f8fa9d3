// workloads/zoo_inception_v3.cpp — Inception-v3 exactly as torchvision 0.14's
// torchvision/models/inception.py builds it (299x299, transform_input off), with or without the
// auxiliary classifier, which runs in training and adds its own loss. Layer order follows the
// module's forward(); parameterised layers carry torchvision's module names.
#include "workloads/zoo_networks.hpp"

namespace dnntune::workloads::zoo {
namespace {

// InceptionA: 35x35 grid, 1x1 / 5x5 / double 3x3 / pooled 1x1 branches.
LayerId inception_a(NetworkBuilder& net, LayerId x, const std::string& name, std::int64_t pool_features) {
  const std::string p = name + ".";
  const LayerId branch1x1 = basic_conv2d(net, x, p + "branch1x1", 64, 1);
  LayerId branch5x5 = basic_conv2d(net, x, p + "branch5x5_1", 48, 1);
  branch5x5 = basic_conv2d(net, branch5x5, p + "branch5x5_2", 64, 5, 1, 2);
  LayerId branch3x3dbl = basic_conv2d(net, x, p + "branch3x3dbl_1", 64, 1);
  branch3x3dbl = basic_conv2d(net, branch3x3dbl, p + "branch3x3dbl_2", 96, 3, 1, 1);
  branch3x3dbl = basic_conv2d(net, branch3x3dbl, p + "branch3x3dbl_3", 96, 3, 1, 1);
  LayerId branch_pool = net.layer(p + "avg_pool", avg_pool2d(3, 1, 1), x);
  branch_pool = basic_conv2d(net, branch_pool, p + "branch_pool", pool_features, 1);
  return net.layer(p + "concat", concat(), {branch1x1, branch5x5, branch3x3dbl, branch_pool});
}

// InceptionB: 35x35 -> 17x17 reduction.
LayerId inception_b(NetworkBuilder& net, LayerId x, const std::string& name) {
  const std::string p = name + ".";
  const LayerId branch3x3 = basic_conv2d(net, x, p + "branch3x3", 384, 3, 2);
  LayerId branch3x3dbl = basic_conv2d(net, x, p + "branch3x3dbl_1", 64, 1);
  branch3x3dbl = basic_conv2d(net, branch3x3dbl, p + "branch3x3dbl_2", 96, 3, 1, 1);
  branch3x3dbl = basic_conv2d(net, branch3x3dbl, p + "branch3x3dbl_3", 96, 3, 2);
  const LayerId branch_pool = net.layer(p + "max_pool", max_pool2d(3, 2), x);
  return net.layer(p + "concat", concat(), {branch3x3, branch3x3dbl, branch_pool});
}

// InceptionC: 17x17 grid with factorised 7x7 convolutions (1x7 then 7x1).
LayerId inception_c(NetworkBuilder& net, LayerId x, const std::string& name, std::int64_t c7) {
  const std::string p = name + ".";
  const LayerId branch1x1 = basic_conv2d(net, x, p + "branch1x1", 192, 1);
  LayerId branch7x7 = basic_conv2d(net, x, p + "branch7x7_1", c7, 1);
  branch7x7 = basic_conv2d(net, branch7x7, p + "branch7x7_2", c7, {1, 7}, 1, {0, 3});
  branch7x7 = basic_conv2d(net, branch7x7, p + "branch7x7_3", 192, {7, 1}, 1, {3, 0});
  LayerId dbl = basic_conv2d(net, x, p + "branch7x7dbl_1", c7, 1);
  dbl = basic_conv2d(net, dbl, p + "branch7x7dbl_2", c7, {7, 1}, 1, {3, 0});
  dbl = basic_conv2d(net, dbl, p + "branch7x7dbl_3", c7, {1, 7}, 1, {0, 3});
  dbl = basic_conv2d(net, dbl, p + "branch7x7dbl_4", c7, {7, 1}, 1, {3, 0});
  dbl = basic_conv2d(net, dbl, p + "branch7x7dbl_5", 192, {1, 7}, 1, {0, 3});
  LayerId branch_pool = net.layer(p + "avg_pool", avg_pool2d(3, 1, 1), x);
  branch_pool = basic_conv2d(net, branch_pool, p + "branch_pool", 192, 1);
  return net.layer(p + "concat", concat(), {branch1x1, branch7x7, dbl, branch_pool});
}

// InceptionD: 17x17 -> 8x8 reduction.
LayerId inception_d(NetworkBuilder& net, LayerId x, const std::string& name) {
  const std::string p = name + ".";
  LayerId branch3x3 = basic_conv2d(net, x, p + "branch3x3_1", 192, 1);
  branch3x3 = basic_conv2d(net, branch3x3, p + "branch3x3_2", 320, 3, 2);
  LayerId branch7x7x3 = basic_conv2d(net, x, p + "branch7x7x3_1", 192, 1);
  branch7x7x3 = basic_conv2d(net, branch7x7x3, p + "branch7x7x3_2", 192, {1, 7}, 1, {0, 3});
  branch7x7x3 = basic_conv2d(net, branch7x7x3, p + "branch7x7x3_3", 192, {7, 1}, 1, {3, 0});
  branch7x7x3 = basic_conv2d(net, branch7x7x3, p + "branch7x7x3_4", 192, 3, 2);
  const LayerId branch_pool = net.layer(p + "max_pool", max_pool2d(3, 2), x);
  return net.layer(p + "concat", concat(), {branch3x3, branch7x7x3, branch_pool});
}

// InceptionE: 8x8 grid with expanded filter banks (1x3 and 3x1 side by side, concatenated).
LayerId inception_e(NetworkBuilder& net, LayerId x, const std::string& name) {
  const std::string p = name + ".";
  const LayerId branch1x1 = basic_conv2d(net, x, p + "branch1x1", 320, 1);
  const LayerId branch3x3_1 = basic_conv2d(net, x, p + "branch3x3_1", 384, 1);
  const LayerId branch3x3_2a = basic_conv2d(net, branch3x3_1, p + "branch3x3_2a", 384, {1, 3}, 1, {0, 1});
  const LayerId branch3x3_2b = basic_conv2d(net, branch3x3_1, p + "branch3x3_2b", 384, {3, 1}, 1, {1, 0});
  const LayerId branch3x3 = net.layer(p + "branch3x3.concat", concat(), {branch3x3_2a, branch3x3_2b});
  LayerId dbl = basic_conv2d(net, x, p + "branch3x3dbl_1", 448, 1);
  dbl = basic_conv2d(net, dbl, p + "branch3x3dbl_2", 384, 3, 1, 1);
  const LayerId dbl_3a = basic_conv2d(net, dbl, p + "branch3x3dbl_3a", 384, {1, 3}, 1, {0, 1});
  const LayerId dbl_3b = basic_conv2d(net, dbl, p + "branch3x3dbl_3b", 384, {3, 1}, 1, {1, 0});
  const LayerId branch3x3dbl = net.layer(p + "branch3x3dbl.concat", concat(), {dbl_3a, dbl_3b});
  LayerId branch_pool = net.layer(p + "avg_pool", avg_pool2d(3, 1, 1), x);
  branch_pool = basic_conv2d(net, branch_pool, p + "branch_pool", 192, 1);
  return net.layer(p + "concat", concat(), {branch1x1, branch3x3, branch3x3dbl, branch_pool});
}

// InceptionAux on Mixed_6e's 768x17x17 output: its own classifier and loss.
void auxiliary_head(NetworkBuilder& net, LayerId x) {
  LayerId aux = net.layer("AuxLogits.avg_pool", avg_pool2d(5, 3), x);
  aux = basic_conv2d(net, aux, "AuxLogits.conv0", 128, 1);
  aux = basic_conv2d(net, aux, "AuxLogits.conv1", 768, 5);
  aux = net.layer("AuxLogits.adaptive_avg_pool", adaptive_avg_pool2d(1), aux);
  aux = net.layer("AuxLogits.flatten", flatten(), aux);
  aux = net.layer("AuxLogits.fc", linear(imagenet_classes), aux);
  loss(net, aux, "AuxLogits.loss");
}

}  // namespace

Expected<Network> build_inception_v3(bool auxiliary_head_on) {
  NetworkBuilder net(auxiliary_head_on ? "inception_v3" : "inception_v3_noaux");
  LayerId x = net.input("input", {3, 299, 299});
  x = basic_conv2d(net, x, "Conv2d_1a_3x3", 32, 3, 2);
  x = basic_conv2d(net, x, "Conv2d_2a_3x3", 32, 3);
  x = basic_conv2d(net, x, "Conv2d_2b_3x3", 64, 3, 1, 1);
  x = net.layer("maxpool1", max_pool2d(3, 2), x);
  x = basic_conv2d(net, x, "Conv2d_3b_1x1", 80, 1);
  x = basic_conv2d(net, x, "Conv2d_4a_3x3", 192, 3);
  x = net.layer("maxpool2", max_pool2d(3, 2), x);
  x = inception_a(net, x, "Mixed_5b", 32);
  x = inception_a(net, x, "Mixed_5c", 64);
  x = inception_a(net, x, "Mixed_5d", 64);
  x = inception_b(net, x, "Mixed_6a");
  x = inception_c(net, x, "Mixed_6b", 128);
  x = inception_c(net, x, "Mixed_6c", 160);
  x = inception_c(net, x, "Mixed_6d", 160);
  x = inception_c(net, x, "Mixed_6e", 192);
  if (auxiliary_head_on) auxiliary_head(net, x);
  x = inception_d(net, x, "Mixed_7a");
  x = inception_e(net, x, "Mixed_7b");
  x = inception_e(net, x, "Mixed_7c");
  x = net.layer("avgpool", adaptive_avg_pool2d(1), x);
  x = net.layer("dropout", dropout(0.5), x);
  x = net.layer("flatten", flatten(), x);
  x = net.layer("fc", linear(imagenet_classes), x);
  loss(net, x, "loss");
  return net.finish();
}

}  // namespace dnntune::workloads::zoo
