// pipeline/first_run_stages.cpp — see first_run_stages.hpp.
#include "pipeline/first_run_stages.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace dnntune::pipeline {
namespace {

std::string seconds_said(double seconds) { return std::to_string(std::lround(std::max(0.0, seconds))); }

// What the stages share: the estimates each replan starts from, the plan announced at the start,
// and what the stages before left for the later ones.
struct FirstRun {
  FirstRun(FirstRunWork& work, const FirstRunClock& clock, const Progress& progress, double budget_seconds)
      : work(work), clock(clock), progress(progress), budget_seconds(budget_seconds) {}
  FirstRunWork& work;
  const FirstRunClock& clock;
  const Progress& progress;
  double budget_seconds = 0;
  FirstRunEstimates estimates;
  FirstRunPlan announced;
  double first_step_faults = 0;
  int trained = 0;                             // measurements since the layer passes: a refit when any
  int separated = 0;                           // separating anchors trained after the first fit
  std::vector<std::string> variants_left_out;  // by the allocator stage
  std::optional<FirstRunFit> first_fit;        // the separating anchors rank by it
  std::optional<FirstRunFit> latest;           // the refit after the stages, and each after it
  std::optional<DefaultCalibration> answer;    // set: the run ends with it

  double left() const { return budget_seconds - clock(); }
  void say(const std::string& line) const {
    if (progress) progress(line);
  }
  // The stages left replanned within what is left, from what is recorded now.
  Expected<FirstRunPlan> replan() {
    estimates.budget_seconds = std::max(0.0, left());
    if (auto steps = work.estimate_steps(estimates); !steps) return steps.error();
    if (!estimates.base_anchor_done)
      estimates.warmup_steps = first_step_warmup_steps(estimates.step_seconds, first_step_faults);
    return plan_first_run(estimates, announced);
  }
  Expected<void> end_with_fit() {
    auto fitted = work.fit(true);
    if (!fitted) return fitted.error();
    answer = fitted->answer;
    return {};
  }
};

// The layer passes of priority 1, stopped only where they would eat into the anchors' shares; a
// run that measured no layer ends with the model's answer (nothing for an anchor to correct).
Expected<void> layer_passes(FirstRun& run) {
  auto measured = run.work.layer_passes(layer_passes_seconds(run.announced, run.left()));
  if (!measured) return measured.error();
  if (!*measured) return run.end_with_fit();
  run.estimates.probe_seconds = 0;
  run.estimates.layer_passes = 0;
  run.estimates.layer_seconds = 0;
  run.first_step_faults = run.work.first_step_fault_seconds();
  return {};
}

// The base anchor under glibc's defaults: every later stage rests on it. Its wall time beside its
// steps says what a warm-up costs here, which the later anchors' estimates use.
Expected<void> base_anchor(FirstRun& run) {
  if (run.estimates.base_anchor_done) return {};
  auto plan = run.replan();
  if (!plan) return plan.error();
  FirstRunEstimates& estimates = run.estimates;
  if (plan->count(FirstRunStage::base_anchor) == 0) {
    const double estimate = base_anchor_seconds(estimates.step_seconds, estimates.anchored, estimates.warmup_steps, 1);
    run.say("anchor at " + estimates.base_setting + " not trained: about " + seconds_said(estimate) + " s, past the " +
            seconds_said(run.left()) + " s left of the first run");
    return run.end_with_fit();
  }
  const double started = run.clock();
  auto anchored = run.work.base_anchor(base_anchor_time_limit(run.announced, estimates, run.left()));
  if (!anchored) return anchored.error();
  const double wall = run.clock() - started;
  if (auto steps = run.work.estimate_steps(estimates); !steps) return steps.error();
  if (anchored->trained > 0)
    estimates.warmup_steps =
        measured_warmup_steps(wall, estimates.step_seconds, estimates.anchored, anchored->timed_steps);
  estimates.anchored = 0;
  estimates.base_anchor_done = true;
  return {};
}

// The allocator variants at the base setting, each timing as many steps as its step (what glibc
// keeping its memory runs, of one pair) affords; glibc-tuned kept on what is left while its share
// is (announced_reference_allocator_share).
Expected<void> allocators(FirstRun& run) {
  FirstRunEstimates& estimates = run.estimates;
  if (auto steps = run.work.estimate_steps(estimates); !steps) return steps.error();
  estimates.allocator_timed_steps = allocator_timed_steps(estimates.kept_memory_step() / std::max(1, run.work.pairs()));
  auto plan = run.replan();
  if (!plan) return plan.error();
  for (const std::string& variant : estimates.allocators)
    if (std::find(plan->allocators.begin(), plan->allocators.end(), variant) == plan->allocators.end())
      run.variants_left_out.push_back(variant);
  estimates.allocators.clear();
  if (plan->allocators.empty()) {
    run.say("allocator anchors not trained: not one fits the " + seconds_said(run.left()) +
            " s left of the first run; the allocator stays glibc's default, never an unmeasured variant");
    return {};
  }
  if (plan->on_what_is_left(FirstRunStage::allocators))
    run.say("the " + plan->allocators.front() + " anchor is trained with the " + seconds_said(run.left()) +
            " s left: without it the allocator cannot be chosen");
  auto trained = run.work.allocator_anchors(plan->allocators, estimates.allocator_timed_steps,
                                            plan->seconds(FirstRunStage::allocators));
  if (!trained) return trained.error();
  run.trained += *trained;
  return {};
}

// The first fit, then the settings whose bands overlap the top one's, the closest call first: kept
// by the plan, it may take what is left of the whole first run.
Expected<void> separating_anchors(FirstRun& run) {
  auto fitted = run.work.fit(false);
  if (!fitted) return fitted.error();
  if (fitted->answer.calibration_path.empty()) {  // nothing measured: nothing cached either
    run.answer = fitted->answer;
    return {};
  }
  run.first_fit = *fitted;
  auto plan = run.replan();
  if (!plan) return plan.error();
  AnchorShare share{plan->seconds(FirstRunStage::separating_anchors), 0, run.estimates.warmup_steps};
  if (plan->count(FirstRunStage::separating_anchors) > 0) share.first_seconds = std::max(0.0, run.left());
  auto trained = run.work.separating_anchors(*run.first_fit, share);
  if (!trained) return trained.error();
  run.trained += *trained;
  run.separated = *trained;
  run.estimates.separating_anchors = 0;
  return {};
}

// The answer's setups timed by PyTorch, before the extra layer passes: they can change the pick.
// Announced, the pair runs on what is left (announced_pytorch_setups_share), one run at a time,
// each refit-free: they rank by the fit the separating anchors left.
Expected<void> pytorch_setups(FirstRun& run) {
  auto plan = run.replan();
  if (!plan) return plan.error();
  run.estimates.pytorch_setups = 0;
  if (plan->count(FirstRunStage::pytorch_setups) == 0) return {};
  std::optional<FirstRunFit> current = run.first_fit;
  if (run.separated > 0) {  // the first fit does not hold them
    auto fitted = run.work.fit(false);
    if (!fitted) return fitted.error();
    current = *fitted;
  }
  const double share = plan->seconds(FirstRunStage::pytorch_setups), started = run.clock();
  for (;;) {
    const AnchorShare left{std::min(share - (run.clock() - started), run.left()), 0, run.estimates.warmup_steps};
    if (!(left.seconds > 0)) return {};
    auto timed = run.work.setup_check(*current, left);
    if (!timed) return timed.error();
    if (*timed == 0) return {};
    run.trained += *timed;
  }
}

// The anchors the stages above left out, where what is left now fits them: the first variant left
// out (one: a variant's own steps can be several times glibc's), then the separating anchors (a
// rival layout under the answer's allocator, the one-thread setting). A real step of a rival
// layout or a variant can change the pick; an extra layer pass only refines the layers' sum
// (docs/results.md, "The first answer").
Expected<void> left_out_anchors(FirstRun& run) {
  const FirstRunEstimates& estimates = run.estimates;
  if (!run.variants_left_out.empty() &&
      run.left() >= allocator_anchor_seconds(estimates.kept_memory_step(), 1, estimates.warmup_steps,
                                             estimates.allocator_timed_steps, estimates.deciding_start_seconds())) {
    auto late = run.work.allocator_anchors({run.variants_left_out.front()}, estimates.allocator_timed_steps,
                                           std::max(0.0, run.left()));
    if (!late) return late.error();
    run.trained += *late;
  }
  if (!(run.left() > 0)) return {};
  auto late = run.work.separating_anchors(*run.first_fit, {std::max(0.0, run.left()), 0, estimates.warmup_steps});
  if (!late) return late.error();
  run.trained += *late;
  return {};
}

// The other layer passes with what is left, then the refit: the entry is complete from here.
Expected<void> more_layer_passes(FirstRun& run) {
  auto plan = run.replan();
  if (!plan) return plan.error();
  if (plan->count(FirstRunStage::more_layer_passes) > 0) {
    auto measured = run.work.more_layer_passes(std::max(0.0, run.left()));
    if (!measured) return measured.error();
    run.trained += *measured;
  } else if (run.estimates.more_layer_passes > 0) {
    run.say(std::to_string(run.estimates.more_layer_passes) +
            " more layer passes not measured: no time left of the first run "
            "(a larger --calibration-budget measures them; a later run resumes them)");
  }
  if (run.trained == 0) {
    run.latest = run.first_fit;
    return run.work.keep_coverage();
  }
  run.say("refitting with " + std::to_string(run.trained) + " more measurement" + (run.trained == 1 ? "" : "s"));
  auto refit = run.work.fit(true);
  if (!refit) return refit.error();
  run.latest = *refit;
  return {};
}

// With what is still left, the base anchor again (C++, Python), refitted after. The entry is
// complete already: an interrupted run loses nothing but this refinement. Last: a third run of a
// setting the close calls settled refines the model's base, not the pick.
Expected<void> repeated_base_anchor(FirstRun& run) {
  auto repeated = run.work.repeated_base_anchors(std::max(0.0, run.left()));
  if (!repeated) return repeated.error();
  if (*repeated == 0) return {};
  run.say("refitting with " + std::to_string(*repeated) + " more anchor" + (*repeated == 1 ? "" : "s"));
  auto refit = run.work.fit(true);
  if (!refit) return refit.error();
  run.latest = *refit;
  return {};
}

// The close calls, before the extra layer passes: a deciding anchor whose runs move more than the
// call it decides is run again before work that only refines the layers' sum, within the close
// calls' share (close_call_share of the whole run, at most what is left), each run refitted after:
// first the answer's setups, timed by PyTorch as the job runs them (layout and allocator together,
// and again while their runs move more than they differ: run_setup_check), then those the anchors'
// runs leave open (run_close_call_anchor). Not the last fit: the extra layer passes' refit marks
// the entry done.
Expected<void> close_calls(FirstRun& run) {
  const double started = run.clock();
  auto current = run.work.fit(false);  // it holds what the stages since the first fit trained
  if (!current) return current.error();
  for (const bool by_pytorch : {true, false}) {
    for (;;) {
      const double spent = run.clock() - started;
      const AnchorShare share{std::clamp(close_call_share * run.budget_seconds - spent, 0.0, std::max(0.0, run.left())),
                              0, run.estimates.warmup_steps};
      if (!(share.seconds > 0)) break;
      auto settled = by_pytorch ? run.work.setup_check(*current, share) : run.work.close_call(*current, share);
      if (!settled) return settled.error();
      if (*settled == 0) break;
      run.trained += *settled;
      current = run.work.fit(false);
      if (!current) return current.error();
    }
  }
  return {};
}

Expected<void> run_stage(FirstRunStage stage, FirstRun& run) {
  switch (stage) {
    case FirstRunStage::probe:
      return {};  // before the plan: its seconds are the clock's so far
    case FirstRunStage::layer_passes:
      return layer_passes(run);
    case FirstRunStage::base_anchor:
      return base_anchor(run);
    case FirstRunStage::allocators:
      return allocators(run);
    case FirstRunStage::separating_anchors:
      return separating_anchors(run);
    case FirstRunStage::pytorch_setups:
      return pytorch_setups(run);
    case FirstRunStage::left_out_anchors:
      return left_out_anchors(run);
    case FirstRunStage::more_layer_passes:
      return more_layer_passes(run);
    case FirstRunStage::repeated_base_anchor:
      return repeated_base_anchor(run);
    case FirstRunStage::close_calls:
      return close_calls(run);
  }
  return {};
}

}  // namespace

Expected<DefaultCalibration> run_first_run(FirstRunWork& work, double budget_seconds, const FirstRunClock& clock,
                                           const Progress& progress) {
  FirstRun run(work, clock, progress, budget_seconds);
  auto estimates = work.estimates(budget_seconds, clock());
  if (!estimates) return estimates.error();
  run.estimates = *estimates;
  run.announced = plan_first_run(run.estimates);
  run.say(describe_first_run(run.announced));
  for (const FirstRunStage stage : first_run_order) {
    if (auto ran = run_stage(stage, run); !ran) return ran.error();
    if (run.answer) return *run.answer;
  }
  return run.latest->answer;
}

}  // namespace dnntune::pipeline
