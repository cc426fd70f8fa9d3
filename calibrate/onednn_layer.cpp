// calibrate/onednn_layer.cpp — see onednn_layer.hpp. One oneDNN primitive per layer kind
// and pass: convolution, inner product, batch normalization, eltwise (ReLU, clip for ReLU6),
// pooling (adaptive average pooling when the bins are even), sum, concat, binary multiply by a
// mask (dropout; frameworks draw the mask with their own random kernels) and log-softmax (the
// loss; the negative log-likelihood of one entry per image is summed in C++).
#include "calibrate/onednn_layer.hpp"

#include <cmath>
#include <random>

#include "calibrate/layer_operands.hpp"

namespace dnntune::calibrate::onednn {

using dnnl::memory;
using workloads::EltwiseAlgorithm;
using workloads::LayerKind;
using workloads::LayerSpec;
using workloads::Pass;
using workloads::PoolAlgorithm;
using Tag = memory::format_tag;

namespace {

memory::dims activation_dims(std::int64_t batch, const workloads::Shape& shape) {
  return {batch, shape.channels, shape.height, shape.width};
}

Tag plain_tag(int dimensions) {
  switch (dimensions) {
    case 1:
      return Tag::a;
    case 2:
      return Tag::ab;
    case 3:
      return Tag::abc;
    case 4:
      return Tag::abcd;
    default:
      return Tag::abcde;
  }
}

memory::desc any_desc(const memory::dims& dims) { return memory::desc(dims, memory::data_type::f32, Tag::any); }

// Right padding that makes oneDNN's output size equal PyTorch's: the left padding for floor
// rounding, more for ceil_mode's extra window.
memory::dims right_padding(const LayerSpec& spec, const workloads::Shape& output) {
  memory::dims padding{spec.pad_h, spec.pad_w};
  if (spec.kind == LayerKind::pooling && spec.ceil_mode) {
    padding[0] =
        std::max(spec.pad_h, (output.height - 1) * spec.stride_h + spec.kernel_h - spec.input.height - spec.pad_h);
    padding[1] =
        std::max(spec.pad_w, (output.width - 1) * spec.stride_w + spec.kernel_w - spec.input.width - spec.pad_w);
  }
  return padding;
}

// Uniform values in [low, high) from a linear congruential generator: test data, drawn fast
// enough that filling activations of hundreds of megabytes takes milliseconds, not seconds.
std::vector<float> random_values(std::size_t count, std::uint32_t seed, double low, double high) {
  std::vector<float> values(count);
  std::uint32_t state = seed * 2654435761u + 1;
  const float scale = static_cast<float>((high - low) / 16777216.0);
  for (float& value : values) {
    state = state * 1664525u + 1013904223u;
    value = static_cast<float>(low) + scale * static_cast<float>(state >> 8);
  }
  return values;
}

std::size_t element_count(const memory::desc& desc) {
  std::size_t count = 1;
  for (const auto size : desc.dims()) count *= static_cast<std::size_t>(size);
  return count;
}

}  // namespace

memory::desc plain_desc(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, plain_tag(static_cast<int>(dims.size())));
}

memory::desc activation_desc(const std::vector<std::int64_t>& dims) {
  if (dims.size() != 4) return plain_desc(dims);
  const auto isa = dnnl::get_effective_cpu_isa();
  const bool avx512 = isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
                      isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx ||
                      isa == dnnl::cpu_isa::avx512_mic || isa == dnnl::cpu_isa::avx512_mic_4ops;
  const bool avx2 = isa == dnnl::cpu_isa::avx2 || isa == dnnl::cpu_isa::avx2_vnni;
  return memory::desc(dims, memory::data_type::f32, avx512 ? Tag::nChw16c : avx2 ? Tag::nChw8c : Tag::nchw);
}

void write_plain(dnnl::stream& stream, const memory& target, const std::vector<float>& values) {
  const memory::desc desc = target.get_desc();
  memory plain(plain_desc(desc.dims()), target.get_engine(), const_cast<float*>(values.data()));
  memory handle = target;  // a handle: execute() takes non-const references
  dnnl::reorder(plain, handle).execute(stream, plain, handle);
  stream.wait();
}

std::vector<float> read_plain(dnnl::stream& stream, const memory& source) {
  const memory::desc desc = source.get_desc();
  std::vector<float> values(element_count(desc));
  memory plain(plain_desc(desc.dims()), source.get_engine(), values.data());
  memory handle = source;  // a handle: execute() takes non-const references
  dnnl::reorder(handle, plain).execute(stream, handle, plain);
  stream.wait();
  return values;
}

// Creates the primitives of one layer kind into a Layer (its friend): Layer::create works out
// what every kind reads once, then calls the member for the layer's kind (builder_of).
struct PrimitiveBuilder {
  Layer& layer;
  const LayerSpec& spec;
  std::int64_t batch;
  const std::vector<memory::desc>& inputs;
  memory::desc src;         // the first input
  workloads::Shape output;  // per image
  memory::dims strides, kernel, padding;
  bool wants_backward_data, wants_backward_weights;
  const dnnl::engine& engine;

  Expected<void>
  build_convolution();  // convolution: forward, backward-data and backward-weights primitives (bias optional).
  Expected<void> build_inner_product();  // inner product: the same three passes on a flattened input.
  Expected<void> build_batch_norm();     // batch norm in training mode: batch statistics, scale and shift.
  Expected<void> build_eltwise();        // ReLU, or clip to [0, 6] for ReLU6.
  Expected<void> build_pooling();  // max and average pooling, and adaptive average pooling when its bins are even.
  Expected<void> build_add();      // the element-wise sum of the inputs.
  Expected<void> build_concat();   // concatenation along channels.
  Expected<void> build_dropout();  // dropout: a binary multiply by the mask.
  Expected<void> build_loss();     // the loss: log-softmax (the negative log-likelihood is summed in C++).
};

Expected<void> PrimitiveBuilder::build_convolution() {
  using namespace dnnl;
  const memory::dims weights_dims =
      spec.groups == 1 ? memory::dims{spec.output_channels, spec.input.channels, spec.kernel_h, spec.kernel_w}
                       : memory::dims{spec.groups, spec.output_channels / spec.groups,
                                      spec.input.channels / spec.groups, spec.kernel_h, spec.kernel_w};
  const memory::dims dilation{spec.dilation_h - 1, spec.dilation_w - 1};  // oneDNN counts the gaps
  const auto bias = spec.bias ? any_desc({spec.output_channels}) : memory::desc();
  const auto dst = any_desc(activation_dims(batch, output));
  const auto pad_right = right_padding(spec, output);
  const auto forward_desc =
      spec.bias
          ? convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, any_desc(src.dims()),
                                      any_desc(weights_dims), bias, dst, strides, dilation, padding, pad_right)
          : convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, any_desc(src.dims()),
                                      any_desc(weights_dims), dst, strides, dilation, padding, pad_right);
  const convolution_forward::primitive_desc forward_pd(forward_desc, engine);
  layer.src_descs_ = {forward_pd.src_desc()};
  layer.dst_desc_ = forward_pd.dst_desc();
  layer.weights_desc_ = forward_pd.weights_desc();
  layer.bias_desc_ = forward_pd.bias_desc();
  layer.forward_ = convolution_forward(forward_pd);
  // Backward-data kernels want the weights blocked another way than the forward ones
  // (given the forward's layout, oneDNN falls back to a slow reference kernel).
  if (wants_backward_data) {
    const convolution_backward_data::primitive_desc pd(
        convolution_backward_data::desc(algorithm::convolution_direct, forward_pd.src_desc(), any_desc(weights_dims),
                                        forward_pd.dst_desc(), strides, dilation, padding, pad_right),
        engine, forward_pd);
    layer.weights_backward_desc_ = pd.weights_desc();
    layer.backward_data_ = convolution_backward_data(pd);
  }
  if (wants_backward_weights) {
    const auto weights_desc =
        spec.bias ? convolution_backward_weights::desc(algorithm::convolution_direct, forward_pd.src_desc(),
                                                       any_desc(weights_dims), bias, forward_pd.dst_desc(), strides,
                                                       dilation, padding, pad_right)
                  : convolution_backward_weights::desc(algorithm::convolution_direct, forward_pd.src_desc(),
                                                       any_desc(weights_dims), forward_pd.dst_desc(), strides, dilation,
                                                       padding, pad_right);
    const convolution_backward_weights::primitive_desc pd(weights_desc, engine, forward_pd);
    layer.diff_weights_desc_ = pd.diff_weights_desc();
    layer.diff_bias_desc_ = pd.diff_bias_desc();
    layer.backward_weights_ = convolution_backward_weights(pd);
  }
  return {};
}

Expected<void> PrimitiveBuilder::build_inner_product() {
  using namespace dnnl;
  const memory::dims weights_dims{spec.output_channels, spec.input.channels};
  const auto bias = spec.bias ? any_desc({spec.output_channels}) : memory::desc();
  const auto dst = any_desc({batch, spec.output_channels});
  const auto forward_desc =
      spec.bias ? inner_product_forward::desc(prop_kind::forward_training, src, any_desc(weights_dims), bias, dst)
                : inner_product_forward::desc(prop_kind::forward_training, src, any_desc(weights_dims), dst);
  const inner_product_forward::primitive_desc forward_pd(forward_desc, engine);
  layer.dst_desc_ = forward_pd.dst_desc();
  layer.weights_desc_ = forward_pd.weights_desc();
  layer.bias_desc_ = forward_pd.bias_desc();
  layer.forward_ = inner_product_forward(forward_pd);
  if (wants_backward_data) {
    const inner_product_backward_data::primitive_desc pd(
        inner_product_backward_data::desc(src, any_desc(weights_dims), forward_pd.dst_desc()), engine, forward_pd);
    layer.weights_backward_desc_ = pd.weights_desc();
    layer.backward_data_ = inner_product_backward_data(pd);
  }
  if (wants_backward_weights) {
    const auto weights_desc =
        spec.bias ? inner_product_backward_weights::desc(src, any_desc(weights_dims), bias, forward_pd.dst_desc())
                  : inner_product_backward_weights::desc(src, any_desc(weights_dims), forward_pd.dst_desc());
    const inner_product_backward_weights::primitive_desc pd(weights_desc, engine, forward_pd);
    layer.diff_weights_desc_ = pd.diff_weights_desc();
    layer.diff_bias_desc_ = pd.diff_bias_desc();
    layer.backward_weights_ = inner_product_backward_weights(pd);
  }
  return {};
}

Expected<void> PrimitiveBuilder::build_batch_norm() {
  using namespace dnnl;
  const auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
  const auto epsilon = static_cast<float>(spec.batch_norm_epsilon);
  const batch_normalization_forward::primitive_desc forward_pd(
      batch_normalization_forward::desc(prop_kind::forward_training, src, epsilon, flags), engine);
  layer.dst_desc_ = forward_pd.dst_desc();
  layer.weights_desc_ = layer.bias_desc_ = plain_desc({spec.input.channels});
  layer.mean_desc_ = forward_pd.mean_desc();
  layer.variance_desc_ = forward_pd.variance_desc();
  layer.forward_ = batch_normalization_forward(forward_pd);
  // One primitive computes the data and the scale/shift gradients together, as frameworks
  // run it; it is timed as backward_data (see has_backward_weights_).
  if (wants_backward_data) {
    const batch_normalization_backward::primitive_desc pd(
        batch_normalization_backward::desc(prop_kind::backward, src, src, epsilon, flags), engine, forward_pd);
    layer.diff_weights_desc_ = layer.diff_bias_desc_ = plain_desc({spec.input.channels});
    layer.backward_data_ = batch_normalization_backward(pd);
  }
  return {};
}

Expected<void> PrimitiveBuilder::build_eltwise() {
  using namespace dnnl;
  const bool relu = spec.eltwise == EltwiseAlgorithm::relu;
  const auto kind = relu ? algorithm::eltwise_relu : algorithm::eltwise_clip_v2;
  const float alpha = 0, beta = relu ? 0.0f : 6.0f;
  const eltwise_forward::primitive_desc forward_pd(
      eltwise_forward::desc(prop_kind::forward_training, kind, src, alpha, beta), engine);
  layer.dst_desc_ = forward_pd.dst_desc();
  layer.forward_ = eltwise_forward(forward_pd);
  if (wants_backward_data)
    layer.backward_data_ = eltwise_backward(
        eltwise_backward::primitive_desc(eltwise_backward::desc(kind, src, src, alpha, beta), engine, forward_pd));
  return {};
}

Expected<void> PrimitiveBuilder::build_pooling() {
  using namespace dnnl;
  memory::dims window = kernel, step = strides, left = padding, right;
  algorithm kind = algorithm::pooling_max;
  if (spec.kind == LayerKind::adaptive_avg_pool) {
    // Even bins are an ordinary average pooling; uneven ones have no oneDNN primitive.
    if (spec.input.height % spec.output_h != 0 || spec.input.width % spec.output_w != 0)
      return bad_input("oneDNN has no adaptive pooling with uneven bins (" + workloads::to_string(spec.input) + " to " +
                       std::to_string(spec.output_h) + "x" + std::to_string(spec.output_w) + ")");
    window = step = {spec.input.height / spec.output_h, spec.input.width / spec.output_w};
    left = right = {0, 0};
    kind = algorithm::pooling_avg_exclude_padding;
  } else {
    right = right_padding(spec, output);
    if (spec.pool == PoolAlgorithm::avg)
      kind = spec.count_include_pad ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
  }
  const auto dst = any_desc(activation_dims(batch, output));
  const pooling_forward::primitive_desc forward_pd(
      pooling_forward::desc(prop_kind::forward_training, kind, src, dst, step, window, left, right), engine);
  layer.dst_desc_ = forward_pd.dst_desc();
  layer.workspace_desc_ = forward_pd.workspace_desc();
  layer.forward_ = pooling_forward(forward_pd);
  if (wants_backward_data)
    layer.backward_data_ = pooling_backward(pooling_backward::primitive_desc(
        pooling_backward::desc(kind, src, forward_pd.dst_desc(), step, window, left, right), engine, forward_pd));
  return {};
}

Expected<void> PrimitiveBuilder::build_add() {
  using namespace dnnl;
  const sum::primitive_desc pd(std::vector<float>(inputs.size(), 1.0f), inputs, engine);
  layer.dst_desc_ = pd.dst_desc();
  layer.forward_ = sum(pd);
  return {};
}

Expected<void> PrimitiveBuilder::build_concat() {
  using namespace dnnl;
  const concat::primitive_desc pd(1, inputs, engine);
  layer.dst_desc_ = pd.dst_desc();
  layer.forward_ = concat(pd);
  return {};
}

Expected<void> PrimitiveBuilder::build_dropout() {
  using namespace dnnl;
  const binary::primitive_desc pd(binary::desc(algorithm::binary_mul, src, src, src), engine);
  layer.dst_desc_ = pd.dst_desc();
  layer.forward_ = binary(pd);
  if (wants_backward_data) layer.backward_data_ = binary(pd);  // the gradient times the same mask
  return {};
}

Expected<void> PrimitiveBuilder::build_loss() {
  using namespace dnnl;
  const logsoftmax_forward::primitive_desc forward_pd(logsoftmax_forward::desc(prop_kind::forward_training, src, 1),
                                                      engine);
  layer.dst_desc_ = forward_pd.dst_desc();
  layer.forward_ = logsoftmax_forward(forward_pd);
  if (wants_backward_data)
    layer.backward_data_ = logsoftmax_backward(logsoftmax_backward::primitive_desc(
        logsoftmax_backward::desc(forward_pd.dst_desc(), forward_pd.dst_desc(), 1), engine, forward_pd));
  return {};
}

namespace {

using BuildKind = Expected<void> (PrimitiveBuilder::*)();

// The builder of each kind; none for the kinds that compute nothing.
BuildKind builder_of(LayerKind kind) {
  switch (kind) {
    case LayerKind::convolution:
      return &PrimitiveBuilder::build_convolution;
    case LayerKind::inner_product:
      return &PrimitiveBuilder::build_inner_product;
    case LayerKind::batch_norm:
      return &PrimitiveBuilder::build_batch_norm;
    case LayerKind::eltwise:
      return &PrimitiveBuilder::build_eltwise;
    case LayerKind::pooling:
      return &PrimitiveBuilder::build_pooling;
    case LayerKind::adaptive_avg_pool:
      return &PrimitiveBuilder::build_pooling;
    case LayerKind::add:
      return &PrimitiveBuilder::build_add;
    case LayerKind::concat:
      return &PrimitiveBuilder::build_concat;
    case LayerKind::dropout:
      return &PrimitiveBuilder::build_dropout;
    case LayerKind::softmax_cross_entropy:
      return &PrimitiveBuilder::build_loss;
    case LayerKind::input:
    case LayerKind::flatten:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

Expected<std::shared_ptr<Layer>> Layer::create(const LayerSpec& spec, std::int64_t batch,
                                               const std::vector<memory::desc>& inputs, bool backward,
                                               const dnnl::engine& engine) {
  const auto output = workloads::infer_output_shape(spec);
  if (!output) return output.error();
  const BuildKind build = builder_of(spec.kind);
  if (!build) return bad_input(workloads::kind_name(spec.kind) + " computes nothing");
  auto layer = std::make_shared<Layer>();
  layer->spec_ = spec;
  layer->batch_ = batch;
  layer->engine_ = engine;
  layer->src_descs_ = inputs;
  const bool wants_backward_data = backward && has_pass(spec, Pass::backward_data);
  const bool wants_backward_weights =
      backward && has_pass(spec, Pass::backward_weights) && spec.kind != LayerKind::batch_norm;
  PrimitiveBuilder builder{*layer,
                           spec,
                           batch,
                           inputs,
                           inputs.front(),
                           *output,
                           {spec.stride_h, spec.stride_w},
                           {spec.kernel_h, spec.kernel_w},
                           {spec.pad_h, spec.pad_w},
                           wants_backward_data,
                           wants_backward_weights,
                           engine};
  try {
    if (auto built = (builder.*build)(); !built) return built.error();
  } catch (const dnnl::error& error) {
    if (error.status == dnnl_unimplemented) return bad_input(std::string("oneDNN: ") + error.what());
    return failure(std::string("oneDNN: ") + error.what());
  }
  layer->has_backward_data_ = wants_backward_data;
  layer->has_backward_weights_ = wants_backward_weights;
  return layer;
}

LayerMemories Layer::allocate(std::uint32_t seed) const {
  LayerMemories memories;
  dnnl::stream stream(engine_);
  const auto filled = [&](const memory::desc& desc, double low, double high) {
    memory result(desc, engine_);
    write_plain(stream, result, random_values(element_count(desc), seed++, low, high));
    return result;
  };
  for (const memory::desc& desc : src_descs_) memories.src.push_back(filled(desc, -2, 2));
  const double fan_in = spec_.kind == LayerKind::convolution
                            ? static_cast<double>(spec_.input.channels / spec_.groups * spec_.kernel_h * spec_.kernel_w)
                            : static_cast<double>(spec_.input.channels);
  const double bound = 1 / std::sqrt(fan_in);
  if (spec_.kind == LayerKind::batch_norm) {
    memories.weights = filled(weights_desc_, 0.5, 1.5);
    memories.bias = filled(bias_desc_, -1, 1);
    memories.mean = memory(mean_desc_, engine_);
    memories.variance = memory(variance_desc_, engine_);
  } else if (weights_desc_.get_size() > 0) {
    memories.weights = filled(weights_desc_, -bound, bound);
    if (bias_desc_.get_size() > 0) memories.bias = filled(bias_desc_, -bound, bound);
    memories.weights_for_backward = weights_backward_desc_.get_size() == 0 || weights_backward_desc_ == weights_desc_
                                        ? memories.weights
                                        : memory(weights_backward_desc_, engine_);
    reorder_weights_for_backward(stream, memories);
  }
  memories.dst = memory(dst_desc_, engine_);
  if (workspace_desc_.get_size() > 0) memories.workspace = memory(workspace_desc_, engine_);
  if (spec_.kind == LayerKind::dropout) {
    std::mt19937 generator(seed++);
    std::bernoulli_distribution keep(1 - spec_.dropout_probability);
    std::vector<float> mask(element_count(src_descs_.front()));
    for (float& value : mask) value = keep(generator) ? static_cast<float>(1 / (1 - spec_.dropout_probability)) : 0.0f;
    memories.mask = memory(src_descs_.front(), engine_);
    write_plain(stream, memories.mask, mask);
  }
  if (has_backward_data_ || has_backward_weights_) {
    if (spec_.kind == LayerKind::softmax_cross_entropy) {
      // The gradient of the batch's mean negative log-likelihood for image i's class i mod C.
      std::vector<float> gradient(element_count(dst_desc_), 0.0f);
      for (std::int64_t image = 0; image < batch_; ++image)
        gradient[image * spec_.input.channels + image % spec_.input.channels] = -1.0f / static_cast<float>(batch_);
      memories.diff_dst = memory(dst_desc_, engine_);
      write_plain(stream, memories.diff_dst, gradient);
    } else {
      memories.diff_dst = filled(dst_desc_, -1, 1);
    }
    memories.diff_src = memory(src_descs_.front(), engine_);
  }
  if (diff_weights_desc_.get_size() > 0) memories.diff_weights = memory(diff_weights_desc_, engine_);
  if (diff_bias_desc_.get_size() > 0) memories.diff_bias = memory(diff_bias_desc_, engine_);
  return memories;
}

std::unordered_map<int, memory> Layer::arguments(Pass pass, const LayerMemories& m) const {
  std::unordered_map<int, memory> arguments;
  const auto put = [&](int key, const memory& value) {
    if (value) arguments.emplace(key, value);
  };
  switch (spec_.kind) {
    case LayerKind::convolution:
    case LayerKind::inner_product:
      if (pass == Pass::forward) {
        put(DNNL_ARG_SRC, m.src.front()), put(DNNL_ARG_WEIGHTS, m.weights), put(DNNL_ARG_BIAS, m.bias);
        put(DNNL_ARG_DST, m.dst);
      } else if (pass == Pass::backward_data) {
        put(DNNL_ARG_DIFF_DST, m.diff_dst), put(DNNL_ARG_WEIGHTS, m.weights_for_backward);
        put(DNNL_ARG_DIFF_SRC, m.diff_src);
      } else {
        put(DNNL_ARG_SRC, m.src.front()), put(DNNL_ARG_DIFF_DST, m.diff_dst);
        put(DNNL_ARG_DIFF_WEIGHTS, m.diff_weights), put(DNNL_ARG_DIFF_BIAS, m.diff_bias);
      }
      break;
    case LayerKind::batch_norm:
      put(DNNL_ARG_SRC, m.src.front()), put(DNNL_ARG_MEAN, m.mean), put(DNNL_ARG_VARIANCE, m.variance);
      put(DNNL_ARG_SCALE, m.weights), put(DNNL_ARG_SHIFT, m.bias);
      if (pass == Pass::forward) {
        put(DNNL_ARG_DST, m.dst);
      } else {
        put(DNNL_ARG_DIFF_DST, m.diff_dst), put(DNNL_ARG_DIFF_SRC, m.diff_src);
        put(DNNL_ARG_DIFF_SCALE, m.diff_weights), put(DNNL_ARG_DIFF_SHIFT, m.diff_bias);
      }
      break;
    case LayerKind::eltwise:
    case LayerKind::pooling:
    case LayerKind::adaptive_avg_pool:
      put(DNNL_ARG_WORKSPACE, m.workspace);
      if (pass == Pass::forward) {
        put(DNNL_ARG_SRC, m.src.front()), put(DNNL_ARG_DST, m.dst);
      } else {
        if (spec_.kind == LayerKind::eltwise) put(DNNL_ARG_SRC, m.src.front());
        put(DNNL_ARG_DIFF_DST, m.diff_dst), put(DNNL_ARG_DIFF_SRC, m.diff_src);
      }
      break;
    case LayerKind::add:
    case LayerKind::concat:
      for (std::size_t index = 0; index < m.src.size(); ++index)
        put(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(index), m.src[index]);
      put(DNNL_ARG_DST, m.dst);
      break;
    case LayerKind::dropout:
      put(DNNL_ARG_SRC_0, pass == Pass::forward ? m.src.front() : m.diff_dst);
      put(DNNL_ARG_SRC_1, m.mask);
      put(DNNL_ARG_DST, pass == Pass::forward ? m.dst : m.diff_src);
      break;
    case LayerKind::softmax_cross_entropy:
      put(DNNL_ARG_DST, m.dst);
      if (pass == Pass::forward) {
        put(DNNL_ARG_SRC, m.src.front());
      } else {
        put(DNNL_ARG_DIFF_DST, m.diff_dst), put(DNNL_ARG_DIFF_SRC, m.diff_src);
      }
      break;
    case LayerKind::input:
    case LayerKind::flatten:
      break;
  }
  return arguments;
}

const dnnl::primitive* Layer::primitive(Pass pass) const {
  switch (pass) {
    case Pass::forward:
      return &forward_;
    case Pass::backward_data:
      return has_backward_data_ ? &backward_data_ : nullptr;
    case Pass::backward_weights:
      return has_backward_weights_ ? &backward_weights_ : nullptr;
  }
  return nullptr;
}

void Layer::reorder_weights_for_backward(dnnl::stream& stream, LayerMemories& memories) const {
  if (!memories.weights_for_backward || memories.weights_for_backward == memories.weights) return;
  dnnl::reorder(memories.weights, memories.weights_for_backward)
      .execute(stream, memories.weights, memories.weights_for_backward);
  stream.wait();
}

void Layer::execute(Pass pass, dnnl::stream& stream, LayerMemories& memories) const {
  primitive(pass)->execute(stream, arguments(pass, memories));
  stream.wait();
  if (spec_.kind != LayerKind::softmax_cross_entropy || pass != Pass::forward) return;
  // The negative log-likelihood of each image's class, averaged over the batch.
  const bool plain = memories.dst.get_desc() == plain_desc(memories.dst.get_desc().dims());
  const std::vector<float> copied = plain ? std::vector<float>() : read_plain(stream, memories.dst);
  const float* log_probabilities = plain ? static_cast<const float*>(memories.dst.get_data_handle()) : copied.data();
  double total = 0;
  for (std::int64_t image = 0; image < batch_; ++image)
    total -= log_probabilities[image * spec_.input.channels + image % spec_.input.channels];
  memories.loss = static_cast<float>(total / static_cast<double>(batch_));
}

}  // namespace dnntune::calibrate::onednn
