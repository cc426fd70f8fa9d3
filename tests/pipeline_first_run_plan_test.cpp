// tests/pipeline_first_run_plan_test.cpp — the first run's plan (pipeline/first_run_plan.hpp):
// what is kept within a budget, in which order, and what the announcement says, and what a replan
// keeps of the announced plan. Pure: no hardware, no timing. The stages that carry the plan out:
// tests/pipeline_first_run_stages_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/default_calibration.hpp"
#include "pipeline/first_run_plan.hpp"

using namespace dnntune::pipeline;

namespace {

// A large network at a large batch on a small machine: the priority-1 micro-runs about a minute,
// the rest more than the budget holds, a step of 12 s at the base setting.
FirstRunEstimates large_network() {
  FirstRunEstimates estimates;
  estimates.budget_seconds = 240;
  estimates.probe_seconds = 10;
  estimates.layer_passes = 138;
  estimates.layer_seconds = 60;
  estimates.more_layer_passes = 107;
  estimates.more_layer_seconds = 100;
  estimates.base_setting = "1x2";
  estimates.step_seconds = 12;
  estimates.allocators = {"glibc-tuned", "tcmalloc", "jemalloc"};
  estimates.separating_anchors = 2;
  return estimates;
}

bool kept(const FirstRunPlan& plan, FirstRunStage stage) { return plan.count(stage) > 0; }

}  // namespace

TEST_CASE("a first run's plan keeps the allocator and the closest call before extra micro-runs") {
  const FirstRunPlan plan = plan_first_run(large_network());
  INFO(describe_first_run(plan));
  CHECK(plan.total_seconds <= 240);
  // The layer passes of priority 1 keep half of their time beside the closest call and the second
  // variant (37 s of their 60 here).
  CHECK(plan.count(FirstRunStage::layer_passes) >= 138 / 2);
  CHECK(kept(plan, FirstRunStage::base_anchor));
  REQUIRE_FALSE(plan.allocators.empty());
  CHECK(plan.allocators.front() == "glibc-tuned");
  CHECK(plan.count(FirstRunStage::separating_anchors) >= 1);
  // The extra micro-runs went first: far fewer than asked for are left.
  CHECK(plan.count(FirstRunStage::more_layer_passes) < 107 / 2);
  // The stages in the decision's order.
  std::vector<FirstRunStage> order;
  for (const PlannedStage& stage : plan.stages) order.push_back(stage.stage);
  CHECK(std::is_sorted(order.begin(), order.end()));
}

TEST_CASE("a tight first-run budget drops the extra micro-runs, then the closest call, before the second variant") {
  FirstRunEstimates estimates = large_network();
  for (const double budget : {200.0, 220.0, 240.0}) {
    estimates.budget_seconds = budget;
    const FirstRunPlan plan = plan_first_run(estimates);
    INFO(budget << ": " << describe_first_run(plan));
    CHECK(plan.total_seconds <= budget);
    // Extra micro-runs only get what no further anchor fits in.
    CHECK(plan.seconds(FirstRunStage::more_layer_passes) < allocator_anchor_seconds(estimates.step_seconds, 1));
    // glibc-tuned and the second variant while the layer passes keep a quarter of their time.
    REQUIRE(plan.allocators.size() == 2);
    CHECK(plan.allocators.front() == "glibc-tuned");
    CHECK(plan.allocators.back() == "tcmalloc");
    CHECK(plan.seconds(FirstRunStage::layer_passes) >= 0.25 * estimates.layer_seconds);
    // The closest separating anchor while they keep half (5 + 4 x 12 + 2 x (5 + 3 x 12) + 10 + 4 x 12
    // leaves 37 s of 230 for them: from a budget of about 233 s).
    CHECK(plan.count(FirstRunStage::separating_anchors) == (budget >= 240 ? 1 : 0));
    if (kept(plan, FirstRunStage::separating_anchors))
      CHECK(plan.seconds(FirstRunStage::layer_passes) >= 0.5 * estimates.layer_seconds);
    CHECK_FALSE(plan.left_out.empty());
  }
}

TEST_CASE("a step of half a minute shortens the base anchor to one timed step before glibc-tuned is dropped") {
  // resnet152 b32 on a 2-core AVX2 VM: a 33-s step, where a three-step base anchor (140 s) and
  // glibc-tuned's (107 s) do not fit beside the probe and a quarter of the layer passes in 225 s.
  FirstRunEstimates estimates = large_network();
  estimates.budget_seconds = 225;
  estimates.probe_seconds = 4;
  estimates.layer_seconds = 74;
  estimates.step_seconds = 33;
  estimates.warmup_steps = 1.1;
  const FirstRunPlan plan = plan_first_run(estimates);
  INFO(describe_first_run(plan));
  CHECK(plan.total_seconds <= 225 + 1e-9);
  REQUIRE(kept(plan, FirstRunStage::base_anchor));
  CHECK(plan.base_timed_steps == 1);
  CHECK(plan.seconds(FirstRunStage::base_anchor) == Approx(base_anchor_seconds(33, 1, 1.1, 1)));
  REQUIRE(plan.allocators.size() == 1);
  CHECK(plan.allocators.front() == "glibc-tuned");
  CHECK(plan.seconds(FirstRunStage::layer_passes) >= 0.25 * estimates.layer_seconds);
  CHECK(describe_first_run(plan).find("the anchor at 1x2, one timed step") != std::string::npos);

  // A 12-s step keeps all three timed steps and both variants.
  const FirstRunPlan fast = plan_first_run(large_network());
  CHECK(fast.base_timed_steps == base_anchor_timed_steps);
  CHECK(fast.allocators.size() >= 2);
  CHECK(describe_first_run(fast).find("one timed step") == std::string::npos);

  // Where even one timed step leaves glibc-tuned out, the base anchor keeps one timed step rather
  // than none: one real step is what makes the answer `measured`.
  estimates.budget_seconds = 150;
  const FirstRunPlan tight = plan_first_run(estimates);
  INFO(describe_first_run(tight));
  CHECK(tight.allocators.empty());
  REQUIRE(kept(tight, FirstRunStage::base_anchor));
  CHECK(tight.base_timed_steps == 1);
  // Where not even that step fits, it is dropped.
  estimates.budget_seconds = 60;
  CHECK_FALSE(kept(plan_first_run(estimates), FirstRunStage::base_anchor));
}

TEST_CASE("a first-run budget too small for the minimum drops the anchors from the end, never over the budget") {
  FirstRunEstimates estimates = large_network();
  for (double budget = 1; budget <= 2000; budget *= 1.3) {
    estimates.budget_seconds = budget;
    const FirstRunPlan plan = plan_first_run(estimates);
    INFO(budget << ": " << describe_first_run(plan));
    CHECK(plan.total_seconds <= std::max(budget, estimates.probe_seconds) + 1e-9);
    // Nothing is anchored without the base anchor, and no further separating anchor without the closest.
    if (!kept(plan, FirstRunStage::base_anchor)) {
      CHECK(plan.allocators.empty());
      CHECK_FALSE(kept(plan, FirstRunStage::separating_anchors));
    }
    // An allocator variant other than glibc-tuned only with glibc-tuned, the reference.
    if (!plan.allocators.empty()) CHECK(plan.allocators.front() == "glibc-tuned");
  }
  estimates.budget_seconds = 50;
  const FirstRunPlan tiny = plan_first_run(estimates);
  CHECK_FALSE(kept(tiny, FirstRunStage::base_anchor));
  CHECK(tiny.seconds(FirstRunStage::layer_passes) == Approx(40));
}

TEST_CASE("scaling the first run's budget scales its stages") {
  FirstRunEstimates estimates = large_network();
  estimates.more_layer_seconds = 10000;  // more than any budget: the budget decides
  estimates.more_layer_passes = 5000;
  estimates.budget_seconds = 240;
  const FirstRunPlan single = plan_first_run(estimates);
  estimates.budget_seconds = 480;
  const FirstRunPlan twice = plan_first_run(estimates);
  INFO(describe_first_run(single) << "\n" << describe_first_run(twice));
  CHECK(single.total_seconds == Approx(240));
  CHECK(twice.total_seconds == Approx(480));
  CHECK(twice.allocators.size() == 3);
  CHECK(twice.count(FirstRunStage::separating_anchors) == 2);
  CHECK(twice.count(FirstRunStage::more_layer_passes) > single.count(FirstRunStage::more_layer_passes));
}

TEST_CASE("a replanned first run counts the base anchor done and its measured step") {
  FirstRunEstimates estimates = large_network();
  estimates.probe_seconds = 0;
  estimates.layer_seconds = 0;
  estimates.layer_passes = 0;
  estimates.base_anchor_done = true;
  estimates.budget_seconds = 160;
  estimates.step_seconds = 20;  // measured: slower than the layers' sum said
  const FirstRunPlan plan = plan_first_run(estimates);
  INFO(describe_first_run(plan));
  CHECK_FALSE(kept(plan, FirstRunStage::base_anchor));
  // glibc-tuned and tcmalloc: 5 + 3 x 20 s each (two untimed steps, one timed); the closest
  // separating anchor (10 + 4 x 20 s) does not fit beside them.
  CHECK(plan.seconds(FirstRunStage::allocators) == Approx(130));
  CHECK(plan.seconds(FirstRunStage::separating_anchors) == Approx(0));
  CHECK(plan.total_seconds <= 160);
}

TEST_CASE(
    "glibc-tuned's anchor is estimated by the step without glibc's page faults, once the base anchor measured a slower "
    "one") {
  FirstRunEstimates estimates = large_network();
  estimates.probe_seconds = 0;
  estimates.layer_seconds = 0;
  estimates.layer_passes = 0;
  estimates.base_anchor_done = true;
  estimates.budget_seconds = 50;
  estimates.allocators = {"glibc-tuned"};
  estimates.separating_anchors = 0;
  estimates.step_seconds = 16;  // glibc's defaults fault its activations in at every step
  INFO(describe_first_run(plan_first_run(estimates)));
  CHECK_FALSE(kept(plan_first_run(estimates), FirstRunStage::allocators));  // 5 + 3 x 16 s
  estimates.kept_memory_step_seconds = 8;                                   // the layer passes without those faults
  const FirstRunPlan plan = plan_first_run(estimates);
  INFO(describe_first_run(plan));
  CHECK(plan.seconds(FirstRunStage::allocators) == Approx(29));  // 5 + 3 x 8 s
  // Never more than the step itself.
  estimates.kept_memory_step_seconds = 30;
  CHECK_FALSE(kept(plan_first_run(estimates), FirstRunStage::allocators));
}

TEST_CASE(
    "a warm-up the base anchor measured long makes the later anchors' estimates long, and drops what no longer fits") {
  // The base anchor's wall time: a 5 s start, a warm-up of 3.5 steps and three timed steps of 12 s.
  const double warmup = measured_warmup_steps(5 + 3.5 * 12 + 3 * 12, 12, 1, 3);
  CHECK(warmup == Approx(3.5));
  CHECK(measured_warmup_steps(20, 12, 1, 3) == Approx(1));    // never below one step
  CHECK(measured_warmup_steps(1e6, 12, 1, 3) == Approx(10));  // a stalled machine does not empty the plan
  CHECK(measured_warmup_steps(86, 0, 1, 3) == Approx(1));     // nothing to divide by: the prior
  FirstRunEstimates estimates = large_network();
  estimates.probe_seconds = 0;
  estimates.layer_seconds = 0;
  estimates.layer_passes = 0;
  estimates.base_anchor_done = true;
  estimates.budget_seconds = 100;
  estimates.warmup_steps = warmup;
  const FirstRunPlan plan = plan_first_run(estimates);
  INFO(describe_first_run(plan));
  // glibc-tuned: 5 + 5.5 x 12 s = 71 s kept; the closest separating anchor (10 + 4.5 x 24 s = 118 s)
  // no longer fits beside it, and the plan says so rather than overrunning.
  CHECK(plan.seconds(FirstRunStage::allocators) == Approx(71));
  REQUIRE(plan.allocators.size() == 1);
  CHECK(plan.allocators.front() == "glibc-tuned");
  CHECK(plan.total_seconds <= 100);
  CHECK_FALSE(kept(plan, FirstRunStage::separating_anchors));
  CHECK(separating_anchor_seconds(12, warmup) == Approx(118));
}

TEST_CASE(
    "before any anchor, a warm-up is a step and the first touch of the process's memory, the layers make room for it") {
  CHECK(first_step_warmup_steps(12, 0) == Approx(1));
  CHECK(first_step_warmup_steps(12, 24) == Approx(3));
  CHECK(first_step_warmup_steps(0, 24) == Approx(1));    // nothing to divide by: one step
  CHECK(first_step_warmup_steps(1, 1e6) == Approx(10));  // a probe far off does not empty the plan
  // A large network whose first step faults in 24 s on top of a 12 s step: the base anchor is
  // 5 + 6 x 12 s and glibc-tuned 5 + 5 x 12 s, and both stay, the priority-1 layer passes
  // giving up time for them rather than the first run overrunning what it announced.
  FirstRunEstimates estimates = large_network();
  estimates.layer_seconds = 110;
  estimates.warmup_steps = first_step_warmup_steps(estimates.step_seconds, 24);
  const FirstRunPlan plan = plan_first_run(estimates);
  INFO(describe_first_run(plan));
  CHECK(plan.seconds(FirstRunStage::base_anchor) == Approx(77));
  CHECK(plan.seconds(FirstRunStage::allocators) == Approx(65));
  CHECK(plan.seconds(FirstRunStage::layer_passes) == Approx(240 - 10 - 77 - 65));
  CHECK(plan.total_seconds <= 240);
  // The closest separating anchor (10 + 4 x 24 s) no longer fits beside them: said, not overrun.
  CHECK_FALSE(kept(plan, FirstRunStage::separating_anchors));
}

TEST_CASE("an allocator variant times about 3 s of a short step, one step of a long one") {
  CHECK(allocator_timed_steps(12) == 1);
  CHECK(allocator_timed_steps(3) == 1);
  CHECK(allocator_timed_steps(0.5) == 6);
  CHECK(allocator_timed_steps(0.01) == 10);  // at most 10
  CHECK(allocator_timed_steps(0) == 1);      // no step measured: one
  // A PyTorch run of the answer's setups: at least its three timed steps, as many for a short step.
  CHECK(setup_check_timed_steps(12) == 3);
  CHECK(setup_check_timed_steps(0.5) == 6);
  // Its estimate counts them: a start, the warm-up, one more untimed step and the timed ones.
  CHECK(allocator_anchor_seconds(0.5, 1, 2, 6) == Approx(5 + 9 * 0.5));
  FirstRunEstimates estimates = large_network();
  estimates.step_seconds = 0.5;
  const double one = plan_first_run(estimates).seconds(FirstRunStage::allocators);
  estimates.allocator_timed_steps = 6;
  CHECK(plan_first_run(estimates).seconds(FirstRunStage::allocators) > one);
}

TEST_CASE("an announced base anchor or glibc-tuned that the replan dropped stays while half its estimate is left") {
  FirstRunEstimates estimates = large_network();
  estimates.warmup_steps = 3;
  const FirstRunPlan announced = plan_first_run(estimates);
  REQUIRE(kept(announced, FirstRunStage::base_anchor));
  REQUIRE(kept(announced, FirstRunStage::allocators));
  CHECK(announced_stage_stays(announced, FirstRunStage::base_anchor, 96, 48));
  CHECK_FALSE(announced_stage_stays(announced, FirstRunStage::base_anchor, 96, 47));
  CHECK(announced_stage_stays(announced, FirstRunStage::allocators, 70, 41));
  // Not announced: the replan's word stands.
  CHECK_FALSE(announced_stage_stays(announced, FirstRunStage::separating_anchors, 10, 200));
  estimates.allocators.clear();
  CHECK_FALSE(announced_stage_stays(plan_first_run(estimates), FirstRunStage::allocators, 10, 200));
}

TEST_CASE("glibc-tuned stays beside the base anchor while the layer passes keep a quarter of their time") {
  // A large network whose layer passes are estimated at 129 s, its step at 13 s with a warm-up of
  // three steps: the base anchor (5 + 6 x 13 s) and glibc-tuned (5 + 5 x 13 s) leave the layers
  // 61 s, less than half their estimate but more than a quarter: both anchors stay, the closest
  // separating anchor does not.
  FirstRunEstimates estimates = large_network();
  estimates.probe_seconds = 26;
  estimates.layer_seconds = 129;
  estimates.step_seconds = 13;
  estimates.warmup_steps = 3;
  const FirstRunPlan plan = plan_first_run(estimates);
  INFO(describe_first_run(plan));
  CHECK(kept(plan, FirstRunStage::base_anchor));
  REQUIRE(plan.allocators.size() == 1);
  CHECK(plan.allocators.front() == "glibc-tuned");
  CHECK_FALSE(kept(plan, FirstRunStage::separating_anchors));
  CHECK(plan.seconds(FirstRunStage::layer_passes) == Approx(240 - 26 - 83 - 70));
  // With the layers' estimate four times larger, less than a quarter would be left: glibc-tuned goes.
  estimates.layer_seconds = 4 * 129;
  const FirstRunPlan long_layers = plan_first_run(estimates);
  INFO(describe_first_run(long_layers));
  CHECK(long_layers.allocators.empty());
}

TEST_CASE("a first run announces its stages, their seconds and the total") {
  FirstRunEstimates estimates = large_network();
  estimates.more_layer_seconds = 0;
  estimates.more_layer_passes = 0;
  estimates.allocators = {"glibc-tuned"};
  estimates.separating_anchors = 1;
  const FirstRunPlan plan = plan_first_run(estimates);
  CHECK(describe_first_run(plan) ==
        "first run: about 4.0 minutes: probe (10 s), 138 layer passes (60 s), the anchor at 1x2 (53 s), "
        "1 allocator variant (glibc-tuned: 41 s), up to 1 separating anchor (58 s), then the close calls and the "
        "base anchor again with what is left (18 s)");
  estimates.budget_seconds = 150;
  CHECK_THAT(describe_first_run(plan_first_run(estimates)),
             Catch::Contains("not within the budget:") && Catch::Contains("1 separating anchor"));
}

TEST_CASE("a first run times the answer's setups by PyTorch before the extra micro-runs, when they fit") {
  // A mid-sized network: a step of 2.5 s at the base setting.
  FirstRunEstimates estimates = large_network();
  estimates.step_seconds = 2.5;
  estimates.layer_seconds = 20;
  estimates.pytorch_setups = 2;
  const FirstRunPlan plan = plan_first_run(estimates);
  INFO(describe_first_run(plan));
  // 3 x 10 s of Python's starts and 3 x 5 steps of 2.5 s (the rival layout's steps twice the images).
  CHECK(pytorch_setups_seconds(2.5) == Approx(67.5));
  CHECK(plan.seconds(FirstRunStage::pytorch_setups) == Approx(67.5));
  CHECK(plan.count(FirstRunStage::pytorch_setups) == 2);
  CHECK(plan.total_seconds <= 240);
  CHECK_THAT(describe_first_run(plan), Catch::Contains("2 PyTorch runs of the answer's setups (68 s)"));
  // Without them the extra micro-runs would have had that time: they come after.
  estimates.pytorch_setups = 0;
  CHECK(plan_first_run(estimates).seconds(FirstRunStage::more_layer_passes) >
        plan.seconds(FirstRunStage::more_layer_passes));
  // A large network's pair does not fit beside its anchors: left out, and said.
  FirstRunEstimates large = large_network();
  large.pytorch_setups = 2;
  const FirstRunPlan dropped = plan_first_run(large);
  CHECK_FALSE(kept(dropped, FirstRunStage::pytorch_setups));
  CHECK_THAT(describe_first_run(dropped), Catch::Contains("PyTorch's runs of the answer's setups"));
  // Nothing to compare with: no allocator variant planned.
  estimates.pytorch_setups = 2;
  estimates.allocators.clear();
  CHECK_FALSE(kept(plan_first_run(estimates), FirstRunStage::pytorch_setups));
}

// Not run by ctest (hidden): the plan a first run of resnet152 b32 and resnet18 b8 would announce
// on this machine, with its cached probe ($DNNTUNE_CACHE_DIR) when there is one. For the figures
// in docs/results.md: `build/tests/pipeline_tests '[.figures]' -s`.
TEST_CASE("the first run's plan on this machine, without measuring", "[.figures]") {
  for (const auto& [network, batch] :
       std::vector<std::pair<std::string, std::int64_t>>{{"resnet152", 32}, {"resnet18", 8}}) {
    DefaultCalibrationRequest request;
    request.models = {network};
    request.batches = {batch};
    auto plan = plan_default_calibration(request);
    REQUIRE(plan);
    WARN(network << " b" << batch << ": " << describe_first_run(*plan));
  }
}

TEST_CASE(
    "a replan keeps an announced base anchor, glibc-tuned or PyTorch's pair on what is left, while its share is") {
  // resnet152 b32 on a loaded 2-core VM (docs/results.md, "First-touch in the plan"): the base
  // anchor, priced at 128 s by the measured passes, was dropped by the replan with 113 s left (here
  // 100 s, below even its one-step estimate).
  FirstRunEstimates estimates = large_network();
  estimates.pytorch_setups = 2;
  const FirstRunPlan announced = plan_first_run(estimates);
  REQUIRE(kept(announced, FirstRunStage::base_anchor));
  REQUIRE(announced.allocators.front() == "glibc-tuned");
  estimates.probe_seconds = estimates.layer_seconds = 0;
  estimates.layer_passes = 0;
  estimates.budget_seconds = 100;
  estimates.step_seconds = 20;
  estimates.warmup_steps = 4.3;  // 5 + 7.3 x 20 s with one timed step: 151 s
  INFO(describe_first_run(plan_first_run(estimates)));
  CHECK_FALSE(kept(plan_first_run(estimates), FirstRunStage::base_anchor));
  FirstRunPlan replan = plan_first_run(estimates, announced);
  CHECK(replan.count(FirstRunStage::base_anchor) == 1);
  CHECK(replan.on_what_is_left(FirstRunStage::base_anchor));
  CHECK(replan.seconds(FirstRunStage::base_anchor) == Approx(100));
  CHECK(replan.total_seconds <= 100 + 1e-9);
  CHECK(std::find(replan.left_out.begin(), replan.left_out.end(), "the anchor at 1x2") == replan.left_out.end());
  // Less than half of its estimate left: the replan's word stands.
  estimates.budget_seconds = 0.5 * base_anchor_seconds(20, 1, 4.3, 1) - 1;
  CHECK_FALSE(kept(plan_first_run(estimates, announced), FirstRunStage::base_anchor));

  // resnet152 b32 (00f48c9): the base anchor took 114 s against 87 s announced, a 19.1 s step; the
  // replan priced glibc-tuned at 5 + 3 x 19.1 s with 47 s left and dropped it.
  estimates.base_anchor_done = true;
  estimates.anchored = 0;
  estimates.warmup_steps = 1;
  estimates.step_seconds = 19.1;
  estimates.budget_seconds = 47;
  CHECK_FALSE(kept(plan_first_run(estimates), FirstRunStage::allocators));
  replan = plan_first_run(estimates, announced);
  REQUIRE(replan.allocators == std::vector<std::string>{"glibc-tuned"});
  CHECK(replan.on_what_is_left(FirstRunStage::allocators));
  CHECK(replan.seconds(FirstRunStage::allocators) == Approx(47));
  CHECK_FALSE(kept(replan, FirstRunStage::separating_anchors));  // nothing is left beside it
  estimates.budget_seconds = 30;                                 // less than half of its 62 s
  CHECK(plan_first_run(estimates, announced).allocators.empty());
  // Once its stage is done (the estimates list no variant), no later replan brings it back.
  estimates.budget_seconds = 47;
  estimates.allocators.clear();
  CHECK_FALSE(kept(plan_first_run(estimates, announced), FirstRunStage::allocators));

  // PyTorch's pair, announced: whatever is left is offered (its own check starts the first run of
  // all only where a second fits); not announced, the replan's word stands.
  estimates.budget_seconds = 12;
  replan = plan_first_run(estimates, announced);
  if (kept(announced, FirstRunStage::pytorch_setups)) {
    CHECK(replan.on_what_is_left(FirstRunStage::pytorch_setups));
    CHECK(replan.seconds(FirstRunStage::pytorch_setups) == Approx(12));
  }
  FirstRunEstimates small = large_network();
  small.step_seconds = 2.5;
  small.layer_seconds = 20;
  small.pytorch_setups = 2;
  const FirstRunPlan with_pair = plan_first_run(small);
  REQUIRE(kept(with_pair, FirstRunStage::pytorch_setups));
  small.probe_seconds = small.layer_seconds = 0;
  small.base_anchor_done = true;
  small.allocators.clear();
  small.separating_anchors = 0;
  small.budget_seconds = 12;
  CHECK_FALSE(kept(plan_first_run(small), FirstRunStage::pytorch_setups));
  CHECK(plan_first_run(small, with_pair).seconds(FirstRunStage::pytorch_setups) == Approx(12));
  CHECK_FALSE(kept(plan_first_run(small, plan_first_run(large_network())), FirstRunStage::pytorch_setups));
  // A stage kept on what is left gets what the stages before it leave: in 65 s the base anchor
  // (5 + 4 x 12 s) leaves glibc-tuned (5 + 3 x 12 s) 12 s, less than half its estimate.
  FirstRunEstimates before_anchor = large_network();
  before_anchor.probe_seconds = before_anchor.layer_seconds = 0;
  before_anchor.layer_passes = 0;
  before_anchor.budget_seconds = 65;
  const FirstRunPlan beside = plan_first_run(before_anchor, plan_first_run(large_network()));
  INFO(describe_first_run(beside));
  CHECK(beside.seconds(FirstRunStage::base_anchor) == Approx(53));
  CHECK(beside.allocators.empty());
  CHECK(beside.total_seconds <= 65);
  // Each stage's share, and none for the stages that keep to the replan.
  CHECK(announced_stage_share(FirstRunStage::base_anchor) == announced_base_anchor_share);
  CHECK(announced_stage_share(FirstRunStage::allocators) == announced_reference_allocator_share);
  CHECK(announced_stage_share(FirstRunStage::pytorch_setups) == announced_pytorch_setups_share);
  CHECK(std::isinf(announced_stage_share(FirstRunStage::separating_anchors)));
  CHECK(std::isinf(announced_stage_share(FirstRunStage::more_layer_passes)));
}

TEST_CASE("a first run whose deciding anchors PyTorch trains prices Python's start and its run of glibc's defaults") {
  FirstRunEstimates estimates = large_network();
  CHECK(estimates.deciding_start_seconds() == trainer_start_seconds);
  const FirstRunPlan by_cpp = plan_first_run(estimates);
  estimates.deciding_by_python = true;
  CHECK(estimates.deciding_start_seconds() == python_start_seconds);
  // glibc-tuned by Python (10 + 3 x 12 s) and the run of glibc's defaults it is compared with (the
  // same, at the step of glibc's defaults); each further variant 10 + 3 x 12 s.
  CHECK(allocator_stage_seconds(estimates, 1) == Approx(92));
  CHECK(allocator_stage_seconds(estimates, 2) == Approx(138));
  CHECK(allocator_stage_seconds(estimates, 0) == 0);
  CHECK(separating_anchor_seconds(12, 1, python_start_seconds) == Approx(68));
  const FirstRunPlan plan = plan_first_run(estimates);
  INFO(describe_first_run(by_cpp) << "\n" << describe_first_run(plan));
  CHECK(plan.total_seconds <= 240);
  // The same budget holds less: the closest separating anchor (68 s) no longer fits beside the
  // variants, where the C++ trainer's (58 s) did.
  REQUIRE(plan.allocators == std::vector<std::string>{"glibc-tuned", "tcmalloc"});
  CHECK(plan.seconds(FirstRunStage::allocators) == Approx(138));
  CHECK(kept(by_cpp, FirstRunStage::separating_anchors));
  CHECK_FALSE(kept(plan, FirstRunStage::separating_anchors));
  CHECK_THAT(describe_first_run(plan),
             Catch::Contains("2 allocator variants by PyTorch from Python (glibc-tuned, tcmalloc and glibc's defaults: "
                             "138 s)"));
  // A replan keeps the announced glibc-tuned, its run of glibc's defaults included, while half of both is left.
  FirstRunEstimates after_base = estimates;
  after_base.probe_seconds = after_base.layer_seconds = 0;
  after_base.layer_passes = 0;
  after_base.base_anchor_done = true;
  after_base.anchored = 0;
  after_base.budget_seconds = 47;
  CHECK(plan_first_run(after_base, plan).allocators == std::vector<std::string>{"glibc-tuned"});
  after_base.budget_seconds = 45;  // less than half of 92 s
  CHECK(plan_first_run(after_base, plan).allocators.empty());
  // The base anchor's timed steps stop where glibc-tuned's share, Python's run of the defaults included, begins.
  CHECK(base_anchor_time_limit(plan, estimates, 200) == Approx(200 - 92));
}

TEST_CASE("PyTorch trains the anchors that decide only where its plan keeps an allocator variant the C++ plan keeps") {
  FirstRunEstimates estimates = large_network();
  CHECK_FALSE(python_keeps_the_variants(estimates));  // the C++ trainer's plan: nothing to settle
  estimates.deciding_by_python = true;
  CHECK(python_keeps_the_variants(estimates));  // fewer variants (two of three), but some
  // resnet152 b32 on 2 cores: a 35 s step leaves Python's pair no room, the C++ trainer's
  // glibc-tuned one timed step.
  estimates.step_seconds = 35;
  INFO(describe_first_run(plan_first_run(estimates)));
  FirstRunEstimates by_cpp = estimates;
  by_cpp.deciding_by_python = false;
  REQUIRE_FALSE(plan_first_run(by_cpp).allocators.empty());
  CHECK(plan_first_run(estimates).allocators.empty());
  CHECK_FALSE(python_keeps_the_variants(estimates));
}
