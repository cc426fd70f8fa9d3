// pipeline/first_run_plan.hpp — how a first run shares its time (--calibration-budget, the whole
// run, probe included) among its stages, decided up front and said before anything is measured.
// Pure: nothing is touched, so the plan is tested alone and replanned as the run goes, with what
// has been measured in place of estimates.
//
// The order is the decision's: once every distinct layer has a base measurement, the time goes to
// what can change the pick before passes that only refine the layers' sum.
//   1. the probe (its seconds count against the budget);
//   2. the layer passes of priority 1 (calibrate/plan.hpp: every distinct layer at the base
//      setting, and the cliff extremes);
//   3. the base anchor under glibc's default allocator (a warm-up and three timed steps, one where
//      three would leave glibc-tuned out);
//   4. the anchors under the other allocator variants at the base setting, glibc-tuned first (the
//      reference the others are fitted against), then tcmalloc and jemalloc, two untimed steps and
//      one timed each (more for a short step: allocator_timed_steps): a variant not anchored is
//      never recommended, so without them the allocator is never chosen. Where PyTorch from Python
//      trains the anchors that decide (FirstRunEstimates::deciding_by_python), it trains these, and
//      first a run of glibc's defaults they are compared with; the C++ trainer's base anchor stays
//      (its per-module times correct the layers' sum);
//   5. the anchors at the settings whose bands overlap the top one's (separating_anchors.hpp);
//   6. the answer's setups timed by PyTorch from Python (run_setup_check), at least a pair: what
//      the user's job runs, which the C++ trainer's anchors can misjudge;
//   7. the anchors the stages above left out where what is left now fits them (the first variant
//      left out, the separating anchors left out): they can change the pick;
//   8. the close calls: a deciding anchor whose runs move more than the call it decides is run
//      again (close_call_share of the budget at most) before the cheaper work that follows;
//   9. the other layer passes (priorities 2-4), with what is left, then the refit;
// and after the plan's stages, with whatever they leave: the base anchor repeated (C++, Python).
// When the budget is tight the extra layer passes go first, then the further separating anchors,
// then the allocator variants after the second, then PyTorch's pair; the closest separating anchor
// stays while the layer passes of priority 1 keep at least half of their time, the second variant
// (tcmalloc where installed), the base anchor's three timed steps (else one), glibc-tuned and the
// base anchor while they keep a quarter (a model
// without its layers has nothing for an anchor to correct; the keeping allocators differ by up to a
// quarter of a step, more than the rest of the layer passes moves a pick: docs/results.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace dnntune::pipeline {

// --calibration-budget's default: DefaultCalibrationRequest::first_run_seconds says why.
inline constexpr double default_first_run_seconds = 225;
// The base anchor's timed steps when the budget allows: glibc's default malloc is still settling on
// its second step (pipeline/default_calibration.cpp), and a median of three drops that step.
inline constexpr int base_anchor_timed_steps = 3;
// A trainer's launch and set-up per process, besides its steps: the C++ trainer's, and PyTorch
// from Python's (importing torch and torchvision and building the model first).
constexpr double trainer_start_seconds = 5;
constexpr double python_start_seconds = 10;

struct FirstRunEstimates {
  double budget_seconds = default_first_run_seconds;  // the whole first run, probe included
  double probe_seconds = 0;                           // what the probe took (or will take)
  std::size_t layer_passes = 0;                       // priority 1, and their seconds
  double layer_seconds = 0;
  std::size_t more_layer_passes = 0;  // priorities 2-4, and their seconds
  double more_layer_seconds = 0;
  std::string base_setting = "1x1";  // "1x2": processes x threads, for the announcement
  int anchored = 1;                  // (network, batch) pairs anchored: each anchor stage trains each
  // One training step at the base setting, summed over those pairs: first the layer passes'
  // estimates summed over the networks, then the base anchor's measured step.
  double step_seconds = 0;
  // The same step without the page faults of glibc's defaults, what an allocator variant that keeps
  // its memory (glibc-tuned) runs: the layer passes' sum less what each micro-run faults in
  // (calibrate::estimate_run_fault_seconds), at most step_seconds. 0: step_seconds.
  double kept_memory_step_seconds = 0;
  // The step an allocator variant is priced at: kept_memory_step_seconds, at most step_seconds.
  double kept_memory_step() const {
    const double step = std::max(0.0, step_seconds);
    return kept_memory_step_seconds > 0 ? std::min(step, kept_memory_step_seconds) : step;
  }
  bool base_anchor_done = false;  // a replan after it: it costs nothing more
  // What a trainer's warm-up step costs, in steady steps: before any anchor ran, one step and the
  // first touch of the process's memory (first_step_warmup_steps); then what the base anchor's wall
  // time says (its first step creates every kernel and faults every activation in), so that the
  // later anchors' estimates hold.
  double warmup_steps = 1;
  int allocator_timed_steps = 1;        // each variant's (allocator_timed_steps(), from the base anchor)
  std::vector<std::string> allocators;  // the variants to anchor besides glibc's default, glibc-tuned first
  // The most the top candidates ask for: two settings, and with allocator variants the closer one
  // again under the allocator the first fit recommends.
  int separating_anchors = 2;
  // PyTorch runs of the answer's setups planned before the extra layer passes: 2 (the answer and
  // the other side of its close call), or 0 (no allocator variant planned: nothing holds them).
  int pytorch_setups = 0;
  // The anchors that decide (allocator variants, separating anchors, close calls) trained by
  // PyTorch from Python (this machine's python3 trains the networks): each run pays Python's start
  // (python_start_seconds), and the variants are compared with a run of glibc's defaults by it too.
  bool deciding_by_python = false;
  // A deciding anchor's start per process: Python's or the C++ trainer's.
  double deciding_start_seconds() const;
};

// The stages in the order they run (pipeline/first_run_stages.cpp runs first_run_order). The plan
// keeps and prices the first ones; left_out_anchors and the stages after more_layer_passes take
// what the others leave (FirstRunPlan::left_seconds, after_seconds) and are never in its stages.
enum class FirstRunStage {
  probe,
  layer_passes,
  base_anchor,
  allocators,
  separating_anchors,
  pytorch_setups,
  left_out_anchors,
  close_calls,
  more_layer_passes,
  repeated_base_anchor
};
inline constexpr FirstRunStage first_run_order[] = {FirstRunStage::probe,
                                                    FirstRunStage::layer_passes,
                                                    FirstRunStage::base_anchor,
                                                    FirstRunStage::allocators,
                                                    FirstRunStage::separating_anchors,
                                                    FirstRunStage::pytorch_setups,
                                                    FirstRunStage::left_out_anchors,
                                                    FirstRunStage::close_calls,
                                                    FirstRunStage::more_layer_passes,
                                                    FirstRunStage::repeated_base_anchor};

struct PlannedStage {
  FirstRunStage stage = FirstRunStage::probe;
  std::size_t count = 0;  // layer passes, anchors or variants kept
  double seconds = 0;
  // Announced, dropped by a replan and kept all the same on what is left (announced_stage_stays).
  bool on_what_is_left = false;
};

struct FirstRunPlan {
  std::vector<PlannedStage> stages;     // the kept ones, in the order they run
  std::vector<std::string> allocators;  // the variants kept, in order
  std::vector<std::string> left_out;    // what the budget drops, for the announcement
  double total_seconds = 0;             // the stages' estimates, at most the budget (unless the probe alone passes it)
  double left_seconds = 0;              // after the stages: the repeated base anchors and close calls
  // What of `left_seconds` the run is expected to use after its stages: the base anchor twice more
  // (the C++ trainer, then Python) and the close calls' share; in the announced total, so that a
  // small network's first run, whose stages leave much of the budget, keeps to what it said.
  double after_seconds = 0;
  std::string base_setting;
  int base_timed_steps = base_anchor_timed_steps;  // or 1, where three would leave glibc-tuned out
  bool deciding_by_python = false;                 // FirstRunEstimates::deciding_by_python, for the announcement
  // The stage's seconds (0 when not kept) and count.
  double seconds(FirstRunStage stage) const;
  std::size_t count(FirstRunStage stage) const;
  bool on_what_is_left(FirstRunStage stage) const;
};

// The close calls, after the stages, take at most this share of the whole first run: on a small
// network they would otherwise take all the stages leave, for a refinement of a few percent.
constexpr double close_call_share = 0.25;
// The warm-up cost in steady steps before an anchor measured it: a steady step of `step_seconds`
// and the first touch of every page the process holds at its peak (`first_step_fault_seconds`,
// calibrate::estimate_first_step_fault_seconds), at most 10 steps.
double first_step_warmup_steps(double step_seconds, double first_step_fault_seconds);
// The warm-up cost in steady steps that the base anchor's wall time shows (`wall_seconds` for
// `anchored` anchors of `step_seconds` together, `timed_steps` timed steps each), at least one.
double measured_warmup_steps(double wall_seconds, double step_seconds, int anchored, int timed_steps);
// What one anchor of each stage is estimated to take from the base setting's step: the base anchor
// a warm-up and `timed_steps` timed steps (its trainer's time limit stops them where the plan's
// share ends); an allocator variant two untimed steps and `timed_steps`; a
// separating anchor a warm-up and one timed step at a setting with twice the base's processes (on
// the small nodes a default first run is for, the rival of the base layout is the one with more
// processes at the same per-process batch: twice the images per step), its trainer's time limit
// stopping the timed steps where its share ends.
// `start_seconds`: the trainer's start per process (trainer_start_seconds, or python_start_seconds
// for an anchor by PyTorch from Python).
double base_anchor_seconds(double step_seconds, int anchored, double warmup_steps = 1,
                           int timed_steps = base_anchor_timed_steps);
double allocator_anchor_seconds(double step_seconds, int anchored, double warmup_steps = 1, int timed_steps = 1,
                                double start_seconds = trainer_start_seconds);
// An allocator variant's timed steps: one, or as many as time about 3 s where the base anchor's step
// (`step_seconds`, of one network at one batch) is shorter, at most 10. A variant decides the pick
// by a few percent, and one step of a fraction of a second is one burst of a neighbour's load away
// from either side; more such steps cost seconds.
int allocator_timed_steps(double step_seconds);
double separating_anchor_seconds(double step_seconds, double warmup_steps = 1,
                                 double start_seconds = trainer_start_seconds);
// The allocator stage's seconds for `variants` variants: each an allocator anchor, and by PyTorch
// from Python one more, its run of glibc's defaults that the variants are compared with.
double allocator_stage_seconds(const FirstRunEstimates& estimates, std::size_t variants);
// The first pair of PyTorch runs of the answer's setups: the base layout and one with twice its
// processes (twice the images per step), each Python's start (importing torch and torchvision,
// 10 s a process), a warm-up, one more untimed step and three timed (about 3 s of a short step:
// allocator_timed_steps).
double pytorch_setups_seconds(double step_seconds, double warmup_steps = 1);
// The timed steps of one PyTorch run of the answer's setups: `least`, more for a short step (about
// 3 s of steps, allocator_timed_steps): three steps of 0.35 s moved a run by more than the layouts of
// a close call differ.
int setup_check_timed_steps(double step_seconds, int least = 3);

// The plan announced at the start of a first run.
FirstRunPlan plan_first_run(const FirstRunEstimates& estimates);
// Whether PyTorch from Python trains the anchors that decide, where it can (`estimates` planned
// so): not where its plan keeps no allocator variant and the C++ trainer's keeps one. Why: a long
// step (resnet152 b32 on 2 cores, about 35 s) leaves no room in the budget for Python's start and
// its pair of glibc's defaults and glibc-tuned, and one C++ anchor of glibc-tuned is a measured
// gain where none would be.
bool python_keeps_the_variants(const FirstRunEstimates& estimates);
// A replan within what is left (`estimates.budget_seconds`), the stages before it done: an
// announced stage that this replan drops but that stays (announced_stage_stays) is kept on what is
// left (PlannedStage::on_what_is_left): the base anchor while it is still to train, glibc-tuned
// (the announced plan's first variant) while `estimates.allocators` lists it, PyTorch's pair while
// `estimates.pytorch_setups` plans it.
FirstRunPlan plan_first_run(const FirstRunEstimates& estimates, const FirstRunPlan& announced);

// What share of its estimate must be left for an announced stage that a replan dropped to run on
// what is left; the stages not named here keep to the replan.
// The base anchor: every later stage rests on it, and a step estimated from micro-runs, before
// any anchor, is the least certain estimate of all (a loaded machine's estimate dropped it with
// 113 s left: docs/results.md, "First-touch in the plan"); its trainer's time limit ends its timed
// steps at the first run's end.
inline constexpr double announced_base_anchor_share = 0.5;
// glibc-tuned: without it the allocator is never chosen (a loaded machine's slow layer passes and
// base anchor dropped it twice); its trainer's time limit ends its timed step at the run's end.
inline constexpr double announced_reference_allocator_share = 0.5;
// PyTorch's pair: its own check starts the first run of all only when a second fits too
// (run_setup_check), so whatever is left is offered to it.
inline constexpr double announced_pytorch_setups_share = 0;
// The share of `stage` above; infinity for a stage that keeps to the replan.
double announced_stage_share(FirstRunStage stage);

// Whether a stage the replan dropped still runs: announced at the start, it stays while its share
// (announced_stage_share) of its estimate (`estimate_seconds`, from what was measured since) is
// left, and something is.
bool announced_stage_stays(const FirstRunPlan& announced, FirstRunStage stage, double estimate_seconds,
                           double left_seconds);

// The seconds the layer passes of priority 1 get, `left_seconds` being left of the first run:
// their announced share, or more where the anchors' announced shares leave it (small layers'
// estimates leave out the workers' dispatch, and what they do not use goes to the later stages).
double layer_passes_seconds(const FirstRunPlan& announced, double left_seconds);
// The base anchor's time limit, `left_seconds` being left: its timed steps stop where glibc-tuned's
// announced share begins (one timed step at least), else at the first run's end: a step or two
// fewer here is what lets the allocator be measured at all when the layer passes or its own
// warm-up ran long (docs/results.md: 75fe943).
double base_anchor_time_limit(const FirstRunPlan& announced, const FirstRunEstimates& estimates, double left_seconds);

// "first run: about 3.9 minutes: probe (8 s), 138 layer passes (60 s), the anchor at 1x2 (52 s),
// 3 allocator variants (75 s), up to 2 separating anchors (50 s), 40 more layer passes (40 s)",
// then what the budget leaves out, if anything.
std::string describe_first_run(const FirstRunPlan& plan);

}  // namespace dnntune::pipeline
