// tests/model_spec_priors_test.cpp — a spec answer says what it rests on: the priors for what the
// reference could not identify (model/spec_priors), the choice among several references
// (model/reference_choice), and the tie-break that compares candidates replicate by replicate
// and never contradicts its note (tuner/recommendation).
#include <algorithm>

#include <catch2/catch.hpp>

#include "data/builtin_machines.hpp"
#include "model/parameters.hpp"
#include "model/reference_choice.hpp"
#include "model/spec_priors.hpp"
#include "tuner/recommendation.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;

namespace {

model::Calibration builtin_reference() {
  auto calibration = model::calibration_from_json_text(data::builtin_reference_calibration("torch"), "<reference>");
  REQUIRE(calibration);
  return *calibration;
}

const model::AppliedPrior* applied(const model::SpecPriors& priors, const std::string& field, const std::string& name) {
  for (const auto& prior : priors.applied)
    if (prior.field == field &&
        std::find(prior.parameters.begin(), prior.parameters.end(), name) != prior.parameters.end())
      return &prior;
  return nullptr;
}

}  // namespace

TEST_CASE("the reference's unidentified parameters get spec priors with sources, drawn over their range") {
  const auto reference = builtin_reference();
  const auto skylake = data::builtin_machine("skylake-8180");
  REQUIRE(skylake);
  const auto priors = model::apply_spec_priors(reference, *skylake);

  // The 2-vCPU reference has no SMT, ran 2 threads and left the bandwidth efficiency at a bound.
  const auto* smt = applied(priors, "smt_gain", "conv_spatial.smt_gain");
  const auto* contention = applied(priors, "contention", "conv_spatial.contention");
  const auto* bandwidth = applied(priors, "bandwidth_efficiency", "bandwidth_efficiency");
  REQUIRE(smt);
  REQUIRE(contention);
  REQUIRE(bandwidth);
  REQUIRE(applied(priors, "coherency", "conv_pointwise.coherency"));
  for (const auto& prior : priors.applied) {
    CHECK_FALSE(prior.source.empty());
    CHECK_FALSE(prior.why_unidentified.empty());
    CHECK(prior.low <= prior.value);
    CHECK(prior.value <= prior.high);
  }
  // No serial fraction of the kernels' own: what a node's threads lose is in the named node terms.
  // (It was once 0.013, solved from the study's own 1.47x: a factor fitted to the ratio it was to
  // reproduce.)
  CHECK(contention->value == 0);
  CHECK(contention->low == 0);
  CHECK(contention->high == 0);
  CHECK(contention->source.find("1.47") == std::string::npos);
  CHECK(bandwidth->value == 1.0);  // the rates are already the sustained (triad) bandwidth

  // The answer's parameters sit at the priors; the replicates span the range; without the
  // spread they stay at the prior.
  const auto* ratio = applied(priors, "cross_package_bandwidth_ratio", "cross_package_bandwidth_ratio");
  REQUIRE(ratio);
  const int index = model::parameter_index("cross_package_bandwidth_ratio");
  REQUIRE(index >= 0);
  CHECK(priors.calibration.parameters.cross_package_bandwidth_ratio == ratio->value);
  CHECK(priors.calibration.parameters.of(model::LayerClass::conv_spatial).contention == 0);
  double lowest = 1, highest = 0;
  for (const auto& replicate : priors.calibration.bootstrap_parameters) {
    lowest = std::min(lowest, replicate[index]);
    highest = std::max(highest, replicate[index]);
  }
  CHECK(lowest < ratio->low + 0.1 * (ratio->high - ratio->low));
  CHECK(highest > ratio->high - 0.1 * (ratio->high - ratio->low));
  for (const auto& replicate : priors.calibration_without_prior_spread.bootstrap_parameters)
    CHECK(replicate[index] == ratio->value);
  // What the reference did identify is left alone.
  CHECK(priors.calibration.parameters.of(model::LayerClass::conv_spatial).efficiency[0] ==
        reference.parameters.of(model::LayerClass::conv_spatial).efficiency[0]);
}

// Each node term's value and range are those of its source (model/spec_priors.cpp, docs/model.md):
// a change outside them must change the cited figures too.
TEST_CASE("the node terms rest on their cited ranges, on every spec answer and no measured one") {
  const auto reference = builtin_reference();
  const auto skylake = data::builtin_machine("skylake-8180");
  const auto epyc = data::builtin_machine("epyc-7551");
  REQUIRE(skylake);
  REQUIRE(epyc);
  const auto priors = model::apply_spec_priors(reference, *skylake);
  struct Cited {
    const char* field;
    double value, low, high;
    const char* source;
  };
  for (const Cited& cited : {Cited{"fork_join_seconds_per_doubling", 0.5e-6, 0.28e-6, 0.77e-6, "hurdles"},
                             Cited{"cross_package_bandwidth_ratio", 0.45, 0.33, 0.49, "Memory Latency Checker"},
                             Cited{"work_item_channels", 32, 16, 64, "balance211"}}) {
    CAPTURE(cited.field);
    const auto* prior = applied(priors, cited.field, cited.field);
    REQUIRE(prior);
    CHECK(prior->value == Approx(cited.value));
    CHECK(prior->low == Approx(cited.low));
    CHECK(prior->high == Approx(cited.high));
    CHECK(prior->source.find(cited.source) != std::string::npos);
    CHECK_FALSE(prior->why_unidentified.empty());
  }
  // A work item is whole vectors of fp32 lanes: 8 with AVX2 (the EPYC 7551), 16 with AVX-512.
  const auto* epyc_items =
      applied(model::apply_spec_priors(reference, *epyc), "work_item_channels", "work_item_channels");
  REQUIRE(epyc_items);
  CHECK(epyc_items->value == 16);
  CHECK(epyc_items->low == 8);
  // One package: nothing is remote.
  CHECK_FALSE(applied(model::apply_spec_priors(reference, reference.machine), "cross_package_bandwidth_ratio",
                      "cross_package_bandwidth_ratio"));

  // A measured machine never pays them: their priors cost nothing, and no fit frees them.
  const model::ModelParameters neutral;
  CHECK(neutral.fork_join_seconds_per_doubling == 0);
  CHECK(neutral.cross_package_bandwidth_ratio == 1);
  CHECK(neutral.work_item_channels == 0);
  CHECK(reference.parameters.fork_join_seconds_per_doubling == 0);
  CHECK(reference.parameters.cross_package_bandwidth_ratio == 1);
  CHECK(reference.parameters.work_item_channels == 0);
  model::FitEvidence everything;
  everything.samples = 1000;
  for (auto& of_class : everything.classes) {
    for (bool& measured : of_class.measured_in_pass) measured = true;
    of_class.core_counts = 8;
    of_class.with_smt = of_class.co_running = true;
  }
  for (const char* name : {"fork_join_seconds_per_doubling", "cross_package_bandwidth_ratio", "work_item_channels"})
    CHECK_FALSE(model::parameter_table()[model::parameter_index(name)].identifiable_from(everything));
}

TEST_CASE("a machine like the reference keeps the reference's own figures") {
  const auto reference = builtin_reference();
  const auto priors = model::apply_spec_priors(reference, reference.machine);
  CHECK_FALSE(applied(priors, "smt_gain", "conv_spatial.smt_gain"));       // no SMT to predict
  CHECK_FALSE(applied(priors, "contention", "conv_spatial.contention"));   // no more threads than measured
  CHECK(applied(priors, "bandwidth_efficiency", "bandwidth_efficiency"));  // still at its bound
}

TEST_CASE("the closest reference is chosen by vendor, ISA and SMT, and the choice says why") {
  auto amd_vm = builtin_reference();
  REQUIRE(model::cpu_vendor(amd_vm.machine) == "amd");
  auto intel_node = amd_vm;
  intel_node.machine.cpu.model = "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz";
  intel_node.machine.topology.pus_per_core = 2;
  intel_node.machine.topology.cores = 16;
  auto onednn = intel_node;
  onednn.backend = "onednn";
  const std::vector<model::ReferenceCandidate> candidates = {
      {"vm", amd_vm}, {"xeon-16", intel_node}, {"xeon-16-onednn", onednn}};
  const auto skylake = data::builtin_machine("skylake-8180");
  const auto epyc = data::builtin_machine("epyc-7551");
  REQUIRE(skylake);
  REQUIRE(epyc);

  const auto for_skylake = model::choose_reference(candidates, *skylake, "torch");
  REQUIRE(for_skylake);
  CHECK(for_skylake->index == 1);
  CHECK(for_skylake->why.find("same vendor (intel)") != std::string::npos);
  CHECK(for_skylake->why.find("SMT like this machine") != std::string::npos);
  const auto for_epyc = model::choose_reference(candidates, *epyc, "torch");
  REQUIRE(for_epyc);
  CHECK(for_epyc->index == 0);
  CHECK(model::choose_reference(candidates, *epyc, "onednn")->index == 2);  // the backend comes first
  CHECK_FALSE(model::choose_reference(candidates, *epyc, "torch-cuda"));
}

TEST_CASE("a spec answer bands every candidate, pairs its comparisons and its note matches its pick") {
  const auto reference = builtin_reference();
  const auto network = workloads::build_network("resnet50");
  REQUIRE(network);
  for (const char* name : {"skylake-8180", "epyc-7551"}) {
    CAPTURE(name);
    const auto machine = data::builtin_machine(name);
    REQUIRE(machine);
    const auto priors = model::apply_spec_priors(reference, *machine);
    const auto predictor = model::Predictor::from_spec(*machine, priors.calibration);
    REQUIRE(predictor);
    tuner::SearchSpaceOptions space;
    space.batches_per_process = {32};
    const auto result = tuner::recommend(*predictor, *network, space, tuner::RecommendOptions{});
    REQUIRE(result);
    for (const auto& point : result->ranking) {
      CHECK(point.prediction.images_per_second_low < point.prediction.images_per_second);
      CHECK(point.prediction.images_per_second < point.prediction.images_per_second_high);
    }
    const auto& best = result->best.prediction.configuration;
    const auto& top = result->ranking.front().prediction.configuration;
    CHECK(result->chosen_by_tie_break == (best != top));
    CHECK(result->tied_candidates >= 1);
    if (result->chosen_by_tie_break) {
      CHECK(result->choice_note.find("tie-break") != std::string::npos);
      CHECK(best.processes_per_node <= top.processes_per_node);
    }
    // The note describes the pick as it is (its processes and SMT setting), never a setting the
    // pick does not have.
    if (result->chosen_by_tie_break) {
      const std::string pick = std::to_string(best.processes_per_node) +
                               (best.processes_per_node == 1 ? " process" : " processes") + ", SMT " +
                               (best.smt ? "on" : "off");
      CHECK(result->choice_note.find("the simplest of them (" + pick) != std::string::npos);
    }
    CHECK(result->choice_note.find("(fewer processes, SMT off)") == std::string::npos);
    // Paired, the spec transfer every candidate shares cancels: fewer candidates tie than bands
    // overlap (independent bands of +-0.25 log-sd overlap for almost every candidate).
    std::size_t overlapping = 0;
    for (const auto& point : result->ranking)
      if (point.prediction.images_per_second_high >= result->ranking.front().prediction.images_per_second_low)
        ++overlapping;
    CHECK(static_cast<std::size_t>(result->tied_candidates) < overlapping);
  }
}
