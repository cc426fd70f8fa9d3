// pipeline/default_calibration.hpp — the embedded default behind `recommend`, `predict`, `scale` and
// `validate` when no --calibration is given: this machine's calibration, kept in the user's
// cache keyed by machine fingerprint, backend and its version, and dnntune's version.
//
// The first use calibrates the network at the batches asked for and fits it; later uses answer
// from the cache. The first run is planned around the decision (first_run_plan.hpp): once every
// distinct layer has a base measurement, its time goes to what can change the pick (the allocator
// variants, the settings whose bands overlap the top one) before micro-runs that only refine the
// layers' sum. Why: a first run that spent its time on micro-runs answered glibc's default
// allocator, unmeasured variants never being recommended, where keeping glibc's memory was much
// faster (docs/results.md, "The first run"). In order:
//   - the request is checked in full (network, batches) before the cache is touched;
//   - a lock on the entry makes concurrent runs take turns: one calibrates, the others wait and
//     then answer from what it made (nothing measured twice);
//   - the probe (peaks, bandwidth), once per machine; its time counts against the budget;
//   - the plan, said in one line with each stage's estimated seconds and the total;
//   - the layer micro-runs of priority 1 (every distinct layer at the base setting, and the
//     cliff extremes);
//   - the base anchor: the network trained for real at the base setting, glibc's default malloc;
//   - the anchors under the other allocator variants at the base setting, glibc-tuned first;
//   - the first fit, then the anchors that separate the tuner's top candidates
//     (separating_anchors.hpp), the closest call first;
//   - the other layer micro-runs with what is left, and the refit. The entry counts as covered
//     only after that, so an interrupted run resumes it;
//   - with what is still left: the base anchor repeated (C++, then Python), and the close calls.
// Each stage is replanned from what was measured before it (the base anchor's step sets the
// anchors' estimates), and every trainer gets the rest of its share as its time limit.
// A run that measured nothing still answers: from the model alone (the built-in reference
// calibration on this machine's probed peaks), said in a note, and not cached, so the next run
// measures again.
// A network or batch the cache has not seen extends the same measurements (--resume) and refits.
// An entry that cannot be used is moved aside (kept for inspection) and rebuilt, never deleted; a
// bad line among good records is skipped and said, and only what it held is measured again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "pipeline/first_run_plan.hpp"

namespace dnntune::pipeline {

// A line of what a long run is doing (waiting for a lock, measuring, fitting), for the caller
// to show; the library itself never prints.
using Progress = std::function<void(const std::string&)>;

struct DefaultCalibrationRequest {
  std::vector<std::string> models;    // built-in names or network files
  std::vector<std::int64_t> batches;  // per process
  std::string backend = "torch";
  // The whole first run, probe included (--calibration-budget): every stage's share comes from
  // the plan made within it, so all of them scale with it. 225 s: room, on the small machines a
  // first run is most often made on, for ResNet-152 at batch 32's base measurements, its base anchor
  // and two allocator variants, and with the build of the command a new user's first answer within
  // 6 minutes on 2 cores (docs/first-run.md).
  double first_run_seconds = default_first_run_seconds;
  Progress progress = nullptr;  // may be empty
  // The dnntune binary the workers and trainers run; empty: this program (the command itself;
  // the Python module names the command it found).
  std::string executable = "";
};

struct DefaultCalibration {
  std::string calibration_path;  // the fitted calibration; empty when nothing could be measured
  std::string machine_path;      // this machine's probed profile (machine.json)
  std::string note;              // why the answer is the model's alone, when it is
};

struct MeasurementInputs;  // pipeline/measurement_inputs.hpp

// Fits `backend`'s cost model to `inputs` measured on the machine of `machine_path` (its
// machine.json) and writes the calibration to `calibration_path`, owned by dnntune: the one fit
// and write of the cache's calibrations (a first run's, a SLURM partition's refit with its fabric).
Expected<void> fit_and_write_calibration(const MeasurementInputs& inputs, const std::string& machine_path,
                                         const std::string& backend, const std::string& calibration_path);

// $DNNTUNE_CACHE_DIR, else $XDG_CACHE_HOME/dnntune, else $HOME/.cache/dnntune.
std::string cache_directory();

// This machine's cache entry for `backend` (the folder of its calibration.json, covered.json and
// measurements/), whether or not it exists yet.
Expected<std::string> default_calibration_entry(const std::string& backend);

// About how long calibrating takes: the first run's budget, which its plan keeps to.
double estimated_calibration_seconds(const DefaultCalibrationRequest& request);

// What a first run of `request` would do, without measuring or probing: the plan made with this
// machine's cached probe when there is one (else default speeds) and with what the entry has
// recorded, the probe not counted. For dry runs and the plan's figures (docs/results.md).
Expected<FirstRunPlan> plan_default_calibration(const DefaultCalibrationRequest& request);

// A calibration of this machine that covers every model at every batch of the request,
// calibrating and fitting first when the cache has not covered them yet.
Expected<DefaultCalibration> default_calibration(const DefaultCalibrationRequest& request);

}  // namespace dnntune::pipeline
