// workloads/zoo_others.cpp — VGG-16 (configuration "D", no batch norm), AlexNet and
// MobileNet-v2 exactly as torchvision 0.14 builds them (vgg.py, alexnet.py, mobilenetv2.py),
// at 224x224. Layer names are torchvision's module paths (features.N, classifier.N).
#include "workloads/zoo_networks.hpp"

#include <vector>

namespace dnntune::workloads::zoo {
namespace {

// torchvision's numbering of a Sequential: the name of the next module, counting up.
class SequentialNames {
 public:
  explicit SequentialNames(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string next() { return prefix_ + std::to_string(index_++); }

 private:
  std::string prefix_;
  int index_ = 0;
};

// MobileNet-v2's InvertedResidual: optional 1x1 expansion, 3x3 depth-wise, 1x1 projection
// (linear: no activation), with a residual add when the shape is unchanged.
LayerId inverted_residual(NetworkBuilder& net, LayerId x, const std::string& prefix, std::int64_t in_channels,
                          std::int64_t out_channels, std::int64_t stride, std::int64_t expand_ratio) {
  const std::int64_t hidden = in_channels * expand_ratio;
  SequentialNames conv(prefix + "conv.");
  LayerId out = x;
  if (expand_ratio != 1) {  // Conv2dNormActivation(in, hidden, kernel_size=1, ReLU6)
    const std::string block = conv.next() + ".";
    out = net.layer(block + "0", conv2d(hidden, 1), out);
    out = net.layer(block + "1", batch_norm2d(), out);
    out = net.layer(block + "2", relu6(), out);
  }
  const std::string depthwise = conv.next() + ".";  // Conv2dNormActivation(groups=hidden)
  out = net.layer(depthwise + "0", conv2d(hidden, 3, stride, 1, hidden), out);
  out = net.layer(depthwise + "1", batch_norm2d(), out);
  out = net.layer(depthwise + "2", relu6(), out);
  out = net.layer(conv.next(), conv2d(out_channels, 1), out);
  out = net.layer(conv.next(), batch_norm2d(), out);
  if (stride == 1 && in_channels == out_channels)  // torchvision: x + self.conv(x)
    out = net.layer(prefix + "add", add(), {x, out});
  return out;
}

}  // namespace

Expected<Network> build_vgg16() {
  NetworkBuilder net("vgg16");
  LayerId x = net.input("input", {3, 224, 224});
  SequentialNames features("features.");
  // torchvision's cfgs["D"]; 0 marks a 2x2 max pooling.
  for (const std::int64_t channels : {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}) {
    if (channels == 0) {
      x = net.layer(features.next(), max_pool2d(2, 2), x);
      continue;
    }
    x = net.layer(features.next(), conv2d(channels, 3, 1, 1, 1, true), x);
    x = net.layer(features.next(), relu(), x);
  }
  x = net.layer("avgpool", adaptive_avg_pool2d(7), x);
  x = net.layer("flatten", flatten(), x);
  SequentialNames classifier("classifier.");
  x = net.layer(classifier.next(), linear(4096), x);
  x = net.layer(classifier.next(), relu(), x);
  x = net.layer(classifier.next(), dropout(0.5), x);
  x = net.layer(classifier.next(), linear(4096), x);
  x = net.layer(classifier.next(), relu(), x);
  x = net.layer(classifier.next(), dropout(0.5), x);
  x = net.layer(classifier.next(), linear(imagenet_classes), x);
  loss(net, x, "loss");
  return net.finish();
}

Expected<Network> build_alexnet() {
  NetworkBuilder net("alexnet");
  LayerId x = net.input("input", {3, 224, 224});
  SequentialNames features("features.");
  x = net.layer(features.next(), conv2d(64, 11, 4, 2, 1, true), x);
  x = net.layer(features.next(), relu(), x);
  x = net.layer(features.next(), max_pool2d(3, 2), x);
  x = net.layer(features.next(), conv2d(192, 5, 1, 2, 1, true), x);
  x = net.layer(features.next(), relu(), x);
  x = net.layer(features.next(), max_pool2d(3, 2), x);
  x = net.layer(features.next(), conv2d(384, 3, 1, 1, 1, true), x);
  x = net.layer(features.next(), relu(), x);
  x = net.layer(features.next(), conv2d(256, 3, 1, 1, 1, true), x);
  x = net.layer(features.next(), relu(), x);
  x = net.layer(features.next(), conv2d(256, 3, 1, 1, 1, true), x);
  x = net.layer(features.next(), relu(), x);
  x = net.layer(features.next(), max_pool2d(3, 2), x);
  x = net.layer("avgpool", adaptive_avg_pool2d(6), x);
  x = net.layer("flatten", flatten(), x);
  SequentialNames classifier("classifier.");
  x = net.layer(classifier.next(), dropout(0.5), x);
  x = net.layer(classifier.next(), linear(4096), x);
  x = net.layer(classifier.next(), relu(), x);
  x = net.layer(classifier.next(), dropout(0.5), x);
  x = net.layer(classifier.next(), linear(4096), x);
  x = net.layer(classifier.next(), relu(), x);
  x = net.layer(classifier.next(), linear(imagenet_classes), x);
  loss(net, x, "loss");
  return net.finish();
}

Expected<Network> build_mobilenet_v2() {
  NetworkBuilder net("mobilenet_v2");
  LayerId x = net.input("input", {3, 224, 224});
  x = net.layer("features.0.0", conv2d(32, 3, 2, 1), x);
  x = net.layer("features.0.1", batch_norm2d(), x);
  x = net.layer("features.0.2", relu6(), x);
  // torchvision's inverted_residual_setting: expansion t, channels c, repeats n, stride s
  // (width multiplier 1, so _make_divisible leaves every channel count as it is).
  struct Stage {
    std::int64_t expansion, channels, repeats, stride;
  };
  const std::vector<Stage> stages{{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  std::int64_t channels = 32;
  int module = 1;
  for (const Stage& stage : stages)
    for (std::int64_t i = 0; i < stage.repeats; ++i) {
      const std::string prefix = "features." + std::to_string(module++) + ".";
      x = inverted_residual(net, x, prefix, channels, stage.channels, i == 0 ? stage.stride : 1, stage.expansion);
      channels = stage.channels;
    }
  const std::string last = "features." + std::to_string(module) + ".";
  x = net.layer(last + "0", conv2d(1280, 1), x);
  x = net.layer(last + "1", batch_norm2d(), x);
  x = net.layer(last + "2", relu6(), x);
  x = net.layer("adaptive_avg_pool", adaptive_avg_pool2d(1), x);
  x = net.layer("flatten", flatten(), x);
  x = net.layer("classifier.0", dropout(0.2), x);
  x = net.layer("classifier.1", linear(imagenet_classes), x);
  loss(net, x, "loss");
  return net.finish();
}

}  // namespace dnntune::workloads::zoo
