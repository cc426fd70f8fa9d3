// pipeline/separating_anchors.hpp — the second round of anchors of a calibration: after the first
// fit, the settings that the tuner cannot tell apart from its top candidate (bands that overlap
// the top one's), and the top candidates themselves when no real step backs them, are trained
// for real (train/anchor.hpp, default allocator) within a budget, so that the refit answers
// both sides of a close call as "measured" instead of carrying the base anchor's correction to
// them. When no anchor of a network and batch runs one thread per process and the budget still
// allows, one more is trained there (Px1): single-thread dispatch cliffs live there and micro-runs
// miss them (model/predictor.cpp carries the nearest anchor's correction to nearby settings).
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

namespace dnntune::pipeline {

struct SeparatingAnchorRequest {
  std::vector<std::string> models;    // as the calibration named them (built-in names or network files)
  std::vector<std::int64_t> batches;  // per process, the batches the tuner compares
  std::string directory;              // the measurement directory: DIR/network.jsonl is read and appended
  std::string executable;             // the dnntune binary (its `train` command trains)
  // A run whose warm-up and one timed step, estimated from the recorded anchor, would pass it is
  // skipped; the others get what is left as the trainer's time limit (train --time-limit).
  double budget_seconds = 60;
  int warmup = 1, iterations = 3;     // like the first run's base anchor (glibc's default malloc settles late)
  // An anchor's timed steps stop once its steps have run this long (train --time-limit), so that a
  // slow setting costs its warm-up and one timed step (long steps agree: max/min 1.00 over such
  // anchors) and the rest of a first run goes to the allocator anchors; short steps still get all
  // `iterations`. Measured: resnet50 b8 at 2x1 (a one-thread cliff, 20 s steps) given the whole
  // budget's 80 s ran three timed steps, and the allocator anchors after it were all skipped.
  double steps_limit_seconds = 45;
  std::size_t candidates = 3;         // the top-ranked settings considered per network
  std::function<void(const std::string&)> progress;  // a line per anchor trained or skipped; may be empty
};

// Trains what separates the top candidates of each network of `request` under `calibration`
// (the first fit of DIR's measurements); returns how many anchors it trained (0: no refit needed).
// Fails when a training job fails.
Expected<int> run_separating_anchors(const model::Calibration& calibration, const SeparatingAnchorRequest& request);

}  // namespace dnntune::pipeline
