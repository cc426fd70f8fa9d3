// calibrate/onednn_backend.cpp — the "onednn" layer backend: oneDNN primitives created once
// and executed again and again, the kernel cost a TensorFlow- or MXNet-style framework sees
// (onednn_layer.hpp has the primitives and layouts), and the whole network as a chain of the
// same primitives with reorders where a convolution wants another layout than it is given.
#include <omp.h>

#include <stdexcept>

#include "probe/cpu_features.hpp"
#include "calibrate/layer_backend.hpp"
#include "calibrate/layer_operands.hpp"
#include "calibrate/onednn_layer.hpp"

namespace dnntune::calibrate {

using workloads::LayerKind;
using workloads::LayerSpec;
using workloads::Pass;

namespace {

dnnl::memory& operand_slot(onednn::LayerMemories& memories, const std::string& name) {
  if (name.rfind("src", 0) == 0) return memories.src.at(name.size() > 3 ? std::stoul(name.substr(3)) : 0);
  if (name == "weights" || name == "scale") return memories.weights;
  if (name == "bias" || name == "shift") return memories.bias;
  if (name == "diff_dst") return memories.diff_dst;
  if (name == "dst") return memories.dst;
  if (name == "diff_src") return memories.diff_src;
  if (name == "diff_weights" || name == "diff_scale") return memories.diff_weights;
  if (name == "diff_bias" || name == "diff_shift") return memories.diff_bias;
  throw std::logic_error("unknown operand " + name);
}

class OnednnPreparedLayer final : public PreparedLayer {
 public:
  OnednnPreparedLayer(std::shared_ptr<const onednn::Layer> layer, PassOperands operands, Pass pass, int operand_sets,
                      const dnnl::engine& engine)
      : layer_(std::move(layer)), operands_(std::move(operands)), pass_(pass), stream_(engine) {
    for (int set = 0; set < operand_sets; ++set) {
      sets_.push_back(layer_->allocate(static_cast<std::uint32_t>(1000 * set + 1)));
      if (set > 0)  // one copy of what training finds just written (see operand_just_written)
        for (const Operand& operand : operands_.inputs)
          if (operand_just_written(operand.name, pass_))
            operand_slot(sets_.back(), operand.name) = operand_slot(sets_.front(), operand.name);
      keep_forward_results(sets_.back());
    }
  }

  void run() override {
    layer_->execute(pass_, stream_, sets_[next_]);
    last_ = next_;
    next_ = (next_ + 1) % sets_.size();
  }

  void set_inputs(const std::vector<std::vector<float>>& inputs) override {
    for (auto& memories : sets_) {
      for (std::size_t index = 0; index < operands_.inputs.size(); ++index)
        onednn::write_plain(stream_, operand_slot(memories, operands_.inputs[index].name), inputs.at(index));
      keep_forward_results(memories);
    }
  }

  std::vector<std::vector<float>> outputs() override {
    std::vector<std::vector<float>> result;
    for (const Operand& operand : operands_.outputs) {
      if (operand.name == "loss")
        result.push_back({sets_[last_].loss});
      else
        result.push_back(onednn::read_plain(stream_, operand_slot(sets_[last_], operand.name)));
    }
    return result;
  }

 private:
  // Backward passes read the batch statistics, pooling workspace or log-probabilities of a
  // forward, and backward_data its weights in its own layout.
  void keep_forward_results(onednn::LayerMemories& memories) {
    if (pass_ == Pass::forward) return;
    layer_->execute(Pass::forward, stream_, memories);
    layer_->reorder_weights_for_backward(stream_, memories);
  }

  std::shared_ptr<const onednn::Layer> layer_;
  PassOperands operands_;
  Pass pass_;
  dnnl::stream stream_;
  std::vector<onednn::LayerMemories> sets_;
  std::size_t next_ = 0, last_ = 0;
};

class OnednnBackend final : public LayerBackend {
 public:
  OnednnBackend() : engine_(dnnl::engine::kind::cpu, 0) {}

  std::string name() const override { return "onednn"; }
  std::string version() const override { return onednn_backend_version(); }
  // oneDNN here runs on OpenMP and sizes its parallel regions (and some blockings, at creation)
  // by omp_get_max_threads.
  void set_threads(int threads) override { omp_set_num_threads(threads); }

  Expected<std::unique_ptr<PreparedLayer>> prepare(const LayerSpec& spec, std::int64_t batch, Pass pass,
                                                   int operand_sets) override {
    PassOperands operands = pass_operands(spec, batch, pass);
    if (operands.outputs.empty())
      return bad_input(workloads::to_descriptor(spec) + " has no " + workloads::pass_name(pass) + " pass");
    std::vector<dnnl::memory::desc> inputs;
    const bool vector_input = spec.kind == LayerKind::inner_product || spec.kind == LayerKind::softmax_cross_entropy;
    for (const auto& shape : workloads::expected_input_shapes(spec))
      inputs.push_back(onednn::activation_desc(
          vector_input ? std::vector<std::int64_t>{batch, shape.channels}
                       : std::vector<std::int64_t>{batch, shape.channels, shape.height, shape.width}));
    try {
      auto layer = onednn::Layer::create(spec, batch, inputs, pass != Pass::forward, engine_);
      if (!layer) return layer.error();
      if (!(*layer)->primitive(pass))
        return bad_input(
            "oneDNN computes the scale and shift gradients of batch normalization in the same "
            "primitive as its data gradient (timed as backward_data)");
      return std::unique_ptr<PreparedLayer>(
          new OnednnPreparedLayer(std::move(*layer), std::move(operands), pass, operand_sets, engine_));
    } catch (const std::exception& error) {  // dnnl::error or std::bad_alloc while allocating
      return failure(std::string("oneDNN: ") + error.what());
    }
  }

  Expected<std::unique_ptr<PreparedRun>> prepare_network(const workloads::Network& network,
                                                         std::int64_t batch) override {
    try {
      return onednn::make_network_run(network, batch, engine_);
    } catch (const std::exception& error) {
      return failure(std::string("oneDNN: ") + error.what());
    }
  }

 private:
  dnnl::engine engine_;
};

}  // namespace

std::unique_ptr<LayerBackend> make_onednn_backend() { return std::make_unique<OnednnBackend>(); }

std::string onednn_backend_version() { return "oneDNN " + probe::onednn_version(); }

}  // namespace dnntune::calibrate
