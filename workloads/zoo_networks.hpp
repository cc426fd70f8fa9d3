// workloads/zoo_networks.hpp — internal to the zoo: one builder per family of built-in
// networks, and the building blocks they share. Public entry points are in zoo.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.hpp"
#include "workloads/builder.hpp"
#include "workloads/graph.hpp"

namespace dnntune::workloads::zoo {

using LayerId = NetworkBuilder::LayerId;

// Every built-in network classifies ImageNet's 1000 classes.
constexpr std::int64_t imagenet_classes = 1000;

// ResNet-18/34 (BasicBlock) and 50/101/152 (Bottleneck, v1.5) as torchvision builds them.
Expected<Network> build_resnet(int depth);
// Inception-v3 as torchvision builds it; the auxiliary classifier runs in training.
Expected<Network> build_inception_v3(bool auxiliary_head);
// Inception-v4 as Cadene's pretrainedmodels `inceptionv4` builds it (the paper's network).
Expected<Network> build_inception_v4();
// VGG-16 (no batch norm), AlexNet and MobileNet-v2 as torchvision builds them.
Expected<Network> build_vgg16();
Expected<Network> build_alexnet();
Expected<Network> build_mobilenet_v2();

// The Inceptions' BasicConv2d: convolution without bias, batch norm (eps 0.001, TensorFlow's
// value that both ports keep), ReLU; named PREFIX.conv, PREFIX.bn, PREFIX.relu.
LayerId basic_conv2d(NetworkBuilder& net, LayerId x, const std::string& prefix, std::int64_t out_channels,
                     HeightWidth kernel, HeightWidth stride = 1, HeightWidth padding = 0);

// The classifier's end in training: logits -> softmax + cross-entropy loss.
LayerId loss(NetworkBuilder& net, LayerId logits, const std::string& name);

}  // namespace dnntune::workloads::zoo
