// pipeline/first_run_plan.cpp — see first_run_plan.hpp.
#include "pipeline/first_run_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace dnntune::pipeline {
namespace {

std::string whole(double seconds) {
  return std::to_string(static_cast<long long>(std::lround(std::max(0.0, seconds))));
}

// `passes` scaled to the share of their estimate kept (the runner keeps them by priority).
std::size_t kept_passes(std::size_t passes, double seconds, double kept) {
  if (!(seconds > 0)) return passes;
  return static_cast<std::size_t>(std::lround(static_cast<double>(passes) * std::clamp(kept / seconds, 0.0, 1.0)));
}

std::string plural(std::size_t count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

}  // namespace

double FirstRunEstimates::deciding_start_seconds() const {
  return deciding_by_python ? python_start_seconds : trainer_start_seconds;
}

double FirstRunPlan::seconds(FirstRunStage stage) const {
  for (const PlannedStage& planned : stages)
    if (planned.stage == stage) return planned.seconds;
  return 0;
}

std::size_t FirstRunPlan::count(FirstRunStage stage) const {
  for (const PlannedStage& planned : stages)
    if (planned.stage == stage) return planned.count;
  return 0;
}

bool FirstRunPlan::on_what_is_left(FirstRunStage stage) const {
  for (const PlannedStage& planned : stages)
    if (planned.stage == stage) return planned.on_what_is_left;
  return false;
}

double first_step_warmup_steps(double step_seconds, double first_step_fault_seconds) {
  if (!(step_seconds > 0) || !(first_step_fault_seconds > 0)) return 1;
  return std::clamp(1 + first_step_fault_seconds / step_seconds, 1.0, 10.0);
}

double measured_warmup_steps(double wall_seconds, double step_seconds, int anchored, int timed_steps) {
  if (!(step_seconds > 0) || !(wall_seconds > 0)) return 1;
  const double warmup = (wall_seconds - trainer_start_seconds * std::max(1, anchored)) / step_seconds - timed_steps;
  return std::clamp(warmup, 1.0, 10.0);  // 10: a wall time far off (a stalled machine) does not empty the plan
}

double base_anchor_seconds(double step_seconds, int anchored, double warmup_steps, int timed_steps) {
  return trainer_start_seconds * std::max(1, anchored) + (warmup_steps + std::max(1, timed_steps)) * step_seconds;
}

double allocator_anchor_seconds(double step_seconds, int anchored, double warmup_steps, int timed_steps,
                                double start_seconds) {
  return start_seconds * std::max(1, anchored) + (warmup_steps + 1 + std::max(1, timed_steps)) * step_seconds;
}

double allocator_stage_seconds(const FirstRunEstimates& estimates, std::size_t variants) {
  if (variants == 0) return 0;
  const double warmup = std::max(1.0, estimates.warmup_steps), start = estimates.deciding_start_seconds();
  const double variant = allocator_anchor_seconds(estimates.kept_memory_step(), estimates.anchored, warmup,
                                                  estimates.allocator_timed_steps, start);
  // PyTorch's run of glibc's defaults: at the step the base anchor runs, faults and all.
  const double defaults = estimates.deciding_by_python
                              ? allocator_anchor_seconds(std::max(0.0, estimates.step_seconds), estimates.anchored,
                                                         warmup, estimates.allocator_timed_steps, start)
                              : 0;
  return defaults + variant * static_cast<double>(variants);
}

int allocator_timed_steps(double step_seconds) {
  constexpr double least_timed_seconds = 3;
  if (!(step_seconds > 0)) return 1;
  return static_cast<int>(std::clamp(std::ceil(least_timed_seconds / step_seconds), 1.0, 10.0));
}

double separating_anchor_seconds(double step_seconds, double warmup_steps, double start_seconds) {
  return 2 * start_seconds + (warmup_steps + 1) * 2 * step_seconds;
}

double pytorch_setups_seconds(double step_seconds, double warmup_steps) {
  return 3 * python_start_seconds +
         3 * (std::max(1.0, warmup_steps) + 1 + setup_check_timed_steps(step_seconds)) * step_seconds;
}

int setup_check_timed_steps(double step_seconds, int least) {
  return std::max(least, allocator_timed_steps(step_seconds));
}

FirstRunPlan plan_first_run(const FirstRunEstimates& estimates) {
  FirstRunPlan plan;
  plan.base_setting = estimates.base_setting;
  plan.deciding_by_python = estimates.deciding_by_python;
  const double step = std::max(0.0, estimates.step_seconds);
  const double warmup = std::max(1.0, estimates.warmup_steps);
  const double base = estimates.base_anchor_done ? 0 : base_anchor_seconds(step, estimates.anchored, warmup);
  const double short_base = estimates.base_anchor_done ? 0 : base_anchor_seconds(step, estimates.anchored, warmup, 1);
  const double variant = allocator_stage_seconds(estimates, 2) - allocator_stage_seconds(estimates, 1);
  // The first variant's anchor, with PyTorch's run of glibc's defaults where the variants are PyTorch's.
  const double reference = allocator_stage_seconds(estimates, 1);
  const double separating = separating_anchor_seconds(step, warmup, estimates.deciding_start_seconds());
  const double layers = std::max(0.0, estimates.layer_seconds);
  const double probe = std::max(0.0, estimates.probe_seconds);
  double left = std::max(0.0, estimates.budget_seconds) - probe;

  // The minimum that decides the pick, dropped from its end: the closest separating anchor while the
  // layer passes of priority 1 would keep less than half of their time; the second variant, then
  // the base anchor's second and third timed steps, glibc-tuned, then the base anchor itself, only
  // while they would keep less than a quarter (without glibc-tuned the allocator is never chosen;
  // without the layers an anchor has nothing to correct). A step of half a minute (a large network
  // on a slow core) makes a three-step base anchor cost what glibc-tuned's anchor does: one timed
  // step is what lets the allocator be measured at all there (docs/results.md, "The first run").
  // The layers' estimate is the least sure of the plan's: its stage then takes what the anchors
  // leave (default_calibration.cpp).
  bool base_kept = !estimates.base_anchor_done;
  bool reference_kept = !estimates.allocators.empty();
  bool second_kept = estimates.allocators.size() > 1;
  bool closest_kept = estimates.separating_anchors > 0;
  bool base_shortened = false;
  const auto base_seconds = [&] { return base_shortened ? short_base : base; };
  const auto minimum = [&] {
    return (base_kept ? base_seconds() : 0) + (reference_kept ? reference : 0) + (second_kept ? variant : 0) +
           (closest_kept ? separating : 0);
  };
  const auto layers_keep = [&](double share) { return left - minimum() >= std::max(0.0, share * layers); };
  if (closest_kept && !layers_keep(0.5)) closest_kept = false;
  if (second_kept && !layers_keep(0.25)) second_kept = false;
  if (base_kept && reference_kept && !layers_keep(0.25)) base_shortened = true;
  if (reference_kept && !layers_keep(0.25)) reference_kept = second_kept = base_shortened = false;
  // Without glibc-tuned the base anchor's three timed steps go first again, before the anchor itself:
  // one real step is what makes the answer `measured` (a loaded machine's slow step dropped it whole).
  if (base_kept && !layers_keep(0.25)) base_shortened = true;
  if (base_kept && !layers_keep(0.25)) base_kept = false;
  const bool anchored = base_kept || estimates.base_anchor_done;
  if (!anchored) reference_kept = second_kept = closest_kept = false;  // nothing to compare them with
  const double layers_kept = std::clamp(left - minimum(), 0.0, layers);
  left -= layers_kept + minimum();

  // Then PyTorch's pair of the answer's setups: it decides the pick where the C++ trainer's anchors
  // misjudge PyTorch, so it comes before the further variants and separating anchors.
  const double pytorch = pytorch_setups_seconds(step, warmup);
  const bool pytorch_kept = anchored && reference_kept && estimates.pytorch_setups > 0 && pytorch <= left;
  if (pytorch_kept) left -= pytorch;

  std::size_t variants = reference_kept ? (second_kept ? 2 : 1) : 0;
  for (std::size_t index = variants; reference_kept && index < estimates.allocators.size() && variant <= left;
       ++index, ++variants)
    left -= variant;
  plan.allocators.assign(estimates.allocators.begin(), estimates.allocators.begin() + static_cast<long>(variants));
  int separatings = closest_kept ? 1 : 0;
  while (closest_kept && separatings < estimates.separating_anchors && separating <= left) {
    left -= separating;
    ++separatings;
  }
  const double more = std::clamp(left, 0.0, std::max(0.0, estimates.more_layer_seconds));
  left -= more;

  const auto add = [&](FirstRunStage stage, std::size_t count, double seconds) {
    if (count > 0 || stage == FirstRunStage::probe) plan.stages.push_back({stage, count, seconds});
  };
  if (probe >= 0.5) add(FirstRunStage::probe, 1, probe);  // a machine probed before: nothing to say
  add(FirstRunStage::layer_passes, kept_passes(estimates.layer_passes, layers, layers_kept), layers_kept);
  if (base_kept)
    add(FirstRunStage::base_anchor, static_cast<std::size_t>(std::max(1, estimates.anchored)), base_seconds());
  plan.base_timed_steps = base_shortened ? 1 : base_anchor_timed_steps;
  add(FirstRunStage::allocators, variants, allocator_stage_seconds(estimates, variants));
  add(FirstRunStage::separating_anchors, static_cast<std::size_t>(separatings), separating * separatings);
  if (pytorch_kept) add(FirstRunStage::pytorch_setups, static_cast<std::size_t>(estimates.pytorch_setups), pytorch);
  add(FirstRunStage::more_layer_passes, kept_passes(estimates.more_layer_passes, estimates.more_layer_seconds, more),
      more);
  for (const PlannedStage& stage : plan.stages) plan.total_seconds += stage.seconds;
  plan.left_seconds = std::max(0.0, left);
  // The base anchor twice more (the C++ trainer, PyTorch), or once where PyTorch's run of glibc's
  // defaults came with the variants.
  const double repeats = estimates.deciding_by_python && variants > 0 ? 1 : 2;
  plan.after_seconds =
      std::min(plan.left_seconds, repeats * base_anchor_seconds(step, std::max(1, estimates.anchored), warmup) +
                                      close_call_share * std::max(0.0, estimates.budget_seconds));

  // What the budget leaves out, said so that a user knows what a larger budget buys.
  const std::size_t dropped_layers = estimates.layer_passes - plan.count(FirstRunStage::layer_passes);
  if (dropped_layers > 0)
    plan.left_out.push_back(plural(dropped_layers, "layer pass", "layer passes") + " of priority 1");
  if (!estimates.base_anchor_done && !base_kept) plan.left_out.push_back("the anchor at " + estimates.base_setting);
  for (std::size_t index = variants; index < estimates.allocators.size(); ++index)
    plan.left_out.push_back("the " + estimates.allocators[index] + " anchor");
  if (separatings < estimates.separating_anchors)
    plan.left_out.push_back(plural(static_cast<std::size_t>(estimates.separating_anchors - separatings),
                                   "separating anchor", "separating anchors"));
  if (estimates.pytorch_setups > 0 && !pytorch_kept) plan.left_out.push_back("PyTorch's runs of the answer's setups");
  const std::size_t dropped_more = estimates.more_layer_passes - plan.count(FirstRunStage::more_layer_passes);
  if (dropped_more > 0) plan.left_out.push_back(plural(dropped_more, "more layer pass", "more layer passes"));
  return plan;
}

bool python_keeps_the_variants(const FirstRunEstimates& estimates) {
  if (!estimates.deciding_by_python) return false;
  FirstRunEstimates by_cpp = estimates;
  by_cpp.deciding_by_python = false;
  return !plan_first_run(estimates).allocators.empty() || plan_first_run(by_cpp).allocators.empty();
}

FirstRunPlan plan_first_run(const FirstRunEstimates& estimates, const FirstRunPlan& announced) {
  FirstRunPlan plan = plan_first_run(estimates);
  const double left = std::max(0.0, estimates.budget_seconds);
  const double step = std::max(0.0, estimates.step_seconds);
  const double warmup = std::max(1.0, estimates.warmup_steps);
  const auto drop_left_out = [&](const std::string& said) {
    plan.left_out.erase(std::remove(plan.left_out.begin(), plan.left_out.end(), said), plan.left_out.end());
  };
  // Kept on what the stages before it leave: no later stage fits beside it, so one such stage at most.
  bool taken = false;
  const auto keep = [&](FirstRunStage stage, std::size_t count, double estimate) {
    double before = 0;
    for (const PlannedStage& planned : plan.stages)
      if (planned.stage < stage) before += planned.seconds;
    const double what_is_left = left - before;
    if (taken || plan.count(stage) > 0 || !announced_stage_stays(announced, stage, estimate, what_is_left))
      return false;
    taken = true;
    plan.stages.erase(std::remove_if(plan.stages.begin(), plan.stages.end(),
                                     [&](const PlannedStage& planned) { return planned.stage > stage; }),
                      plan.stages.end());
    plan.stages.push_back({stage, count, what_is_left, true});
    return true;
  };
  if (!estimates.base_anchor_done &&
      keep(FirstRunStage::base_anchor, static_cast<std::size_t>(std::max(1, estimates.anchored)),
           base_anchor_seconds(step, estimates.anchored, warmup, 1)))
    drop_left_out("the anchor at " + estimates.base_setting);
  const bool reference_planned =
      !announced.allocators.empty() && std::find(estimates.allocators.begin(), estimates.allocators.end(),
                                                 announced.allocators.front()) != estimates.allocators.end();
  if (reference_planned && keep(FirstRunStage::allocators, 1, allocator_stage_seconds(estimates, 1))) {
    plan.allocators = {announced.allocators.front()};
    drop_left_out("the " + announced.allocators.front() + " anchor");
  }
  if (estimates.pytorch_setups > 0 &&
      keep(FirstRunStage::pytorch_setups, static_cast<std::size_t>(estimates.pytorch_setups),
           pytorch_setups_seconds(step, warmup)))
    drop_left_out("PyTorch's runs of the answer's setups");
  plan.total_seconds = 0;
  for (const PlannedStage& stage : plan.stages) plan.total_seconds += stage.seconds;
  plan.left_seconds = std::max(0.0, left - plan.total_seconds);
  plan.after_seconds = std::min(plan.after_seconds, plan.left_seconds);
  return plan;
}

double announced_stage_share(FirstRunStage stage) {
  switch (stage) {
    case FirstRunStage::base_anchor:
      return announced_base_anchor_share;
    case FirstRunStage::allocators:
      return announced_reference_allocator_share;
    case FirstRunStage::pytorch_setups:
      return announced_pytorch_setups_share;
    default:
      return std::numeric_limits<double>::infinity();
  }
}

bool announced_stage_stays(const FirstRunPlan& announced, FirstRunStage stage, double estimate_seconds,
                           double left_seconds) {
  return announced.count(stage) > 0 && left_seconds > 0 &&
         left_seconds >= announced_stage_share(stage) * std::max(0.0, estimate_seconds);
}

double layer_passes_seconds(const FirstRunPlan& announced, double left_seconds) {
  const double anchors_share =
      announced.seconds(FirstRunStage::base_anchor) + announced.seconds(FirstRunStage::allocators) +
      announced.seconds(FirstRunStage::separating_anchors) + announced.seconds(FirstRunStage::pytorch_setups);
  return std::max(announced.seconds(FirstRunStage::layer_passes), left_seconds - anchors_share);
}

double base_anchor_time_limit(const FirstRunPlan& announced, const FirstRunEstimates& estimates, double left_seconds) {
  const double reference_share = announced.allocators.empty() ? 0 : allocator_stage_seconds(estimates, 1);
  return std::max(1.0, left_seconds - reference_share);
}

std::string describe_first_run(const FirstRunPlan& plan) {
  char minutes[32];
  std::snprintf(minutes, sizeof minutes, "%.1f", (plan.total_seconds + plan.after_seconds) / 60);
  std::string text = std::string("first run: about ") + minutes + " minutes";
  bool first = true;
  for (const PlannedStage& stage : plan.stages) {
    text += first ? ": " : ", ";
    first = false;
    std::string seconds = " (" + whole(stage.seconds) + " s)";
    switch (stage.stage) {
      case FirstRunStage::probe:
        text += "probe";
        break;
      case FirstRunStage::layer_passes:
        text += plural(stage.count, "layer pass", "layer passes");
        break;
      case FirstRunStage::base_anchor:
        text += stage.count == 1 ? "the anchor at " + plan.base_setting
                                 : plural(stage.count, "anchor", "anchors") + " at " + plan.base_setting;
        if (plan.base_timed_steps == 1) text += ", one timed step";
        break;
      case FirstRunStage::allocators: {
        std::string names;
        for (const std::string& name : plan.allocators) names += (names.empty() ? "" : ", ") + name;
        text += plural(stage.count, "allocator variant", "allocator variants");
        if (plan.deciding_by_python) {
          text += " by PyTorch from Python";
          names += " and glibc's defaults";
        }
        seconds = " (" + names + ": " + whole(stage.seconds) + " s)";
        break;
      }
      case FirstRunStage::separating_anchors:
        text += "up to " + plural(stage.count, "separating anchor", "separating anchors") +
                (plan.deciding_by_python ? " by PyTorch from Python" : "");
        break;
      case FirstRunStage::pytorch_setups:
        text += plural(stage.count, "PyTorch run", "PyTorch runs") + " of the answer's setups";
        break;
      case FirstRunStage::more_layer_passes:
        text += plural(stage.count, "more layer pass", "more layer passes");
        break;
      case FirstRunStage::left_out_anchors:  // never planned: they take what the stages leave
      case FirstRunStage::repeated_base_anchor:
      case FirstRunStage::close_calls:
        break;
    }
    text += seconds;
  }
  if (plan.after_seconds >= 0.5)
    text += ", then the close calls and the base anchor again with what is left (" + whole(plan.after_seconds) + " s)";
  if (!plan.left_out.empty()) {
    text += "; not within the budget:";
    for (std::size_t index = 0; index < plan.left_out.size(); ++index)
      text += (index == 0 ? " " : ", ") + plan.left_out[index];
  }
  return text;
}

}  // namespace dnntune::pipeline
