// calibrate/layer_operands.hpp — what one pass of one layer reads and writes: the operand
// tensors, in a fixed order and plain layout, that every backend allocates for a micro-run and
// that the numerical check feeds to a backend and to the naive reference alike.
//
// Plain layouts: activations N x C x H x W (the inputs and outputs of linear layers and of the
// loss are N x C); convolution weights O x I/groups x KH x KW; vectors (bias, batch-norm scale
// and shift) C. The loss's labels are not an operand: image i's class is i mod C, everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/costs.hpp"
#include "workloads/layer.hpp"

namespace dnntune::calibrate {

struct Operand {
  std::string name;  // "src", "weights", "diff_dst", ...
  std::vector<std::int64_t> dims;

  std::int64_t elements() const;
};

struct PassOperands {
  std::vector<Operand> inputs;
  std::vector<Operand> outputs;
};

// The operands of `pass` at `batch`, by kind and pass:
//   convolution, linear  forward           src weights [bias]  -> dst
//                        backward_data     diff_dst weights    -> diff_src
//                        backward_weights  src diff_dst        -> diff_weights [diff_bias]
//   batch_norm           forward           src scale shift     -> dst         (batch statistics)
//                        backward_data     src diff_dst scale  -> diff_src
//                        backward_weights  src diff_dst        -> diff_scale diff_shift
//   eltwise, pooling,    forward           src                 -> dst
//   adaptive_avg_pool    backward_data     src diff_dst        -> diff_src
//   add, concat          forward           src0 src1 ...       -> dst
//   dropout              forward           src                 -> dst         (a fresh mask)
//                        backward_data     diff_dst            -> diff_src    (the forward's mask)
//   softmax_cross_entropy forward          src                 -> loss (1 element, the batch mean)
//                        backward_data     src                 -> diff_src    (of the mean loss)
// A pass a layer does not have (no backward_weights without parameters; add and concat pass
// gradients on as views, see workloads/costs.hpp; flatten and input compute nothing) has no
// operands at all.
PassOperands pass_operands(const workloads::LayerSpec& spec, std::int64_t batch, workloads::Pass pass);

// Whether the layer has this pass (pass_operands is not empty).
bool has_pass(const workloads::LayerSpec& spec, workloads::Pass pass);

// Fp32 bytes of all operands of a pass.
std::int64_t operand_bytes(const PassOperands& operands);

// Whether a training iteration finds `operand` of `pass` just written: a forward's inputs
// were produced by the layer before it a moment ago, a backward pass's incoming gradient
// (diff_dst) by the layer after it. Micro-runs keep one copy of these, shared by every operand
// set, so they are as warm as the cache lets them be. Everything else rotates: weights and what
// the forward kept for backward were last touched a whole network ago, and outputs are written
// into memory some other layer used last.
//
// Why: rotating every operand times passes slower than they run in training, keeping every
// operand warm faster; training lies between the two (docs/results.md, "Micro-runs").
bool operand_just_written(const std::string& name, workloads::Pass pass);

// How many independent operand sets a micro-run rotates through so that no repetition finds
// the rotating operands (those not just written) in cache from the one before: enough sets to
// span twice the last-level cache, at most 8, and 1 when one set is already that large.
int operand_sets_for_cold_cache(const PassOperands& operands, workloads::Pass pass,
                                std::int64_t last_level_cache_bytes);

}  // namespace dnntune::calibrate
