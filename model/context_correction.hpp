// model/context_correction.hpp — the context correction: a layer pass inside a real training
// step does not take what its isolated micro-run took (the allocator's state, warm caches and a
// running OpenMP team inside the step; see benchmarks/layer_sum_figures.sh). Every anchor times
// each module inside its steps (`train --module-times`, kind module records).
// Per pass (forward; backward = backward-data + backward-weights) and threads per process, the
// ratio of those in-network times, summed over all layers of a run, to what the calibration
// gives the same layers in isolation (the exact micro-run, else the model) is fitted here, the
// geometric mean over the anchors' runs.
//
// The predictor applies it to networks never trained on this machine (one with an anchor of its
// own keeps that anchor's whole-network correction, the nearest setting's), and widens the band
// by the spread of the runs' ratios: ratio^(±1.645 log_sd) on the corrected share. A calibration without module
// records has no ratios and predicts exactly as before.
#pragma once

#include <vector>

#include "model/calibration.hpp"
#include "model/layer_class.hpp"
#include "records/measurement.hpp"

namespace dnntune::model {

// The ratios from `records` (kind module, this calibration's machine and backend, one node,
// glibc's default allocator), the newest record of each module and pass counting. A pass with
// no isolated time to compare against is left out.
std::vector<ContextRatio> fit_context_ratios(const std::vector<records::Measurement>& records,
                                             const Calibration& calibration);

// The ratio for `pass` at `threads` per process: fitted at that thread count, else at the
// nearest one (the fewer on a tie); null when none was fitted. Backward-data and
// backward-weights both take the "backward" ratio.
const ContextRatio* find_context_ratio(const std::vector<ContextRatio>& ratios, workloads::Pass pass, int threads);

}  // namespace dnntune::model
