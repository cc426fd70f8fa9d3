// calibrate/naive_reference.cpp — see naive_reference.hpp. Sums in double precision, so the
// reference is the more accurate side of every comparison.
#include "calibrate/naive_reference.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "calibrate/layer_operands.hpp"

namespace dnntune::calibrate {

using workloads::EltwiseAlgorithm;
using workloads::LayerKind;
using workloads::LayerSpec;
using workloads::Pass;
using workloads::PoolAlgorithm;
using Values = std::vector<float>;

namespace {

// Visits every (image, output channel, output position, input channel, input position) of a
// convolution whose input position lies inside the input, with the flat indices of the input,
// weight and output elements.
void for_each_convolution_term(const LayerSpec& spec, std::int64_t batch, const workloads::Shape& out,
                               const std::function<void(std::size_t, std::size_t, std::size_t)>& visit) {
  const auto& in = spec.input;
  const std::int64_t in_per_group = in.channels / spec.groups, out_per_group = out.channels / spec.groups;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t o = 0; o < out.channels; ++o)
      for (std::int64_t y = 0; y < out.height; ++y)
        for (std::int64_t x = 0; x < out.width; ++x)
          for (std::int64_t c = 0; c < in_per_group; ++c)
            for (std::int64_t ky = 0; ky < spec.kernel_h; ++ky)
              for (std::int64_t kx = 0; kx < spec.kernel_w; ++kx) {
                const std::int64_t iy = y * spec.stride_h - spec.pad_h + ky * spec.dilation_h;
                const std::int64_t ix = x * spec.stride_w - spec.pad_w + kx * spec.dilation_w;
                if (iy < 0 || iy >= in.height || ix < 0 || ix >= in.width) continue;
                const std::int64_t channel = o / out_per_group * in_per_group + c;
                visit(static_cast<std::size_t>(((n * in.channels + channel) * in.height + iy) * in.width + ix),
                      static_cast<std::size_t>(((o * in_per_group + c) * spec.kernel_h + ky) * spec.kernel_w + kx),
                      static_cast<std::size_t>(((n * out.channels + o) * out.height + y) * out.width + x));
              }
}

// Pooling windows as PyTorch defines them: for each output element, the input elements it
// covers (padding excluded) and its average-pooling divisor.
void for_each_window(const LayerSpec& spec, std::int64_t batch, const workloads::Shape& out,
                     const std::function<void(std::size_t, const std::vector<std::size_t>&, double)>& visit) {
  const auto& in = spec.input;
  const bool adaptive = spec.kind == LayerKind::adaptive_avg_pool;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < in.channels; ++c)
      for (std::int64_t y = 0; y < out.height; ++y)
        for (std::int64_t x = 0; x < out.width; ++x) {
          std::int64_t y0, y1, x0, x1;
          double divisor;
          if (adaptive) {
            y0 = y * in.height / out.height, y1 = ((y + 1) * in.height + out.height - 1) / out.height;
            x0 = x * in.width / out.width, x1 = ((x + 1) * in.width + out.width - 1) / out.width;
            divisor = static_cast<double>((y1 - y0) * (x1 - x0));
          } else {
            y0 = y * spec.stride_h - spec.pad_h, x0 = x * spec.stride_w - spec.pad_w;
            y1 = std::min(y0 + spec.kernel_h, in.height + spec.pad_h);
            x1 = std::min(x0 + spec.kernel_w, in.width + spec.pad_w);
            const double padded = static_cast<double>((y1 - y0) * (x1 - x0));
            y0 = std::max<std::int64_t>(y0, 0), x0 = std::max<std::int64_t>(x0, 0);
            y1 = std::min(y1, in.height), x1 = std::min(x1, in.width);
            divisor = spec.count_include_pad ? padded : static_cast<double>((y1 - y0) * (x1 - x0));
          }
          std::vector<std::size_t> window;
          for (std::int64_t iy = y0; iy < y1; ++iy)
            for (std::int64_t ix = x0; ix < x1; ++ix)
              window.push_back(static_cast<std::size_t>(((n * in.channels + c) * in.height + iy) * in.width + ix));
          visit(static_cast<std::size_t>(((n * in.channels + c) * out.height + y) * out.width + x), window, divisor);
        }
}

// Per-channel mean and inverse standard deviation (biased variance, as training uses).
void channel_statistics(const LayerSpec& spec, std::int64_t batch, const Values& src, std::vector<double>& mean,
                        std::vector<double>& inverse_std) {
  const std::int64_t channels = spec.input.channels, plane = spec.input.height * spec.input.width;
  const double count = static_cast<double>(batch * plane);
  mean.assign(channels, 0);
  inverse_std.assign(channels, 0);
  for (std::int64_t c = 0; c < channels; ++c) {
    double sum = 0, squares = 0;
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t i = 0; i < plane; ++i) sum += src[(n * channels + c) * plane + i];
    mean[c] = sum / count;
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t i = 0; i < plane; ++i) {
        const double centred = src[(n * channels + c) * plane + i] - mean[c];
        squares += centred * centred;
      }
    inverse_std[c] = 1 / std::sqrt(squares / count + spec.batch_norm_epsilon);
  }
}

std::vector<Values> batch_norm(const LayerSpec& spec, std::int64_t batch, Pass pass, const std::vector<Values>& in) {
  const Values& src = in[0];
  std::vector<double> mean, inverse_std;
  channel_statistics(spec, batch, src, mean, inverse_std);
  const std::int64_t channels = spec.input.channels, plane = spec.input.height * spec.input.width;
  const auto index = [&](std::int64_t n, std::int64_t c, std::int64_t i) { return (n * channels + c) * plane + i; };
  if (pass == Pass::forward) {
    Values dst(src.size());
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t c = 0; c < channels; ++c)
        for (std::int64_t i = 0; i < plane; ++i)
          dst[index(n, c, i)] =
              static_cast<float>((src[index(n, c, i)] - mean[c]) * inverse_std[c] * in[1][c] + in[2][c]);
    return {dst};
  }
  const Values& diff_dst = in[1];
  Values diff_scale(channels), diff_shift(channels), diff_src(src.size());
  const double count = static_cast<double>(batch * plane);
  for (std::int64_t c = 0; c < channels; ++c) {
    double sum_dy = 0, sum_dy_xhat = 0;
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t i = 0; i < plane; ++i) {
        sum_dy += diff_dst[index(n, c, i)];
        sum_dy_xhat += diff_dst[index(n, c, i)] * (src[index(n, c, i)] - mean[c]) * inverse_std[c];
      }
    diff_scale[c] = static_cast<float>(sum_dy_xhat), diff_shift[c] = static_cast<float>(sum_dy);
    if (pass == Pass::backward_data)
      for (std::int64_t n = 0; n < batch; ++n)
        for (std::int64_t i = 0; i < plane; ++i) {
          const double xhat = (src[index(n, c, i)] - mean[c]) * inverse_std[c];
          diff_src[index(n, c, i)] = static_cast<float>(
              in[2][c] * inverse_std[c] / count * (count * diff_dst[index(n, c, i)] - sum_dy - xhat * sum_dy_xhat));
        }
  }
  if (pass == Pass::backward_data) return {diff_src};
  return {diff_scale, diff_shift};
}

std::vector<Values> softmax_cross_entropy(const LayerSpec& spec, std::int64_t batch, Pass pass, const Values& logits) {
  const std::int64_t classes = spec.input.channels;
  double loss = 0;
  Values diff_src(logits.size());
  for (std::int64_t n = 0; n < batch; ++n) {
    const float* row = &logits[n * classes];
    const double largest = *std::max_element(row, row + classes);
    double sum = 0;
    for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(row[c] - largest);
    const double log_sum = largest + std::log(sum);
    loss -= (row[n % classes] - log_sum) / static_cast<double>(batch);
    for (std::int64_t c = 0; c < classes; ++c)
      diff_src[n * classes + c] =
          static_cast<float>((std::exp(row[c] - log_sum) - (c == n % classes ? 1 : 0)) / static_cast<double>(batch));
  }
  if (pass == Pass::forward) return {{static_cast<float>(loss)}};
  return {diff_src};
}

}  // namespace

std::vector<Values> reference_outputs(const LayerSpec& spec, std::int64_t batch, Pass pass,
                                      const std::vector<Values>& in) {
  const PassOperands operands = pass_operands(spec, batch, pass);
  std::vector<std::vector<double>> out;
  for (const Operand& operand : operands.outputs) out.emplace_back(static_cast<std::size_t>(operand.elements()), 0.0);
  const auto output = workloads::infer_output_shape(spec);
  switch (spec.kind) {
    case LayerKind::convolution:
    case LayerKind::inner_product: {
      // A linear layer is a 1x1 convolution of a 1x1 image.
      LayerSpec as_convolution = spec;
      if (spec.kind == LayerKind::inner_product)
        as_convolution.kernel_h = as_convolution.kernel_w = 1, as_convolution.groups = 1;
      const workloads::Shape out_shape{spec.output_channels, output->height, output->width};
      const std::size_t plane = static_cast<std::size_t>(out_shape.height * out_shape.width);
      if (pass == Pass::forward) {
        for_each_convolution_term(as_convolution, batch, out_shape, [&](std::size_t s, std::size_t w, std::size_t d) {
          out[0][d] += static_cast<double>(in[0][s]) * in[1][w];
        });
        if (spec.bias)
          for (std::size_t d = 0; d < out[0].size(); ++d) out[0][d] += in[2][d / plane % spec.output_channels];
      } else if (pass == Pass::backward_data) {
        for_each_convolution_term(as_convolution, batch, out_shape, [&](std::size_t s, std::size_t w, std::size_t d) {
          out[0][s] += static_cast<double>(in[0][d]) * in[1][w];
        });
      } else {
        for_each_convolution_term(as_convolution, batch, out_shape, [&](std::size_t s, std::size_t w, std::size_t d) {
          out[0][w] += static_cast<double>(in[0][s]) * in[1][d];
        });
        if (spec.bias)
          for (std::size_t d = 0; d < in[1].size(); ++d) out[1][d / plane % spec.output_channels] += in[1][d];
      }
      break;
    }
    case LayerKind::batch_norm:
      return batch_norm(spec, batch, pass, in);
    case LayerKind::eltwise: {
      const double upper = spec.eltwise == EltwiseAlgorithm::relu ? INFINITY : 6.0;
      for (std::size_t i = 0; i < in[0].size(); ++i) {
        const double x = in[0][i];
        out[0][i] = pass == Pass::forward ? std::clamp(x, 0.0, upper) : (x > 0 && x < upper ? in[1][i] : 0.0);
      }
      break;
    }
    case LayerKind::pooling:
    case LayerKind::adaptive_avg_pool: {
      const bool max = spec.kind == LayerKind::pooling && spec.pool == PoolAlgorithm::max;
      for_each_window(spec, batch, *output, [&](std::size_t d, const std::vector<std::size_t>& window, double divisor) {
        if (max) {
          std::size_t best = window.front();
          for (const std::size_t s : window)
            if (in[0][s] > in[0][best]) best = s;
          if (pass == Pass::forward)
            out[0][d] = in[0][best];
          else
            out[0][best] += in[1][d];
        } else {
          for (const std::size_t s : window) {
            if (pass == Pass::forward)
              out[0][d] += in[0][s] / divisor;
            else
              out[0][s] += in[1][d] / divisor;
          }
        }
      });
      break;
    }
    case LayerKind::add:
      for (const Values& summand : in)
        for (std::size_t i = 0; i < summand.size(); ++i) out[0][i] += summand[i];
      break;
    case LayerKind::concat: {
      const std::int64_t plane = spec.input.height * spec.input.width;
      std::int64_t offset = 0;
      for (std::size_t part = 0; part < in.size(); ++part) {
        const std::int64_t channels = spec.concat_channels[part];
        for (std::int64_t n = 0; n < batch; ++n)
          for (std::int64_t i = 0; i < channels * plane; ++i)
            out[0][(n * spec.input.channels + offset) * plane + i] = in[part][n * channels * plane + i];
        offset += channels;
      }
      break;
    }
    case LayerKind::softmax_cross_entropy:
      return softmax_cross_entropy(spec, batch, pass, in[0]);
    case LayerKind::dropout:
    case LayerKind::input:
    case LayerKind::flatten:
      return {};
  }
  std::vector<Values> result;
  for (const auto& values : out) result.emplace_back(values.begin(), values.end());
  return result;
}

std::vector<LayerSpec> check_layers() {
  std::vector<LayerSpec> specs;
  for (const char* descriptor :
       {"conv:ic4ih7iw7oc8kh3kw3sh2ph1bias1", "conv:ic6ih6iw5oc4kh1kw1sh1ph0", "conv:g4ic4ih6iw6oc8kh3kw3sh1ph1dh2",
        "bnorm:ic4ih5iw5eps0.001", "relu:ic4ih5iw5", "relu6:ic4ih5iw5", "maxpool:ic3ih8iw8kh3kw3sh2ph1",
        "maxpool:ic3ih8iw8kh3kw3sh2ph0ceil1", "avgpool:ic3ih7iw7kh3kw3sh1ph1", "avgpool:ic3ih7iw7kh3kw3sh2ph1exclpad1",
        "adaptavgpool:ic4ih6iw6oh1ow1", "adaptavgpool:ic4ih6iw6oh2ow3", "linear:ic10oc6bias1", "add:ic4ih5iw5",
        "add:ic4ih3iw3n3", "concat:ic4+6ih5iw5", "dropout:ic8ih5iw5p0.5", "softmaxloss:ic10"})
    specs.push_back(*workloads::parse_descriptor(descriptor));
  return specs;
}

namespace {

constexpr std::int64_t check_batch = 3;

// Dropout: every output is 0 or the input over (1-p), and the dropped share is near p.
void check_dropout(const LayerSpec& spec, const Values& given, const Values& output, CheckResult& result) {
  const double scale = 1 / (1 - spec.dropout_probability);
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < output.size(); ++i) {
    if (output[i] == 0) {
      ++dropped;
      continue;
    }
    const double error = std::abs(output[i] - given[i] * scale) / std::max(1e-3, std::abs(given[i] * scale));
    result.relative_error = std::max(result.relative_error, error);
  }
  const double share = static_cast<double>(dropped) / static_cast<double>(output.size());
  result.passed = result.relative_error <= check_tolerance && std::abs(share - spec.dropout_probability) < 0.15;
  if (!result.passed)
    result.reason = "outputs are not 0 or the input scaled by 1/(1-p) (dropped share " + std::to_string(share) + ")";
}

void compare(const std::vector<Values>& expected, const std::vector<Values>& actual, CheckResult& result) {
  for (std::size_t index = 0; index < expected.size(); ++index) {
    if (index >= actual.size() || actual[index].size() != expected[index].size()) {
      result.reason = "output " + std::to_string(index) + " has the wrong size";
      return;
    }
    double largest = 1e-6, difference = 0;
    for (std::size_t i = 0; i < expected[index].size(); ++i) {
      largest = std::max(largest, static_cast<double>(std::abs(expected[index][i])));
      difference = std::max(difference, static_cast<double>(std::abs(expected[index][i] - actual[index][i])));
    }
    result.relative_error = std::max(result.relative_error, difference / largest);
  }
  result.passed = result.relative_error <= check_tolerance;
  if (!result.passed) result.reason = "differs from the naive reference by " + std::to_string(result.relative_error);
}

}  // namespace

std::vector<CheckResult> check_backend(LayerBackend& backend) {
  std::vector<CheckResult> results;
  std::mt19937 generator(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const LayerSpec& spec : check_layers()) {
    for (const Pass pass : workloads::all_passes) {
      const PassOperands operands = pass_operands(spec, check_batch, pass);
      if (operands.outputs.empty()) continue;
      CheckResult result;
      result.descriptor = workloads::to_descriptor(spec);
      result.pass = pass;
      result.kind = spec.kind;
      std::vector<Values> inputs;
      for (const Operand& operand : operands.inputs) {
        Values values(static_cast<std::size_t>(operand.elements()));
        for (float& value : values) value = normal(generator);
        if (operand.name == "scale")  // batch-norm scales near 1, as trained ones are
          for (float& value : values) value = 1 + 0.25f * value;
        inputs.push_back(std::move(values));
      }
      auto prepared = backend.prepare(spec, check_batch, pass, 1);
      if (!prepared) {
        result.implemented = prepared.error().kind != ErrorKind::bad_input;
        result.reason = prepared.error().message;
        results.push_back(result);
        continue;
      }
      try {
        (*prepared)->set_inputs(inputs);
        (*prepared)->run();
        const std::vector<Values> actual = (*prepared)->outputs();
        if (spec.kind == LayerKind::dropout)
          check_dropout(spec, inputs.front(), actual.front(), result);
        else
          compare(reference_outputs(spec, check_batch, pass, inputs), actual, result);
      } catch (const std::exception& error) {
        result.reason = error.what();
      }
      results.push_back(result);
    }
  }
  return results;
}

}  // namespace dnntune::calibrate
