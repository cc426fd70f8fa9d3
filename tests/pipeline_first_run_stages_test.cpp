// tests/pipeline_first_run_stages_test.cpp — the first run's stages (pipeline/first_run_stages.hpp)
// driven by recorded stage costs on a clock of the test's own: the order they run in, the share
// each keeps to, and what they drop and say when the budget is short (the plan itself:
// tests/pipeline_first_run_plan_test.cpp). Pure: no hardware, no timing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/first_run_plan.hpp"
#include "pipeline/first_run_stages.hpp"

using namespace dnntune::pipeline;
using dnntune::Expected;

namespace {

// What the stages of a real first run took (docs/results.md, from their progress lines): the work
// behind the stages replays them on the test's clock, each trainer stopped by its time limit or
// skipped where it does not fit, as the real ones are.
struct RecordedCosts {
  double probe = 4;
  double layer_passes = 83;   // all of priority 1; their share stops them sooner
  double step = 15.6;         // the base anchor's step under glibc's defaults
  double warmup_steps = 2.6;  // a trainer's warm-up, in steps (the first touch of its memory)
  std::map<std::string, double> variant_steps = {{"glibc-tuned", 10.6}, {"tcmalloc", 10.6}, {"jemalloc", 30}};
  double separating_anchor = 60;  // each: a start, a warm-up and its timed steps
  int separating_anchors = 2;
  double setup_run = 40;  // one PyTorch run of the answer's setups
  int setup_runs = 4;
  double more_layer_passes = 23;  // all of them
  int more_passes = 39;
  double repeated_anchor = 45;  // each of two (the C++ trainer, PyTorch)
  double close_call_run = 50;
  int close_call_runs = 4;
  double fit = 1;
  double slowdown = 1;  // every cost times this: a slower or busier machine than the plan's
};

// One piece of work: what, when it started, its share and what it took.
struct Done {
  std::string what;
  double started = 0, share = 0, took = 0;
};

class RecordedWork final : public FirstRunWork {
 public:
  RecordedWork(FirstRunEstimates planned, RecordedCosts costs)
      : planned_(std::move(planned)), costs_(std::move(costs)) {
    now = cost(costs_.probe);
  }
  double now = 0;
  std::vector<Done> done;
  std::vector<std::string> said;
  const FirstRunClock clock = [this] { return now; };
  const Progress progress = [this](const std::string& line) { said.push_back(line); };

  Expected<FirstRunEstimates> estimates(double budget_seconds, double probe_seconds) override {
    FirstRunEstimates estimates = planned_;
    estimates.budget_seconds = budget_seconds;
    estimates.probe_seconds = probe_seconds;
    return estimates;
  }
  Expected<void> estimate_steps(FirstRunEstimates& estimates) override {
    estimates.step_seconds = base_step_ > 0 ? base_step_ : planned_.step_seconds;
    estimates.kept_memory_step_seconds = kept_step_ > 0 ? kept_step_ : planned_.kept_memory_step_seconds;
    return {};
  }
  double first_step_fault_seconds() override { return (planned_.warmup_steps - 1) * planned_.step_seconds; }
  int pairs() override { return 1; }
  Expected<bool> layer_passes(double seconds) override {
    work("layer passes", std::min(cost(costs_.layer_passes), seconds), seconds);
    return true;
  }
  Expected<BaseAnchorRun> base_anchor(double time_limit_seconds) override {
    const double step = cost(costs_.step), warmup = cost(trainer_start_seconds) + costs_.warmup_steps * step;
    const int timed = std::clamp(static_cast<int>(std::floor((time_limit_seconds - warmup) / step)), 1, 3);
    work("base anchor", warmup + timed * step, time_limit_seconds);
    base_step_ = step;
    return BaseAnchorRun{1, timed};
  }
  Expected<int> allocator_anchors(const std::vector<std::string>& variants, int timed_steps, double seconds) override {
    int trained = 0;
    const double start = cost(planned_.deciding_by_python ? python_start_seconds : trainer_start_seconds);
    // By PyTorch from Python, its run of glibc's defaults first: the run the variants are compared with.
    if (planned_.deciding_by_python && !defaults_by_python_) {
      work("glibc's defaults (PyTorch)", start + (costs_.warmup_steps + 1 + timed_steps) * cost(costs_.step), seconds);
      defaults_by_python_ = true;
    }
    for (const std::string& variant : variants) {
      const double step = cost(costs_.variant_steps.at(variant));
      const double took = start + (costs_.warmup_steps + 1 + timed_steps) * step;
      const double spent = trained > 0 ? now - done.back().started : 0;
      if (trained > 0 && took > seconds - spent) {
        progress("allocator anchors under " + variant + " skipped");
        continue;
      }
      work(variant, took, seconds);
      if (variant == "glibc-tuned") kept_step_ = step;
      ++trained;
    }
    return trained;
  }
  Expected<FirstRunFit> fit(bool last) override {
    work(last ? "refit" : "fit", cost(costs_.fit), 0);
    return FirstRunFit{DefaultCalibration{"calibration.json", "machine.json", ""}, nullptr};
  }
  Expected<void> keep_coverage() override {
    work("coverage", 0, 0);
    return {};
  }
  Expected<int> separating_anchors(const FirstRunFit&, const AnchorShare& share) override {
    int trained = 0;
    double spent = 0;
    for (; separated_ < costs_.separating_anchors; ++separated_, ++trained) {
      const double took = cost(costs_.separating_anchor);
      const double allowed = trained == 0 ? std::max(share.seconds, share.first_seconds) : share.seconds - spent;
      if (took > allowed) {
        progress("anchor of the rival layout skipped: it would take about " + std::to_string(took) + " s");
        break;
      }
      work("separating anchor", took, allowed);
      spent += took;
    }
    return trained;
  }
  Expected<int> setup_check(const FirstRunFit&, const AnchorShare& share) override {
    const double took = cost(costs_.setup_run);
    if (timed_ >= costs_.setup_runs) return 0;
    if ((timed_ == 0 ? 2 : 1) * took > share.seconds) {
      progress("the setups not timed by PyTorch: a run would take about " + std::to_string(took) + " s");
      return 0;
    }
    ++timed_;
    work("PyTorch run", took, share.seconds);
    return 1;
  }
  Expected<int> close_call(const FirstRunFit&, const AnchorShare& share) override {
    const double took = cost(costs_.close_call_run);
    if (close_calls_ >= costs_.close_call_runs || took > share.seconds) return 0;
    ++close_calls_;
    work("close call", took, share.seconds);
    return 1;
  }
  Expected<int> more_layer_passes(double seconds) override {
    const double took = std::min(cost(costs_.more_layer_passes), seconds);
    work("more layer passes", took, seconds);
    return static_cast<int>(std::lround(costs_.more_passes * took / cost(costs_.more_layer_passes)));
  }
  Expected<int> repeated_base_anchors(double seconds) override {
    int trained = 0;
    for (const char* trainer : {"repeated anchor (C++)", "repeated anchor (PyTorch)"}) {
      const double took = cost(costs_.repeated_anchor);
      if (took > seconds) break;
      work(trainer, took, seconds);
      seconds -= took;
      ++trained;
    }
    return trained;
  }

  // The index of the first work called `what` (npos: none).
  std::size_t first(const std::string& what) const {
    for (std::size_t index = 0; index < done.size(); ++index)
      if (done[index].what == what) return index;
    return std::string::npos;
  }
  bool said_that(const std::string& text) const {
    return std::any_of(said.begin(), said.end(),
                       [&](const std::string& line) { return line.find(text) != std::string::npos; });
  }
  std::string trace() const {
    std::string text;
    for (const std::string& line : said) text += "  said: " + line + "\n";
    for (const Done& item : done)
      text += "  " + std::to_string(std::lround(item.started)) + " s: " + item.what + " (share " +
              std::to_string(std::lround(item.share)) + " s, took " + std::to_string(std::lround(item.took)) + " s)\n";
    return text + "  ended at " + std::to_string(std::lround(now)) + " s";
  }

 private:
  double cost(double seconds) const { return seconds * costs_.slowdown; }
  void work(const std::string& what, double took, double share) {
    done.push_back({what, now, share, took});
    now += took;
  }

  FirstRunEstimates planned_;
  RecordedCosts costs_;
  double base_step_ = 0, kept_step_ = 0;
  int separated_ = 0, timed_ = 0, close_calls_ = 0;
  bool defaults_by_python_ = false;
};

// resnet152 b32 on a 2-core VM, as its first run planned it (docs/results.md, bede46b: "announced the
// anchor at 75 s, gave the base passes 83 s"): the step estimated from the layer passes' sum, the
// warm-up from the first touch of the process's 7.3 GB.
FirstRunEstimates resnet152_planned() {
  FirstRunEstimates estimates;
  estimates.layer_passes = 141;
  estimates.layer_seconds = 124;
  estimates.more_layer_passes = 39;
  estimates.more_layer_seconds = 23;
  estimates.base_setting = "1x2";
  estimates.step_seconds = 14;
  estimates.kept_memory_step_seconds = 9;
  estimates.warmup_steps = first_step_warmup_steps(14, 25);
  estimates.allocators = {"glibc-tuned", "tcmalloc", "jemalloc"};
  estimates.separating_anchors = 3;
  estimates.pytorch_setups = 2;
  return estimates;
}

// resnet18 b8 on the same VM: every stage fits (docs/results.md, "resnet18 b8: first run: about 1.5
// minutes: 70 layer passes (11 s), the anchor at 1x2 (8 s), 3 allocator variants ...").
FirstRunEstimates resnet18_planned() {
  FirstRunEstimates estimates;
  estimates.layer_passes = 70;
  estimates.layer_seconds = 11;
  estimates.more_layer_passes = 141;
  estimates.more_layer_seconds = 27;
  estimates.base_setting = "1x2";
  estimates.step_seconds = 0.6;
  estimates.kept_memory_step_seconds = 0.4;
  estimates.warmup_steps = first_step_warmup_steps(0.6, 0.6);
  estimates.allocators = {"glibc-tuned", "tcmalloc", "jemalloc"};
  estimates.separating_anchors = 3;
  estimates.pytorch_setups = 2;
  return estimates;
}

RecordedCosts resnet18_costs() {
  RecordedCosts costs;
  costs.layer_passes = 12;
  costs.step = 0.58;
  costs.warmup_steps = 2;
  costs.variant_steps = {{"glibc-tuned", 0.33}, {"tcmalloc", 0.33}, {"jemalloc", 1.1}};
  costs.separating_anchor = 14;
  costs.setup_run = 16;
  costs.more_layer_passes = 27;
  costs.more_passes = 141;
  costs.repeated_anchor = 12;
  costs.close_call_run = 9;
  return costs;
}

}  // namespace

TEST_CASE("a first run's stages run in the plan's order, each within its share, from recorded costs") {
  RecordedWork work(resnet18_planned(), resnet18_costs());
  const auto answer = run_first_run(work, 225, work.clock, work.progress);
  INFO(work.trace());
  REQUIRE(answer);
  CHECK(answer->calibration_path == "calibration.json");
  // The announcement first: the plan made from the estimates at the start, the probe counted.
  FirstRunEstimates planned = resnet18_planned();
  planned.budget_seconds = 225;
  planned.probe_seconds = 4;
  REQUIRE_FALSE(work.said.empty());
  CHECK(work.said.front() == describe_first_run(plan_first_run(planned)));
  // The layer passes get their share, or what the anchors' shares leave of the rest.
  CHECK(work.done.front().share == Approx(layer_passes_seconds(plan_first_run(planned), 225 - 4)));
  CHECK(work.done.front().share > plan_first_run(planned).seconds(FirstRunStage::layer_passes));
  // The decision's order: the base anchor, the variants glibc-tuned first, the first fit and the
  // separating anchors, PyTorch's runs, the close calls (a deciding anchor's runs that move more than
  // the call it decides come before the cheaper extra passes), the extra passes, the refit.
  const std::vector<std::string> order = {
      "layer passes",      "base anchor", "glibc-tuned", "tcmalloc",          "jemalloc", "fit",
      "separating anchor", "PyTorch run", "close call",  "more layer passes", "refit"};
  for (std::size_t index = 0; index < order.size(); ++index) {
    INFO(order[index]);
    REQUIRE(work.first(order[index]) != std::string::npos);
    if (index > 0) CHECK(work.first(order[index - 1]) < work.first(order[index]));
  }
  // The base anchor repeated last, with what they leave: here the close calls took its time.
  CHECK(work.first("repeated anchor (C++)") == std::string::npos);
  // Every variant and separating anchor measured before the extra passes; PyTorch's runs ranked by
  // a fit that holds the separating anchors (a fit between them).
  CHECK(work.first("separating anchor") < work.first("PyTorch run") - 1);
  CHECK(work.done[work.first("PyTorch run") - 1].what == "fit");
  // Every measurement within its share and the budget (a refit may end past it: not in a share).
  for (const Done& item : work.done) {
    INFO(item.what << " at " << item.started);
    if (item.what == "fit" || item.what == "refit") continue;
    CHECK(item.took <= item.share);
    CHECK(item.started + item.took <= 225);
  }
}

TEST_CASE("a first run whose base anchor overran trains the announced glibc-tuned with what is left, and says so") {
  // resnet152 b32 on 00f48c9 (docs/results.md): the base passes stopped at their share, the base
  // anchor past its announced share (a 19.1 s step, a warm-up of several), glibc-tuned priced past
  // what was left and trained with it all the same.
  RecordedCosts costs;
  costs.layer_passes = 124;
  costs.step = 19.1;
  costs.warmup_steps = 3.5;
  costs.variant_steps = {{"glibc-tuned", 14.3}, {"tcmalloc", 14.3}, {"jemalloc", 40}};
  costs.separating_anchor = 142;
  FirstRunEstimates planned = resnet152_planned();
  planned.kept_memory_step_seconds = 14;  // the layer passes' sum less their faults, as priced then
  RecordedWork work(planned, costs);
  const auto answer = run_first_run(work, 240, work.clock, work.progress);
  INFO(work.trace());
  REQUIRE(answer);
  planned.budget_seconds = 240;
  planned.probe_seconds = 4;
  const FirstRunPlan announced = plan_first_run(planned);
  REQUIRE(announced.allocators.front() == "glibc-tuned");
  REQUIRE(work.first("glibc-tuned") != std::string::npos);
  const Done& tuned = work.done[work.first("glibc-tuned")];
  // The replan would drop it (5 + (1 + 2.7... warm-up + 2) steps past what is left); the plan kept it on all that is
  // left.
  CHECK(tuned.share == Approx(240 - tuned.started));
  CHECK(work.said_that("the glibc-tuned anchor is trained with the"));
  CHECK(work.said_that("without it the allocator cannot be chosen"));
  CHECK(work.first("tcmalloc") == std::string::npos);
  CHECK(work.first("separating anchor") == std::string::npos);
  CHECK(work.said_that("more layer passes not measured: no time left of the first run"));
  CHECK(work.first("glibc-tuned") < work.first("refit"));
}

namespace {

// The tiny test network (tests/fixtures/tiny_network.json) at batch 4, as tests/cache/ runs it
// (docs/results.md: "89 s wall, glibc-tuned, jemalloc and tcmalloc and two separating anchors
// trained before the other 51 layer passes"): trainers' starts outweigh their steps.
FirstRunEstimates tiny_planned() {
  FirstRunEstimates estimates;
  estimates.layer_passes = 24;
  estimates.layer_seconds = 8;
  estimates.more_layer_passes = 51;
  estimates.more_layer_seconds = 12;
  estimates.base_setting = "1x2";
  estimates.step_seconds = 0.05;
  estimates.kept_memory_step_seconds = 0.04;
  estimates.allocators = {"glibc-tuned", "tcmalloc", "jemalloc"};
  estimates.separating_anchors = 3;
  estimates.pytorch_setups = 2;
  return estimates;
}

RecordedCosts tiny_costs() {
  RecordedCosts costs;
  costs.probe = 3;
  costs.layer_passes = 9;
  costs.step = 0.06;
  costs.warmup_steps = 3;
  costs.variant_steps = {{"glibc-tuned", 0.05}, {"tcmalloc", 0.05}, {"jemalloc", 0.08}};
  costs.separating_anchor = 11;
  costs.setup_run = 12;
  costs.more_layer_passes = 12;
  costs.more_passes = 51;
  costs.repeated_anchor = 8;
  costs.close_call_run = 6;
  return costs;
}

// Whether the works named ran in this order (those that ran: a missing one is checked apart).
bool ran_in_order(const RecordedWork& work, const std::vector<std::string>& names) {
  std::size_t last = 0;
  for (const std::string& name : names) {
    const std::size_t index = work.first(name);
    if (index == std::string::npos) continue;
    if (index < last) return false;
    last = index;
  }
  return true;
}

}  // namespace

TEST_CASE("a short first-run budget drops the extra passes, then the further anchors, and says what it dropped") {
  for (const double budget : {225.0, 120.0, 80.0, 50.0}) {
    RecordedWork work(resnet18_planned(), resnet18_costs());
    REQUIRE(run_first_run(work, budget, work.clock, work.progress));
    INFO(budget << " s:\n" << work.trace());
    FirstRunEstimates planned = resnet18_planned();
    planned.budget_seconds = budget;
    planned.probe_seconds = 4;
    const FirstRunPlan announced = plan_first_run(planned);
    CHECK(work.said.front() == describe_first_run(announced));
    CHECK(work.said_that("not within the budget") == !announced.left_out.empty());
    // What can change the pick comes before what refines the layers' sum, whatever the budget.
    CHECK(ran_in_order(work, {"layer passes", "base anchor", "glibc-tuned", "tcmalloc", "fit", "separating anchor",
                              "PyTorch run", "close call", "more layer passes", "refit", "repeated anchor (C++)"}));
    // The extra passes only with every announced anchor stage measured, else said.
    if (work.first("more layer passes") == std::string::npos)
      CHECK(work.said_that("more layer passes not measured: no time left of the first run"));
    else
      CHECK(work.first("glibc-tuned") != std::string::npos);
    // The base anchor and glibc-tuned stay while anything of the budget is left for them.
    CHECK(work.first("base anchor") != std::string::npos);
    CHECK(work.first("glibc-tuned") != std::string::npos);
    for (const Done& item : work.done)
      if (item.what != "fit" && item.what != "refit") CHECK(item.started < budget);
  }
  // 225 s: everything; 50 s: the anchors that decide, none of the extra passes.
  RecordedWork roomy(resnet18_planned(), resnet18_costs());
  REQUIRE(run_first_run(roomy, 225, roomy.clock, roomy.progress));
  CHECK(roomy.first("jemalloc") != std::string::npos);
  CHECK(roomy.first("more layer passes") != std::string::npos);
  RecordedWork tight(resnet18_planned(), resnet18_costs());
  REQUIRE(run_first_run(tight, 50, tight.clock, tight.progress));
  INFO(tight.trace());
  CHECK(tight.first("more layer passes") == std::string::npos);
  CHECK(tight.first("PyTorch run") == std::string::npos);
}

TEST_CASE(
    "on a machine two or three times slower than the plan, a first run still trains what the tests rely on, or says it "
    "did not") {
  struct Case {
    const char* name;
    FirstRunEstimates planned;
    RecordedCosts costs;
    double budget;
  };
  for (Case& network : std::vector<Case>{{"tiny b4", tiny_planned(), tiny_costs(), 120},
                                         {"resnet18 b8", resnet18_planned(), resnet18_costs(), 225},
                                         {"resnet152 b32", resnet152_planned(), RecordedCosts{}, 225}}) {
    for (const double slowdown : {1.0, 2.0, 2.5, 3.0}) {
      network.costs.slowdown = slowdown;
      RecordedWork work(network.planned, network.costs);
      REQUIRE(run_first_run(work, network.budget, work.clock, work.progress));
      INFO(network.name << " at " << slowdown << "x:\n" << work.trace());
      // The base anchor and glibc-tuned (every answer's allocator rests on it: tests/cache/) trained,
      // or the first run says it did not train them.
      CHECK((work.first("base anchor") != std::string::npos || work.said_that("anchor at 1x2 not trained")));
      CHECK((work.first("glibc-tuned") != std::string::npos || work.said_that("allocator anchors not trained")));
      // A separating anchor trained or said skipped, after glibc-tuned and before the extra passes.
      CHECK((work.first("separating anchor") != std::string::npos || work.said_that("skipped")));
      CHECK(ran_in_order(work, {"layer passes", "base anchor", "glibc-tuned", "fit", "separating anchor", "close call",
                                "more layer passes", "refit", "repeated anchor (C++)"}));
      // Nothing starts once the budget is spent (a trainer's warm-up may end past it).
      for (const Done& item : work.done)
        if (item.what != "fit" && item.what != "refit" && item.what != "coverage") CHECK(item.started < network.budget);
      // The tiny network's test relies on glibc-tuned and a separating anchor: both, up to 3x slower.
      if (std::string(network.name) == "tiny b4") {
        CHECK(work.first("glibc-tuned") != std::string::npos);
        CHECK(work.first("separating anchor") != std::string::npos);
      }
    }
  }
}

TEST_CASE("a first run whose deciding anchors PyTorch trains keeps to its budget on the test's clock") {
  for (const double budget : {225.0, 120.0, 80.0}) {
    for (const double slowdown : {1.0, 2.0}) {
      FirstRunEstimates planned = resnet18_planned();
      planned.deciding_by_python = true;
      RecordedCosts costs = resnet18_costs();
      costs.separating_anchor += 2 * (python_start_seconds - trainer_start_seconds);
      costs.slowdown = slowdown;
      RecordedWork work(planned, costs);
      REQUIRE(run_first_run(work, budget, work.clock, work.progress));
      INFO(budget << " s at " << slowdown << "x:\n" << work.trace());
      CHECK_THAT(work.said.front(), Catch::Contains("by PyTorch from Python"));
      // PyTorch's run of glibc's defaults right before the variants, after the C++ trainer's base anchor.
      REQUIRE(work.first("glibc's defaults (PyTorch)") != std::string::npos);
      CHECK(ran_in_order(work, {"base anchor", "glibc's defaults (PyTorch)", "glibc-tuned", "fit", "separating anchor",
                                "more layer passes"}));
      CHECK(work.first("glibc-tuned") != std::string::npos);
      // Nothing starts once the budget is spent, and each measurement keeps to its share (but
      // jemalloc, taken late on what is left: its trainer's time limit, which the recorded costs
      // leave out, stops its timed steps there).
      for (const Done& item : work.done) {
        if (item.what == "fit" || item.what == "refit" || item.what == "coverage") continue;
        CHECK(item.started < budget);
        if (slowdown == 1.0 && item.what != "jemalloc") CHECK(item.took <= item.share + 1e-9);
      }
    }
  }
}
