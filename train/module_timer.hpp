// train/module_timer.hpp — the time of each layer (module) inside a real training step, for
// `dnntune train --module-times`: what the isolated micro-runs of calibrate/ are compared with.
//
// Forward: a steady clock around each layer's op in TorchNetwork::forward (CPU ops are
// synchronous, so the op's time is the layer's time). Backward: a gradient hook on each layer's
// output fires when autograd is about to run that layer's backward function; on the CPU autograd
// runs one function at a time on the calling thread, so the time from one hook to the next is
// the backward of the first hook's layer (backward-data and backward-weights together, and the
// in-place ops folded into it). What no hook covers (the engine's start, before the loss's hook)
// and the forward's time outside the layers' ops is the step's "untimed glue".
// The hooks can slow the step they time (under glibc's defaults a step's time moves with its
// heap's state, which the hooks' allocations change; docs/results.md), so the trainer times the layers in its
// last warm-up step and scales them to its timed steps (TrainOptions::module_times).
//
// A light header: names libtorch's Tensor without including libtorch.
#pragma once

#include <cstddef>
#include <vector>

namespace at {
class Tensor;
}

namespace dnntune::train {

class ModuleTimer {
 public:
  explicit ModuleTimer(std::size_t layers);

  // Call before the timed step's forward (the trainer times the layers in one step, the last
  // warm-up one, so the steps it times run without the hooks).
  void begin_step();
  void forward_done(std::size_t layer, double seconds);
  // Registers the hook that marks when `output`'s gradient reaches `layer`'s backward (nothing
  // when `output` needs no gradient).
  void watch_backward(std::size_t layer, at::Tensor& output);
  // Call when the step's backward has returned, at `backward_end` (probe::now_seconds()).
  void end_step(double backward_end);
  // Multiplies every kept forward and backward time (and their sums) by these factors: the
  // trainer's timed steps' median pass over the pass of the step the layers were timed in.
  void scale(double forward_factor, double backward_factor);

  // Per layer, per kept step (a layer without a hook has no backward samples: it ran none).
  const std::vector<std::vector<double>>& forward_samples() const { return forward_; }
  const std::vector<std::vector<double>>& backward_samples() const { return backward_; }
  // Per kept step: the sums over layers.
  const std::vector<double>& forward_sums() const { return forward_sums_; }
  const std::vector<double>& backward_sums() const { return backward_sums_; }

 private:
  struct Mark {
    std::size_t layer;
    double at;
  };
  double forward_sum_ = 0;
  std::vector<double> step_forward_;
  std::vector<Mark> marks_;
  std::vector<std::vector<double>> forward_, backward_;
  std::vector<double> forward_sums_, backward_sums_;
};

}  // namespace dnntune::train
