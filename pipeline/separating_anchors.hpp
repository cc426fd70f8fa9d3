// pipeline/separating_anchors.hpp — the second round of anchors of a calibration: after the first
// fit, the settings that the tuner cannot tell apart from its top candidate (bands that overlap
// the top one's), and the top candidates themselves when no real step backs them, are trained
// for real (train/anchor.hpp, default allocator) within a budget, so that the refit answers
// both sides of a close call as "measured" instead of carrying the base anchor's correction to
// them. When no anchor of a network and batch runs one thread per process and the budget still
// allows, one more is trained there (Px1): single-thread dispatch cliffs live there and micro-runs
// miss them (model/predictor.cpp carries the nearest anchor's correction to nearby settings).
// Right after the first of them, when the first fit recommends an allocator variant and no run
// at that layout's threads per process was trained under it, the same layout is trained under
// glibc-tuned and that variant: the allocator's gain depends on how many threads allocate in a
// process (model/allocation.hpp), and the pick between layouts is made under the allocator the
// answer sets (tuner::recommend_allocator).
//
// Then, while a first run's time allows, the close calls that the anchors' runs cannot settle are
// trained again, one run at a time (run_close_call_anchor).
//
// Lives in pipeline/ because it needs both the tuner's ranking and the trainer; model/ and tuner/
// never see the trainer. Resumable: a run recorded in DIR/network.jsonl is never trained again.
// The caller holds the cache lock and refits when anything was trained.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/calibration.hpp"
#include "records/measurement.hpp"

namespace dnntune::pipeline {

struct SeparatingAnchorRequest {
  std::vector<std::string> models;    // as the calibration named them (built-in names or network files)
  std::vector<std::int64_t> batches;  // per process, the batches the tuner compares
  std::string directory;              // the measurement directory: DIR/network.jsonl is read and appended
  std::string executable;             // the dnntune binary (its `train` command trains)
  // A run whose warm-up and one timed step, estimated from the recorded anchor, would pass it is
  // skipped; the others get what is left as the trainer's time limit (train --time-limit).
  double budget_seconds = 60;
  // > budget_seconds: the first anchor trained (the closest call, what decides the pick) may take
  // up to this instead: a first run's plan kept it, and its estimate from the model's ratio to the
  // base anchor can be longer than the plan's. The others keep to budget_seconds.
  double first_budget_seconds = 0;
  int warmup = 1, iterations = 3;  // like the first run's base anchor (glibc's default malloc settles late)
  // What one warm-up step costs in steady steps (a first run measures it on its base anchor: the
  // first step creates every kernel and faults every activation in), for the runs' estimates.
  double warmup_steps = 1;
  // An anchor's timed steps stop once its steps have run this long (train --time-limit), so that a
  // slow setting costs its warm-up and one timed step (long steps agree: max/min 1.00 over such
  // anchors) and the rest of a first run goes to the allocator anchors; short steps still get all
  // `iterations`. Without the cap a one-thread cliff setting given the whole budget runs all its
  // timed steps, and the allocator anchors after it are skipped (docs/results.md, "The first run").
  double steps_limit_seconds = 45;
  std::size_t candidates = 3;  // the top-ranked settings considered per network
  // A close call's sides are trained up to this many runs each (run_close_call_anchor): on a
  // drifting machine two settings a few percent apart can stay within their runs' spread however
  // many runs they get, so more runs stop paying.
  int close_call_runs = 7;
  // The answer's close call timed by PyTorch (run_setup_check): up to this many runs a side, each
  // with this many untimed steps (the first optimizer step creates the momentum buffers, so the
  // second faults its activations in anew under an allocator that keeps its memory) before
  // `iterations` timed ones.
  int setup_check_runs = 2;
  int setup_check_warmup = 2;
  // Who trains the separating anchors, their runs under the recommended allocator and the close
  // calls (records::kCppTrainer or kPythonTrainer): a first run gives them to PyTorch from Python
  // wherever it can train the network (the step users run: the C++ trainer's anchors ordered
  // layouts otherwise, docs/results.md); the base anchor's C++ run keeps the layers' per-module times.
  std::string runner = records::kCppTrainer;
  std::function<void(const std::string&)> progress;  // a line per anchor trained or skipped; may be empty
};

// Trains what separates the top candidates of each network of `request` under `calibration`
// (the first fit of DIR's measurements); returns how many anchors it trained (0: no refit needed).
// Fails when a training job fails.
Expected<int> run_separating_anchors(const model::Calibration& calibration, const SeparatingAnchorRequest& request);

// A close call the runs cannot settle yet: the pick and a measured candidate whose runs lie within
// what a setting's runs move (tuner::within_run_spread). Of the first network that has one, the
// side whose last run is older is trained once more (warm-up and `iterations` steps, C++ trainer,
// default allocator; a side with close_call_runs runs is not trained again), so that called
// again after a refit the two alternate and a VM's drift over
// minutes falls on both. Returns 1 when it trained, 0 when no close call is left or its next run
// would not fit `request.budget_seconds`: the caller refits and calls again while its time allows.
// Why: the paired replicates cannot see an anchor's noise, so a close call decided by one run
// against three can go the wrong way while the answer claims a clear pick (docs/results.md).
Expected<int> run_close_call_anchor(const model::Calibration& calibration, const SeparatingAnchorRequest& request);

// The answer's setups timed as the user's job runs them (model/measured_setups.hpp), by PyTorch
// from Python (train --runner python --allocator): the setup the answer sets (layout and
// allocator, tuner::recommend_allocator); the other side of its close call under the allocator
// recommended for it (the runs' pick when the answer switched away from it, else the best-ranked
// measured candidate within what the pick's runs move); each of those layouts under
// glibc-tuned where glibc's defaults were recommended for it; and the answer's layout under the
// model's pick of allocator and the variants its measurements cannot order against that pick
// (tuner::AllocatorChoice::close), and under glibc's defaults where that pick's band includes no
// gain. Of the first network with two such
// setups, the one with fewest runs (the first listed on a tie) is trained once; a setup with
// setup_check_runs runs is not trained again, and the first run of all starts only when a second
// fits `request.budget_seconds` too. Returns 1 when it trained, 0 when nothing is left to time, it
// would not fit, or this machine's python3 cannot train (said): the caller refits and calls again
// while its time allows. Why: the C++ trainer allocates otherwise than PyTorch; it showed two
// layouts within 2% under glibc-tuned where PyTorch ran one 1.2x faster, and one timed step of it
// under glibc-tuned no faster than glibc's defaults where PyTorch ran 1.6x faster, and tcmalloc
// level with glibc-tuned where PyTorch ran it 4-25% faster (docs/results.md).
Expected<int> run_setup_check(const model::Calibration& calibration, const SeparatingAnchorRequest& request);

}  // namespace dnntune::pipeline
