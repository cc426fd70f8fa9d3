// workloads/builder.hpp — building a network in C++ the way a PyTorch forward() reads:
// layer specs made like torch.nn constructors (conv2d(64, 7, 2, 3)), added one after the other
// with their input shapes filled in from the layers they read. Used by the built-in zoo and by
// anyone defining a network in code; the result is validated by make_network.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "workloads/graph.hpp"
#include "workloads/layer.hpp"

namespace dnntune::workloads {

// A height/width pair given like PyTorch's int-or-tuple arguments: 3 or {1, 7}.
struct HeightWidth {
  std::int64_t height;
  std::int64_t width;
  HeightWidth(std::int64_t both) : height(both), width(both) {}  // implicit, as PyTorch's int
  HeightWidth(std::int64_t height_, std::int64_t width_) : height(height_), width(width_) {}
};

// Specs as torch.nn's constructors take them; the input shape is filled in by
// NetworkBuilder::layer. conv2d's padding is PyTorch's (each side); dilation 1 is dense.
LayerSpec conv2d(std::int64_t out_channels, HeightWidth kernel, HeightWidth stride = 1, HeightWidth padding = 0,
                 std::int64_t groups = 1, bool bias = false, HeightWidth dilation = 1);
LayerSpec batch_norm2d(double epsilon = 1e-5);
LayerSpec relu();
LayerSpec relu6();
LayerSpec max_pool2d(HeightWidth kernel, HeightWidth stride, HeightWidth padding = 0, bool ceil_mode = false);
LayerSpec avg_pool2d(HeightWidth kernel, HeightWidth stride, HeightWidth padding = 0, bool ceil_mode = false,
                     bool count_include_pad = true);
LayerSpec adaptive_avg_pool2d(HeightWidth output_size);
LayerSpec linear(std::int64_t out_features, bool bias = true);
LayerSpec add();
LayerSpec concat();
LayerSpec flatten();
LayerSpec dropout(double probability);
LayerSpec softmax_cross_entropy();

// Adds layers in data-flow order. Errors (a shape that does not fit) are kept and returned by
// finish(), so a network reads as a straight sequence of calls.
class NetworkBuilder {
 public:
  using LayerId = int;

  explicit NetworkBuilder(std::string network_name);

  // The image input, `image` per sample (e.g. 3x224x224).
  LayerId input(const std::string& name, Shape image);

  // Adds `spec` reading `inputs` (in order); its input shape (and for add/concat, the number
  // and channels of inputs) comes from those layers' outputs.
  LayerId layer(const std::string& name, LayerSpec spec, const std::vector<LayerId>& inputs);
  LayerId layer(const std::string& name, LayerSpec spec, LayerId input) {
    return layer(name, std::move(spec), std::vector<LayerId>{input});
  }

  // The per-image output shape of a layer added so far.
  Shape shape(LayerId layer) const;

  // The validated network, or the first error met while building.
  Expected<Network> finish() const;

 private:
  std::string network_name_;
  std::vector<LayerDefinition> definitions_;
  std::vector<Shape> shapes_;
  std::string first_error_;
};

}  // namespace dnntune::workloads
