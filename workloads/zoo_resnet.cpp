// workloads/zoo_resnet.cpp — ResNet-18, 34, 50, 101 and 152 exactly as torchvision 0.14's
// torchvision/models/resnet.py builds them (Bottleneck with the stride on the 3x3, "v1.5"),
// at 224x224. Parameterised layers carry torchvision's module names.
#include "workloads/zoo_networks.hpp"

#include <array>

namespace dnntune::workloads::zoo {
namespace {

// torchvision's BasicBlock (expansion 1). `downsample` is a 1x1 convolution + batch norm on
// the shortcut when the stride or the width changes.
LayerId basic_block(NetworkBuilder& net, LayerId x, const std::string& prefix, std::int64_t planes, std::int64_t stride,
                    bool downsample) {
  LayerId out = net.layer(prefix + "conv1", conv2d(planes, 3, stride, 1), x);
  out = net.layer(prefix + "bn1", batch_norm2d(), out);
  out = net.layer(prefix + "relu1", relu(), out);
  out = net.layer(prefix + "conv2", conv2d(planes, 3, 1, 1), out);
  out = net.layer(prefix + "bn2", batch_norm2d(), out);
  LayerId identity = x;
  if (downsample) {
    identity = net.layer(prefix + "downsample.0", conv2d(planes, 1, stride), x);
    identity = net.layer(prefix + "downsample.1", batch_norm2d(), identity);
  }
  out = net.layer(prefix + "add", add(), {out, identity});
  return net.layer(prefix + "relu2", relu(), out);
}

// torchvision's Bottleneck (expansion 4, width = planes): 1x1, 3x3 with the stride, 1x1.
LayerId bottleneck(NetworkBuilder& net, LayerId x, const std::string& prefix, std::int64_t planes, std::int64_t stride,
                   bool downsample) {
  LayerId out = net.layer(prefix + "conv1", conv2d(planes, 1), x);
  out = net.layer(prefix + "bn1", batch_norm2d(), out);
  out = net.layer(prefix + "relu1", relu(), out);
  out = net.layer(prefix + "conv2", conv2d(planes, 3, stride, 1), out);
  out = net.layer(prefix + "bn2", batch_norm2d(), out);
  out = net.layer(prefix + "relu2", relu(), out);
  out = net.layer(prefix + "conv3", conv2d(planes * 4, 1), out);
  out = net.layer(prefix + "bn3", batch_norm2d(), out);
  LayerId identity = x;
  if (downsample) {
    identity = net.layer(prefix + "downsample.0", conv2d(planes * 4, 1, stride), x);
    identity = net.layer(prefix + "downsample.1", batch_norm2d(), identity);
  }
  out = net.layer(prefix + "add", add(), {out, identity});
  return net.layer(prefix + "relu3", relu(), out);
}

}  // namespace

Expected<Network> build_resnet(int depth) {
  // Blocks per stage, from torchvision's resnet18 ... resnet152.
  std::array<int, 4> blocks{};
  switch (depth) {
    case 18:
      blocks = {2, 2, 2, 2};
      break;
    case 34:
      blocks = {3, 4, 6, 3};
      break;
    case 50:
      blocks = {3, 4, 6, 3};
      break;
    case 101:
      blocks = {3, 4, 23, 3};
      break;
    case 152:
      blocks = {3, 8, 36, 3};
      break;
    default:
      return bad_input("no ResNet of depth " + std::to_string(depth));
  }
  const bool uses_bottleneck = depth >= 50;
  const std::int64_t expansion = uses_bottleneck ? 4 : 1;

  NetworkBuilder net("resnet" + std::to_string(depth));
  LayerId x = net.input("input", {3, 224, 224});
  x = net.layer("conv1", conv2d(64, 7, 2, 3), x);
  x = net.layer("bn1", batch_norm2d(), x);
  x = net.layer("relu", relu(), x);
  x = net.layer("maxpool", max_pool2d(3, 2, 1), x);

  std::int64_t in_planes = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = std::int64_t{64} << stage;
    for (int block = 0; block < blocks[stage]; ++block) {
      const std::int64_t stride = (stage > 0 && block == 0) ? 2 : 1;
      const bool downsample = stride != 1 || in_planes != planes * expansion;
      const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(block) + ".";
      x = uses_bottleneck ? bottleneck(net, x, prefix, planes, stride, downsample)
                          : basic_block(net, x, prefix, planes, stride, downsample);
      in_planes = planes * expansion;
    }
  }

  x = net.layer("avgpool", adaptive_avg_pool2d(1), x);
  x = net.layer("flatten", flatten(), x);
  x = net.layer("fc", linear(imagenet_classes), x);
  loss(net, x, "loss");
  return net.finish();
}

}  // namespace dnntune::workloads::zoo
