// calibrate/torch_backend.cpp — the "torch" (and "torch-cuda") layer backend: each pass
// through the same ATen operators PyTorch's autograd calls for a torch.nn layer in training, so
// that PyTorch's own dispatch (which convolution kernel for which thread count and batch) is
// what gets timed. Backward passes are split the way their autograd nodes allow:
// convolution_backward and native_batch_norm_backward with an output mask of the data gradient
// only (backward_data) or of the parameter gradients only (backward_weights).
//
// On the GPU a pass runs in the precision set (set_precision): fp32 strict or tf32 (cuDNN's TF32
// flag; cudnn.benchmark on, as the trainer and GPU users run), or bf16 / fp16 as autocast runs
// the layer: activations, their gradients and the convolution and linear weights in the low
// precision, batch-norm parameters and the loss in fp32; 4-D tensors in the memory format set.
//
// The whole-network run is the trainer's TorchNetwork under real autograd. The one file of
// calibrate/ that includes libtorch, through <ATen/ATen.h> and the few API headers it needs
// rather than <torch/torch.h>, to keep it fast to compile.
#include <algorithm>
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/nn/module.h>

#include <optional>
#include <stdexcept>

#include "calibrate/layer_backend.hpp"
#ifdef DNNTUNE_CUDA_EVENTS
#include "calibrate/cuda_event_timer.hpp"
#endif
#include "calibrate/layer_operands.hpp"
#include "train/precision.hpp"
#include "train/torch_network.hpp"

namespace dnntune::calibrate {

using workloads::EltwiseAlgorithm;
using workloads::LayerKind;
using workloads::LayerSpec;
using workloads::Pass;
using workloads::PoolAlgorithm;

namespace {

// One layer's tensors as autograd keeps them between its passes.
struct LayerState {
  std::vector<at::Tensor> inputs;
  at::Tensor weight, bias;               // convolution and linear; batch norm: scale, shift
  at::Tensor running_mean, running_var;  // batch norm
  at::Tensor output;
  // What the forward keeps for backward.
  at::Tensor save_mean, save_invstd, indices, mask, log_probabilities, labels, total_weight;
  at::Tensor grad_output;
  std::vector<at::Tensor> grad_inputs;
  at::Tensor grad_weight, grad_bias;
};

std::vector<std::int64_t> pair(std::int64_t height, std::int64_t width) { return {height, width}; }

double keep_probability(const LayerSpec& spec) { return 1.0 - spec.dropout_probability; }

// Fills `tensor` uniformly in [low, high). On the CPU a large tensor gets copies of one random
// block: ATen draws uniform_ on one thread, and drawing the operands of a large layer pass (a
// batch-32 activation is hundreds of megabytes) took seconds, longer than the pass's timed runs,
// so a first run measured a few of resnet152's layers where it had planned all. A kernel's speed
// does not depend on the values, and a block of 2^20 values repeats too far apart for a branch
// predictor to learn the pattern.
at::Tensor& fill_uniform(at::Tensor& tensor, double low, double high) {
  constexpr std::int64_t block_values = std::int64_t{1} << 20;
  const std::int64_t values = tensor.numel();
  if (!tensor.device().is_cpu() || !tensor.is_contiguous() || values <= block_values) return tensor.uniform_(low, high);
  const at::Tensor block = at::empty({block_values}, tensor.options()).uniform_(low, high);
  at::Tensor flat = tensor.view({-1});
  for (std::int64_t offset = 0; offset < values; offset += block_values) {
    const std::int64_t length = std::min(block_values, values - offset);
    flat.narrow(0, offset, length).copy_(block.narrow(0, 0, length));
  }
  return tensor;
}

// Parameters drawn like PyTorch's default initialisation (uniform in +-1/sqrt(fan_in)), inputs
// uniform in [-2, 2): values of the size training sees, no denormals.
at::Tensor activation(std::vector<std::int64_t> dims, const at::TensorOptions& options) {
  at::Tensor tensor = at::empty(dims, options);
  return fill_uniform(tensor, -2, 2);
}

// What a pass's tensors are made of (set_precision): the dtype of the activations and of the
// weights autocast casts (fp32 unless bf16 or fp16), and the memory format of 4-D tensors.
struct Arithmetic {
  at::ScalarType low = at::kFloat;
  at::MemoryFormat format = at::MemoryFormat::Contiguous;
};

void initialise(const LayerSpec& spec, std::int64_t batch, const at::TensorOptions& options, LayerState& state,
                const Arithmetic& arithmetic = {}) {
  const at::TensorOptions low = options.dtype(arithmetic.low);
  for (const auto& shape : workloads::expected_input_shapes(spec)) {
    if (spec.kind == LayerKind::softmax_cross_entropy)  // autocast runs the loss in fp32
      state.inputs.push_back(activation({batch, shape.channels}, options));
    else if (spec.kind == LayerKind::inner_product)
      state.inputs.push_back(activation({batch, shape.channels}, low));
    else
      state.inputs.push_back(
          activation({batch, shape.channels, shape.height, shape.width}, low).contiguous(arithmetic.format));
  }
  const auto uniform = [&](std::vector<std::int64_t> dims, double fan_in, const at::TensorOptions& made_as) {
    const double bound = 1.0 / std::sqrt(fan_in);
    return at::rand(dims, options).mul_(2 * bound).sub_(bound).to(made_as);
  };
  const std::int64_t channels = spec.input.channels;
  switch (spec.kind) {
    case LayerKind::convolution: {
      const double fan_in = static_cast<double>(channels / spec.groups * spec.kernel_h * spec.kernel_w);
      state.weight = uniform({spec.output_channels, channels / spec.groups, spec.kernel_h, spec.kernel_w}, fan_in, low)
                         .contiguous(arithmetic.format);
      if (spec.bias) state.bias = uniform({spec.output_channels}, fan_in, low);
      break;
    }
    case LayerKind::inner_product:
      state.weight = uniform({spec.output_channels, channels}, static_cast<double>(channels), low);
      if (spec.bias) state.bias = uniform({spec.output_channels}, static_cast<double>(channels), low);
      break;
    case LayerKind::batch_norm:
      state.weight = at::rand({channels}, options).add_(0.5);
      state.bias = at::rand({channels}, options).sub_(0.5);
      state.running_mean = at::zeros({channels}, options);
      state.running_var = at::ones({channels}, options);
      break;
    case LayerKind::softmax_cross_entropy:
      state.labels = at::arange(batch, options.dtype(at::kLong)).remainder_(channels);
      break;
    default:
      break;
  }
}

at::OptionalIntArrayRef bias_sizes(const LayerSpec& spec, const std::vector<std::int64_t>& storage) {
  if (!spec.bias) return c10::nullopt;
  return at::IntArrayRef(storage);
}

// `in_place`: the activation may overwrite its input, as torchvision's ReLU(inplace=True) does.
void forward(const LayerSpec& spec, LayerState& state, bool in_place) {
  const at::Tensor& in = state.inputs.front();
  switch (spec.kind) {
    case LayerKind::convolution:
      state.output = at::convolution(in, state.weight, state.bias, pair(spec.stride_h, spec.stride_w),
                                     pair(spec.pad_h, spec.pad_w), pair(spec.dilation_h, spec.dilation_w), false,
                                     pair(0, 0), spec.groups);
      break;
    case LayerKind::batch_norm:
      std::tie(state.output, state.save_mean, state.save_invstd) = at::native_batch_norm(
          in, state.weight, state.bias, state.running_mean, state.running_var, true, 0.1, spec.batch_norm_epsilon);
      break;
    case LayerKind::eltwise:
      if (spec.eltwise == EltwiseAlgorithm::relu)
        state.output = in_place ? at::relu_(state.inputs.front()) : at::relu(in);
      else
        state.output = in_place ? at::hardtanh_(state.inputs.front(), 0, 6) : at::hardtanh(in, 0, 6);
      break;
    case LayerKind::pooling:
      if (spec.pool == PoolAlgorithm::max)
        std::tie(state.output, state.indices) =
            at::max_pool2d_with_indices(in, pair(spec.kernel_h, spec.kernel_w), pair(spec.stride_h, spec.stride_w),
                                        pair(spec.pad_h, spec.pad_w), pair(1, 1), spec.ceil_mode);
      else
        state.output = at::avg_pool2d(in, pair(spec.kernel_h, spec.kernel_w), pair(spec.stride_h, spec.stride_w),
                                      pair(spec.pad_h, spec.pad_w), spec.ceil_mode, spec.count_include_pad);
      break;
    case LayerKind::adaptive_avg_pool:
      state.output = at::adaptive_avg_pool2d(in, pair(spec.output_h, spec.output_w));
      break;
    case LayerKind::inner_product:
      state.output = at::linear(in, state.weight, state.bias);
      break;
    case LayerKind::add:
      state.output = at::add(state.inputs[0], state.inputs[1]);
      for (std::size_t index = 2; index < state.inputs.size(); ++index) state.output.add_(state.inputs[index]);
      break;
    case LayerKind::concat:
      state.output = at::cat(state.inputs, 1);
      break;
    case LayerKind::dropout:
      // PyTorch 1.13 fuses dropout into one kernel on GPUs only; on CPUs it multiplies by a
      // scaled Bernoulli mask (ATen's _dropout_impl), and MulBackward reuses that mask.
      if (in.is_cuda()) {
        std::tie(state.output, state.mask) = at::native_dropout(in, spec.dropout_probability, true);
      } else {
        state.mask = at::empty_like(in).bernoulli_(keep_probability(spec)).div_(keep_probability(spec));
        state.output = in * state.mask;
      }
      break;
    case LayerKind::softmax_cross_entropy:
      // CrossEntropyLoss = log_softmax + nll_loss (mean over the batch).
      state.log_probabilities = at::_log_softmax(in, 1, false);
      std::tie(state.output, state.total_weight) =
          at::nll_loss_forward(state.log_probabilities, state.labels, {}, at::Reduction::Mean, -100);
      break;
    case LayerKind::input:
    case LayerKind::flatten:
      throw std::logic_error("no forward kernel for " + workloads::kind_name(spec.kind));
  }
}

void backward_data(const LayerSpec& spec, LayerState& state) {
  const at::Tensor& in = state.inputs.front();
  const at::Tensor& grad = state.grad_output;
  at::Tensor result;
  switch (spec.kind) {
    case LayerKind::convolution:
      result = std::get<0>(at::convolution_backward(
          grad, in, state.weight, c10::nullopt, pair(spec.stride_h, spec.stride_w), pair(spec.pad_h, spec.pad_w),
          pair(spec.dilation_h, spec.dilation_w), false, pair(0, 0), spec.groups, {true, false, false}));
      break;
    case LayerKind::batch_norm:
      result = std::get<0>(at::native_batch_norm_backward(grad, in, state.weight, state.running_mean, state.running_var,
                                                          state.save_mean, state.save_invstd, true,
                                                          spec.batch_norm_epsilon, {true, false, false}));
      break;
    case LayerKind::eltwise:
      // In-place activations keep their result for backward.
      result = spec.eltwise == EltwiseAlgorithm::relu ? at::threshold_backward(grad, state.output, 0)
                                                      : at::hardtanh_backward(grad, state.output, 0, 6);
      break;
    case LayerKind::pooling:
      if (spec.pool == PoolAlgorithm::max)
        result = at::max_pool2d_with_indices_backward(grad, in, pair(spec.kernel_h, spec.kernel_w),
                                                      pair(spec.stride_h, spec.stride_w), pair(spec.pad_h, spec.pad_w),
                                                      pair(1, 1), spec.ceil_mode, state.indices);
      else
        result =
            at::avg_pool2d_backward(grad, in, pair(spec.kernel_h, spec.kernel_w), pair(spec.stride_h, spec.stride_w),
                                    pair(spec.pad_h, spec.pad_w), spec.ceil_mode, spec.count_include_pad, c10::nullopt);
      break;
    case LayerKind::adaptive_avg_pool:
      // ATen computes a 1x1 adaptive pooling as a mean, whose backward expands and divides.
      if (spec.output_h == 1 && spec.output_w == 1)
        result = grad.expand(in.sizes()).div(static_cast<double>(spec.input.height * spec.input.width));
      else
        result = at::_adaptive_avg_pool2d_backward(grad, in);
      break;
    case LayerKind::inner_product:
      result = grad.mm(state.weight);
      break;
    case LayerKind::dropout:
      result = grad.is_cuda() ? at::native_dropout_backward(grad, state.mask, 1.0 / keep_probability(spec))
                              : grad * state.mask;
      break;
    case LayerKind::softmax_cross_entropy: {
      const at::Tensor grad_log_probabilities = at::nll_loss_backward(grad, state.log_probabilities, state.labels, {},
                                                                      at::Reduction::Mean, -100, state.total_weight);
      result = at::_log_softmax_backward_data(grad_log_probabilities, state.log_probabilities, 1, at::kFloat);
      break;
    }
    default:
      throw std::logic_error("no backward-data kernel for " + workloads::kind_name(spec.kind));
  }
  state.grad_inputs = {result};
}

void backward_weights(const LayerSpec& spec, LayerState& state) {
  const at::Tensor& in = state.inputs.front();
  const at::Tensor& grad = state.grad_output;
  const std::vector<std::int64_t> bias_storage{spec.output_channels};
  switch (spec.kind) {
    case LayerKind::convolution: {
      auto [ignored, grad_weight, grad_bias] = at::convolution_backward(
          grad, in, state.weight, bias_sizes(spec, bias_storage), pair(spec.stride_h, spec.stride_w),
          pair(spec.pad_h, spec.pad_w), pair(spec.dilation_h, spec.dilation_w), false, pair(0, 0), spec.groups,
          {false, true, spec.bias});
      state.grad_weight = grad_weight;
      state.grad_bias = grad_bias;
      break;
    }
    case LayerKind::batch_norm: {
      auto [ignored, grad_weight, grad_bias] =
          at::native_batch_norm_backward(grad, in, state.weight, state.running_mean, state.running_var, state.save_mean,
                                         state.save_invstd, true, spec.batch_norm_epsilon, {false, true, true});
      state.grad_weight = grad_weight;
      state.grad_bias = grad_bias;
      break;
    }
    case LayerKind::inner_product:
      state.grad_weight = grad.t().mm(in);
      if (spec.bias) state.grad_bias = grad.sum(0);
      break;
    default:
      throw std::logic_error("no backward-weights kernel for " + workloads::kind_name(spec.kind));
  }
}

void run_pass(const LayerSpec& spec, Pass pass, LayerState& state) {
  switch (pass) {
    case Pass::forward:
      forward(spec, state, true);
      break;
    case Pass::backward_data:
      backward_data(spec, state);
      break;
    case Pass::backward_weights:
      backward_weights(spec, state);
      break;
  }
}

// The tensor of a state that holds an operand (names from layer_operands.hpp).
at::Tensor& operand_slot(LayerState& state, const std::string& name) {
  if (name.rfind("src", 0) == 0) {
    const std::size_t index = name.size() > 3 ? std::stoul(name.substr(3)) : 0;
    return state.inputs.at(index);
  }
  if (name == "weights" || name == "scale") return state.weight;
  if (name == "bias" || name == "shift") return state.bias;
  if (name == "diff_dst") return state.grad_output;
  if (name == "dst" || name == "loss") return state.output;
  if (name == "diff_src") return state.grad_inputs.at(0);
  if (name == "diff_weights" || name == "diff_scale") return state.grad_weight;
  if (name == "diff_bias" || name == "diff_shift") return state.grad_bias;
  throw std::logic_error("unknown operand " + name);
}

void synchronise(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

// Runs `work` and, on a GPU where this build has CUDA events, returns the device time it took
// (the events go on libtorch's default stream, where its kernels run); else synchronises and
// returns nothing (the worker's wall clock times it).
template <class Work>
std::optional<double> run_timed(const at::Device& device, const Work& work) {
#ifdef DNNTUNE_CUDA_EVENTS
  if (device.is_cuda()) {
    static thread_local auto timer = CudaEventTimer::create();
    if (!timer) throw std::runtime_error(timer.error().message);
    if (auto started = timer->start(); !started) throw std::runtime_error(started.error().message);
    work();
    auto seconds = timer->stop();
    if (!seconds) throw std::runtime_error(seconds.error().message);
    return *seconds;
  }
#endif
  work();
  synchronise(device);
  return std::nullopt;
}

// The first line of an exception's message (c10::Error appends a C++ backtrace).
std::string first_line(const std::exception& error) {
  const std::string message = error.what();
  return message.substr(0, message.find('\n'));
}

class TorchPreparedLayer final : public PreparedLayer {
 public:
  TorchPreparedLayer(const LayerSpec& spec, std::int64_t batch, Pass pass, int operand_sets,
                     const at::TensorOptions& options, const Arithmetic& arithmetic)
      : spec_(spec), pass_(pass), operands_(pass_operands(spec, batch, pass)), device_(options.device()) {
    states_.resize(static_cast<std::size_t>(operand_sets));
    for (std::size_t set = 0; set < states_.size(); ++set) {
      LayerState& state = states_[set];
      initialise(spec, batch, options, state, arithmetic);
      if (set > 0)  // one copy of what training finds just written (the first set's, made below)
        for (const Operand& operand : operands_.inputs)
          if (operand_just_written(operand.name, pass))
            operand_slot(state, operand.name) = operand_slot(states_[0], operand.name);
      keep_forward_results(state);
    }
  }

  void run() override {
    device_seconds_ = run_timed(device_, [&] { run_pass(spec_, pass_, states_[next_]); });
    last_ = next_;
    next_ = (next_ + 1) % states_.size();
  }

  void set_inputs(const std::vector<std::vector<float>>& inputs) override {
    for (LayerState& state : states_) {
      for (std::size_t index = 0; index < operands_.inputs.size(); ++index) {
        at::Tensor& slot = operand_slot(state, operands_.inputs[index].name);
        const auto plain = at::from_blob(const_cast<float*>(inputs.at(index).data()), slot.sizes(), at::kFloat);
        slot.copy_(plain);
      }
      keep_forward_results(state);
    }
  }

  std::optional<double> last_device_seconds() const override { return device_seconds_; }

  std::vector<std::vector<float>> outputs() override {
    std::vector<std::vector<float>> result;
    for (const Operand& operand : operands_.outputs) {
      const at::Tensor plain = operand_slot(states_[last_], operand.name).contiguous().cpu().to(at::kFloat);
      result.emplace_back(plain.data_ptr<float>(), plain.data_ptr<float>() + plain.numel());
    }
    return result;
  }

 private:
  static at::Tensor gradient_like(const at::Tensor& output) {
    at::Tensor gradient = at::empty_like(output);
    return fill_uniform(gradient, -1, 1);
  }

  // A backward pass reads what its forward kept, and a gradient to propagate.
  void keep_forward_results(LayerState& state) {
    if (pass_ == Pass::forward) return;
    const at::Tensor diff_dst = state.grad_output;
    forward(spec_, state, false);
    state.grad_output = spec_.kind == LayerKind::softmax_cross_entropy ? at::ones({}, state.output.options())
                        : diff_dst.defined()                           ? diff_dst
                                                                       : gradient_like(state.output);
  }

  LayerSpec spec_;
  Pass pass_;
  PassOperands operands_;
  at::Device device_;
  std::vector<LayerState> states_;
  std::size_t next_ = 0, last_ = 0;
  std::optional<double> device_seconds_;
};

// The whole network through real autograd: the trainer's TorchNetwork (torchvision's modules
// and functional ops), a forward to the loss and loss.backward(), as one training step without
// the optimizer. Gradients are reset to none each step, as optimizer.zero_grad() does.
class TorchNetworkRun final : public PreparedRun {
 public:
  TorchNetworkRun(train::TorchNetwork network, std::int64_t batch, const at::TensorOptions& options,
                  std::string precision, const Arithmetic& arithmetic)
      : network_(std::move(network)), device_(options.device()), precision_(std::move(precision)) {
    network_.module().to(device_);
    network_.module().train(true);
    if (arithmetic.format == at::MemoryFormat::ChannelsLast) {
      std::vector<at::Tensor> parameters = network_.parameters();
      train::to_channels_last(parameters);
    }
    const workloads::Shape image = network_.network().input_shape();
    images_ = at::randn({batch, image.channels, image.height, image.width}, options).contiguous(arithmetic.format);
    labels_ = at::arange(batch, options.dtype(at::kLong)).remainder_(network_.classes());
  }

  void run() override {
    for (at::Tensor& parameter : network_.parameters()) parameter.mutable_grad() = at::Tensor();
    device_seconds_ = run_timed(device_, [&] {
      at::Tensor loss;
      {
        const train::AutocastScope autocast(precision_);  // bf16 / fp16: the forward, as users write it
        loss = network_.forward(images_, labels_);
      }
      loss.backward();
    });
  }
  std::optional<double> last_device_seconds() const override { return device_seconds_; }

 private:
  train::TorchNetwork network_;
  at::Device device_;
  std::string precision_;
  at::Tensor images_, labels_;
  std::optional<double> device_seconds_;
};

class TorchBackend final : public LayerBackend {
 public:
  explicit TorchBackend(bool cuda)
      : cuda_(cuda), options_(at::TensorOptions().dtype(at::kFloat).device(cuda ? at::kCUDA : at::kCPU)) {
    at::manual_seed(0);
  }

  std::string name() const override { return cuda_ ? "torch-cuda" : "torch"; }
  std::string version() const override { return libtorch_version(); }
  void set_threads(int threads) override { at::set_num_threads(threads); }

  Expected<void> set_precision(const std::string& precision, const std::string& memory_format) override {
    if (!cuda_) return LayerBackend::set_precision(precision, memory_format);
    if (precision == "auto" || !train::is_precision(precision) || !train::is_memory_format(memory_format))
      return bad_input("torch-cuda runs fp32, tf32, bf16 or fp16, contiguous or channels_last, not " + precision + " " +
                       memory_format);
    precision_ = precision;
    arithmetic_.low = precision == "bf16" ? at::kBFloat16 : precision == "fp16" ? at::kHalf : at::kFloat;
    arithmetic_.format =
        memory_format == "channels_last" ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
    train::apply_cuda_math_settings(precision);  // cudnn.benchmark; TF32 for cuDNN unless strict fp32
    return {};
  }

  Expected<std::unique_ptr<PreparedLayer>> prepare(const LayerSpec& spec, std::int64_t batch, Pass pass,
                                                   int operand_sets) override {
    if (!has_pass(spec, pass))
      return bad_input(workloads::to_descriptor(spec) + " has no " + workloads::pass_name(pass) + " pass");
    try {
      return std::unique_ptr<PreparedLayer>(
          new TorchPreparedLayer(spec, batch, pass, operand_sets, options_, arithmetic_));
    } catch (const std::exception& error) {
      return failure(first_line(error));
    }
  }

  Expected<std::unique_ptr<PreparedRun>> prepare_network(const workloads::Network& network,
                                                         std::int64_t batch) override {
    auto built = train::TorchNetwork::build(network);
    if (!built) return built.error();
    try {
      return std::unique_ptr<PreparedRun>(
          new TorchNetworkRun(std::move(*built), batch, options_, precision_, arithmetic_));
    } catch (const std::exception& error) {
      return failure(first_line(error));
    }
  }

 private:
  bool cuda_;
  at::TensorOptions options_;
  std::string precision_ = "fp32";
  Arithmetic arithmetic_;
};

}  // namespace

std::unique_ptr<LayerBackend> make_libtorch_backend(bool cuda) { return std::make_unique<TorchBackend>(cuda); }

bool libtorch_cuda_available() { return torch::cuda::is_available(); }

}  // namespace dnntune::calibrate
