// pipeline/default_calibration.hpp — the embedded default behind `recommend`, `predict`, `scale` and
// `validate` when no --calibration is given: this machine's calibration, kept in the user's
// cache keyed by machine fingerprint, backend and its version, and dnntune's version.
//
// The first use calibrates the network at the batches asked for and fits it; later uses answer
// from the cache. What the first run does, in order:
//   - the request is checked in full (network, batches) before the cache is touched;
//   - a lock on the entry makes concurrent runs take turns: one calibrates, the others wait and
//     then answer from what it made (nothing measured twice);
//   - the probe (peaks, bandwidth) runs once; its time is not taken from the budget;
//   - the layer micro-runs of the asked network: every distinct layer at the base setting first,
//     then the other settings the tuner compares, within the budget, which is extended up to
//     the cap when the network's grid needs it;
//   - the anchor: the network trained for real at the base setting;
//   - the first fit, then the anchors that separate the tuner's top candidates within their own
//     budget and what is left of the first run's (separating_anchors.hpp), then the anchors under
//     the other allocators with what is left after those, and the refit. The entry counts as
//     covered only after that, so an interrupted run resumes it;
//   - the fit. A run that measured nothing still answers: from the model alone (the built-in
//     reference calibration on this machine's probed peaks), said in a note, and not cached, so
//     the next run measures again.
// A network or batch the cache has not seen extends the same measurements (--resume) and refits.
// An entry that cannot be used is moved aside (kept for inspection) and rebuilt, never deleted; a
// bad line among good records is skipped and said, and only what it held is measured again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::pipeline {

// A line of what a long run is doing (waiting for a lock, measuring, fitting), for the caller
// to show; the library itself never prints.
using Progress = std::function<void(const std::string&)>;

struct DefaultCalibrationRequest {
  std::vector<std::string> models;    // built-in names or network files
  std::vector<std::int64_t> batches;  // per process
  std::string backend = "torch";
  double budget_seconds = 60;         // layer micro-runs of each new (network, batches); probe excluded
  double budget_cap_seconds = 100;    // the budget grows up to this when the network's grid needs it
  // Anchors at the top candidates' settings (separating_anchors.hpp). 90 s: room for one
  // one-thread cliff setting's warm-up and timed step on a small machine, while the whole first
  // run stays within 3 minutes.
  double separating_anchor_budget_seconds = 90;
  // Close calls between measured settings trained again (run_close_call_anchor), last and with
  // what is left of the first run: 60 s gives a small network's close call several runs of each
  // side (docs/results.md, "The first run").
  double close_call_budget_seconds = 60;
  // The whole first run (probe included) ends within this many seconds where it can: the
  // separating anchors get what is left of it when they start, at most their own budget, and
  // the trainer's time limit stops their timed steps there; the anchors under the other
  // allocators get what is left after those, so that a one-thread cliff setting's anchor cannot
  // push a first run far past 3 minutes (docs/results.md). 0: no limit (budgets given explicitly).
  double first_run_seconds = 170;
  Progress progress = nullptr;        // may be empty
  // The dnntune binary the workers and trainers run; empty: this program (the command itself;
  // the Python module names the command it found).
  std::string executable = "";
};

struct DefaultCalibration {
  std::string calibration_path;  // the fitted calibration; empty when nothing could be measured
  std::string machine_path;      // this machine's probed profile (machine.json)
  std::string note;              // why the answer is the model's alone, when it is
};

// $DNNTUNE_CACHE_DIR, else $XDG_CACHE_HOME/dnntune, else $HOME/.cache/dnntune.
std::string cache_directory();

// This machine's cache entry for `backend` (the folder of its calibration.json, covered.json and
// measurements/), whether or not it exists yet.
Expected<std::string> default_calibration_entry(const std::string& backend);

// About how long calibrating `new_batches` (network, batch) pairs the cache has not covered
// takes: the layer micro-runs' budget cap, a real anchor at each, and the first run's anchors.
double estimated_calibration_seconds(const DefaultCalibrationRequest& request, std::size_t new_batches);

// A calibration of this machine that covers every model at every batch of the request,
// calibrating and fitting first when the cache has not covered them yet.
Expected<DefaultCalibration> default_calibration(const DefaultCalibrationRequest& request);

}  // namespace dnntune::pipeline
