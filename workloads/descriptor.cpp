// workloads/descriptor.cpp — printing and parsing the canonical layer descriptors described at
// the top of layer.hpp (`conv:ic64ih56iw56oc64kh3kw3sh1ph1`).
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "workloads/layer.hpp"

namespace dnntune::workloads {
namespace {

struct Prefix {
  const char* text;
  LayerKind kind;
  EltwiseAlgorithm eltwise;
  PoolAlgorithm pool;
  const char* keys;  // the keys this prefix accepts, space-separated, in canonical order
};

constexpr Prefix prefixes[] = {
    {"input", LayerKind::input, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw"},
    {"conv", LayerKind::convolution, EltwiseAlgorithm::relu, PoolAlgorithm::max,
     "g ic ih iw oc kh kw sh sw ph pw dh dw bias"},
    {"bnorm", LayerKind::batch_norm, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw eps"},
    {"relu", LayerKind::eltwise, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw"},
    {"relu6", LayerKind::eltwise, EltwiseAlgorithm::relu6, PoolAlgorithm::max, "ic ih iw"},
    {"maxpool", LayerKind::pooling, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw kh kw sh sw ph pw ceil"},
    {"avgpool", LayerKind::pooling, EltwiseAlgorithm::relu, PoolAlgorithm::avg,
     "ic ih iw kh kw sh sw ph pw ceil exclpad"},
    {"adaptavgpool", LayerKind::adaptive_avg_pool, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw oh ow"},
    {"linear", LayerKind::inner_product, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic oc bias"},
    {"add", LayerKind::add, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw n"},
    {"concat", LayerKind::concat, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw"},
    {"flatten", LayerKind::flatten, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw"},
    {"dropout", LayerKind::dropout, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic ih iw p"},
    {"softmaxloss", LayerKind::softmax_cross_entropy, EltwiseAlgorithm::relu, PoolAlgorithm::max, "ic"},
};

constexpr double default_batch_norm_epsilon = 1e-5;

const Prefix& prefix_of(const LayerSpec& spec) {
  for (const Prefix& prefix : prefixes) {
    if (prefix.kind != spec.kind) continue;
    if (spec.kind == LayerKind::eltwise && prefix.eltwise != spec.eltwise) continue;
    if (spec.kind == LayerKind::pooling && prefix.pool != spec.pool) continue;
    return prefix;
  }
  return prefixes[0];  // unreachable: every kind and algorithm has a prefix
}

// The shortest plain decimal (no exponent, so it never contains a key letter) that reads back
// as exactly `value`.
std::string decimal(double value) {
  char text[64];
  for (int decimals = 1; decimals <= 30; ++decimals) {
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    std::string printed = text;
    while (printed.back() == '0') printed.pop_back();
    if (printed.back() == '.') printed.pop_back();
    if (std::strtod(printed.c_str(), nullptr) == value) return printed;
  }
  return text;
}

// Reads the key/value pairs of one descriptor; keeps the first error so that the caller can
// read every key unconditionally and check once.
class KeyReader {
 public:
  explicit KeyReader(std::map<std::string, std::string> values) : values_(std::move(values)) {}

  bool has(const std::string& key) const { return values_.count(key) != 0; }

  std::int64_t integer(const std::string& key, std::int64_t fallback) {
    const auto found = values_.find(key);
    if (found == values_.end()) return fallback;
    return parse_integer(key, found->second);
  }

  std::int64_t required_integer(const std::string& key) {
    if (!has(key)) fail("missing key '" + key + "'");
    return integer(key, 0);
  }

  bool flag(const std::string& key) {
    const std::int64_t value = integer(key, 0);
    if (value != 0 && value != 1) fail("'" + key + "' must be 0 or 1");
    return value == 1;
  }

  double real(const std::string& key, double fallback) {
    const auto found = values_.find(key);
    if (found == values_.end()) return fallback;
    const std::string& text = found->second;
    const auto dot = text.find('.');
    const bool well_formed = text.find('+') == std::string::npos && text.front() != '.' && text.back() != '.' &&
                             text.find('.', dot + 1) == std::string::npos;
    if (!well_formed || text.size() > 40) fail("'" + key + "' needs a decimal number, not '" + text + "'");
    return std::strtod(text.c_str(), nullptr);
  }

  std::vector<std::int64_t> integer_list(const std::string& key) {
    std::vector<std::int64_t> list;
    if (!has(key)) {
      fail("missing key '" + key + "'");
      return list;
    }
    const std::string& text = values_.at(key);
    std::size_t start = 0;
    while (true) {
      const std::size_t plus = text.find('+', start);
      list.push_back(parse_integer(key, text.substr(start, plus - start)));
      if (plus == std::string::npos) break;
      start = plus + 1;
    }
    return list;
  }

  void fail(const std::string& message) {
    if (error_.empty()) error_ = message;
  }
  const std::string& error() const { return error_; }

 private:
  std::int64_t parse_integer(const std::string& key, const std::string& text) {
    const bool digits_only =
        !text.empty() && text.size() <= 10 && text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits_only) {
      fail("'" + key + "' needs a whole number up to 10 digits, not '" + text + "'");
      return 0;
    }
    return std::stoll(text);
  }

  std::map<std::string, std::string> values_;
  std::string error_;
};

void read_input_shape(KeyReader& keys, LayerSpec& spec) {
  spec.input.channels = keys.required_integer("ic");
  spec.input.height = keys.required_integer("ih");
  spec.input.width = keys.integer("iw", spec.input.height);
}

void read_window(KeyReader& keys, LayerSpec& spec) {
  spec.kernel_h = keys.required_integer("kh");
  spec.kernel_w = keys.integer("kw", spec.kernel_h);
  spec.stride_h = keys.integer("sh", 1);
  spec.stride_w = keys.integer("sw", spec.stride_h);
  spec.pad_h = keys.integer("ph", 0);
  spec.pad_w = keys.integer("pw", spec.pad_h);
}

void read_fields(KeyReader& keys, LayerSpec& spec) {
  switch (spec.kind) {
    case LayerKind::input:
    case LayerKind::eltwise:
    case LayerKind::flatten:
      read_input_shape(keys, spec);
      break;
    case LayerKind::convolution:
      spec.groups = keys.integer("g", 1);
      read_input_shape(keys, spec);
      spec.output_channels = keys.required_integer("oc");
      read_window(keys, spec);
      spec.dilation_h = keys.integer("dh", 1);
      spec.dilation_w = keys.integer("dw", spec.dilation_h);
      spec.bias = keys.flag("bias");
      break;
    case LayerKind::batch_norm:
      read_input_shape(keys, spec);
      spec.batch_norm_epsilon = keys.real("eps", default_batch_norm_epsilon);
      break;
    case LayerKind::pooling:
      read_input_shape(keys, spec);
      read_window(keys, spec);
      spec.ceil_mode = keys.flag("ceil");
      spec.count_include_pad = !keys.flag("exclpad");
      break;
    case LayerKind::adaptive_avg_pool:
      read_input_shape(keys, spec);
      spec.output_h = keys.required_integer("oh");
      spec.output_w = keys.integer("ow", spec.output_h);
      break;
    case LayerKind::inner_product:
      spec.input = {keys.required_integer("ic"), 1, 1};
      spec.output_channels = keys.required_integer("oc");
      spec.bias = keys.flag("bias");
      break;
    case LayerKind::add:
      read_input_shape(keys, spec);
      spec.add_inputs = keys.integer("n", 2);
      break;
    case LayerKind::concat: {
      spec.concat_channels = keys.integer_list("ic");
      std::int64_t total = 0;
      for (const std::int64_t channels : spec.concat_channels) total += channels;
      spec.input = {total, keys.required_integer("ih"), 0};
      spec.input.width = keys.integer("iw", spec.input.height);
      break;
    }
    case LayerKind::dropout:
      read_input_shape(keys, spec);
      spec.dropout_probability = keys.real("p", 0.5);
      break;
    case LayerKind::softmax_cross_entropy:
      spec.input = {keys.required_integer("ic"), 1, 1};
      break;
  }
}

std::string known_prefixes() {
  std::string list;
  for (const Prefix& prefix : prefixes) list += std::string(list.empty() ? "" : ", ") + prefix.text;
  return list;
}

}  // namespace

std::string to_descriptor(const LayerSpec& spec) {
  std::string out = std::string(prefix_of(spec).text) + ":";
  const auto put = [&out](const char* key, std::int64_t value) {
    out += key;
    out += std::to_string(value);
  };
  const auto put_input = [&] {
    put("ic", spec.input.channels);
    put("ih", spec.input.height);
    put("iw", spec.input.width);
  };
  const auto put_window = [&] {
    put("kh", spec.kernel_h);
    put("kw", spec.kernel_w);
    put("sh", spec.stride_h);
    if (spec.stride_w != spec.stride_h) put("sw", spec.stride_w);
    put("ph", spec.pad_h);
    if (spec.pad_w != spec.pad_h) put("pw", spec.pad_w);
  };
  switch (spec.kind) {
    case LayerKind::input:
    case LayerKind::eltwise:
    case LayerKind::flatten:
      put_input();
      break;
    case LayerKind::convolution:
      if (spec.groups != 1) put("g", spec.groups);
      put_input();
      put("oc", spec.output_channels);
      put_window();
      if (spec.dilation_h != 1) put("dh", spec.dilation_h);
      if (spec.dilation_w != spec.dilation_h) put("dw", spec.dilation_w);
      if (spec.bias) put("bias", 1);
      break;
    case LayerKind::batch_norm:
      put_input();
      if (spec.batch_norm_epsilon != default_batch_norm_epsilon) out += "eps" + decimal(spec.batch_norm_epsilon);
      break;
    case LayerKind::pooling:
      put_input();
      put_window();
      if (spec.ceil_mode) put("ceil", 1);
      if (spec.pool == PoolAlgorithm::avg && !spec.count_include_pad) put("exclpad", 1);
      break;
    case LayerKind::adaptive_avg_pool:
      put_input();
      put("oh", spec.output_h);
      put("ow", spec.output_w);
      break;
    case LayerKind::inner_product:
      put("ic", spec.input.channels);
      put("oc", spec.output_channels);
      if (spec.bias) put("bias", 1);
      break;
    case LayerKind::add:
      put_input();
      if (spec.add_inputs != 2) put("n", spec.add_inputs);
      break;
    case LayerKind::concat:
      out += "ic";
      for (std::size_t i = 0; i < spec.concat_channels.size(); ++i)
        out += (i ? "+" : "") + std::to_string(spec.concat_channels[i]);
      put("ih", spec.input.height);
      put("iw", spec.input.width);
      break;
    case LayerKind::dropout:
      put_input();
      out += "p" + decimal(spec.dropout_probability);
      break;
    case LayerKind::softmax_cross_entropy:
      put("ic", spec.input.channels);
      break;
  }
  return out;
}

Expected<LayerSpec> parse_descriptor(const std::string& descriptor) {
  const auto failed = [&descriptor](const std::string& message) {
    return bad_input("layer descriptor '" + descriptor + "': " + message);
  };
  const std::size_t colon = descriptor.find(':');
  if (colon == std::string::npos) return failed("expected KIND:KEYVALUES, e.g. conv:ic64ih56iw56oc64kh3kw3sh1ph1");
  const std::string prefix_text = descriptor.substr(0, colon);
  const Prefix* prefix = nullptr;
  for (const Prefix& candidate : prefixes)
    if (prefix_text == candidate.text) prefix = &candidate;
  if (!prefix) return failed("unknown kind '" + prefix_text + "' (known: " + known_prefixes() + ")");

  const std::string allowed_text = std::string(" ") + prefix->keys + " ";
  std::map<std::string, std::string> values;
  std::size_t at = colon + 1;
  while (at < descriptor.size()) {
    std::size_t end = at;
    while (end < descriptor.size() && std::islower(static_cast<unsigned char>(descriptor[end]))) ++end;
    const std::string key = descriptor.substr(at, end - at);
    if (key.empty()) return failed("expected a key (letters) at '" + descriptor.substr(at) + "'");
    at = end;
    while (end < descriptor.size() && (std::isdigit(static_cast<unsigned char>(descriptor[end])) ||
                                       descriptor[end] == '.' || descriptor[end] == '+'))
      ++end;
    const std::string value = descriptor.substr(at, end - at);
    at = end;
    if (value.empty()) return failed("key '" + key + "' has no value");
    if (allowed_text.find(" " + key + " ") == std::string::npos)
      return failed("unknown key '" + key + "' for " + prefix->text + " (keys: " + prefix->keys + ")");
    if (!values.emplace(key, value).second) return failed("key '" + key + "' given twice");
  }

  LayerSpec spec;
  spec.kind = prefix->kind;
  spec.eltwise = prefix->eltwise;
  spec.pool = prefix->pool;
  KeyReader keys(std::move(values));
  read_fields(keys, spec);
  if (!keys.error().empty()) return failed(keys.error());
  if (auto shape = infer_output_shape(spec); !shape) return failed(shape.error().message);
  return spec;
}

}  // namespace dnntune::workloads
