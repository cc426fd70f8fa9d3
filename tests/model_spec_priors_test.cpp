// tests/model_spec_priors_test.cpp — a spec answer says what it rests on: the priors for what the
// reference could not identify (model/spec_priors), the choice among several references
// (model/reference_choice), and the tie-break that compares candidates replicate by replicate
// and never contradicts its note (tuner/recommendation).
#include <algorithm>

#include <catch2/catch.hpp>

#include "data/builtin_machines.hpp"
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
  // The contention prior scales with DRAM bandwidth per core: 128 GB/s over 28 cores is the
  // study's own machine, so it is the study's figure.
  CHECK(contention->value > 0.012);
  CHECK(contention->value < 0.014);
  CHECK(bandwidth->value == 1.0);  // the rates are already the sustained (triad) bandwidth

  // The answer's parameters sit at the priors; the replicates span the range; without the
  // spread they stay at the prior.
  const int index = model::parameter_index("conv_spatial.contention");
  REQUIRE(index >= 0);
  CHECK(priors.calibration.parameters.of(model::LayerClass::conv_spatial).contention == contention->value);
  double lowest = 1, highest = 0;
  for (const auto& replicate : priors.calibration.bootstrap_parameters) {
    lowest = std::min(lowest, replicate[index]);
    highest = std::max(highest, replicate[index]);
  }
  CHECK(lowest < contention->value * 0.6);
  CHECK(highest > contention->value * 1.8);
  for (const auto& replicate : priors.calibration_without_prior_spread.bootstrap_parameters)
    CHECK(replicate[index] == contention->value);
  // What the reference did identify is left alone.
  CHECK(priors.calibration.parameters.of(model::LayerClass::conv_spatial).efficiency[0] ==
        reference.parameters.of(model::LayerClass::conv_spatial).efficiency[0]);
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
