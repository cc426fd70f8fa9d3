// tests/model_cliff_test.cpp — a dispatch cliff found by anchors is carried, not assumed away:
// with a real step at 1x2 that the layers' sum matches and one at 2x1 twenty times slower than
// its layers' sum (Debian's libtorch at one thread: resnet50 b8 1x1 was 20x slower than 1x2 on
// one VM), a setting of more co-running processes takes the one-thread anchor's correction (4x1 on
// a 4-core node), settings of one process take the one-process anchor's (1x1, 1x4: co-running
// micro-runs err their own way, model/predictor.cpp), and a carried band widens by the
// disagreement between the anchors until it holds a step that falls off the cliff. On two
// packages, an anchor's processes are placed like a configuration's, so only its own layout is
// "measured". A micro-run is carried to another thread count only when the same kernel runs
// there (libtorch's dispatch, conv_native).
#include <catch2/catch.hpp>

#include <set>

#include <cmath>

#include "model/calibration.hpp"
#include "model/fit.hpp"
#include "model/layer_class.hpp"
#include "model/predictor.hpp"
#include "workloads/zoo.hpp"
#include "tests/model_fixtures.hpp"

using namespace dnntune;
using namespace dnntune::model;

namespace {

constexpr double cliff = 20;  // measured / the layers' sum at one thread per process

Calibration fitted(const records::MachineProfile& machine) {
  const FitOptions options = test::fixture_fit_options(4);
  auto calibration =
      fit_calibration(test::synthetic_records(machine, 0.01, 5), machine, "torch", {"synthetic"}, options);
  REQUIRE(calibration);
  return *calibration;
}

TrainingConfiguration layout(int processes, int threads) {
  TrainingConfiguration configuration;
  configuration.batch_per_process = 8;
  configuration.processes_per_node = processes;
  configuration.threads_per_process = threads;
  return configuration;
}

double band_ratio(const Prediction& prediction) {
  return prediction.images_per_second_high / prediction.images_per_second_low;
}

}  // namespace

TEST_CASE("a one-thread cliff found by an anchor is carried to nearby settings, and widens their band") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const Calibration plain = fitted(test::test_machine());  // 1 package, 4 cores
  Calibration with_cliff = plain;
  with_cliff.anchors = {test::anchor_at(plain, *network, layout(1, 2), 1.0),
                        test::anchor_at(plain, *network, layout(2, 1), cliff)};
  Calibration without_cliff = plain;
  without_cliff.anchors = {test::anchor_at(plain, *network, layout(1, 2), 1.0),
                           test::anchor_at(plain, *network, layout(2, 1), 1.0)};
  const auto predictor = Predictor::from_calibration(with_cliff);
  const auto agreeing = Predictor::from_calibration(without_cliff);
  const auto unanchored = Predictor::from_calibration(plain);
  REQUIRE(predictor);
  REQUIRE(agreeing);
  REQUIRE(unanchored);

  // Both anchored layouts are "measured" and reproduce their own step.
  for (const auto& [processes, threads] : {std::pair{1, 2}, std::pair{2, 1}}) {
    const auto exact = predictor->predict(*network, layout(processes, threads));
    REQUIRE(exact);
    CHECK(exact->confidence == "measured");
    CHECK(exact->anchor.exact);
  }

  // 4x1: the co-running one-thread anchor's correction (the cliff); 1x1: the one-process anchor's.
  // Never "measured"; both bands hold a step that falls off the cliff.
  for (const auto& [processes, threads] : {std::pair{4, 1}, std::pair{1, 1}}) {
    INFO(processes << "x" << threads);
    const auto near_cliff = predictor->predict(*network, layout(processes, threads));
    const auto model_alone = unanchored->predict(*network, layout(processes, threads));
    const auto without = agreeing->predict(*network, layout(processes, threads));
    REQUIRE(near_cliff);
    REQUIRE(model_alone);
    REQUIRE(without);
    CHECK(near_cliff->anchor.used);
    CHECK_FALSE(near_cliff->anchor.exact);
    CHECK(near_cliff->confidence != "measured");
    if (processes == 4) {
      CHECK(near_cliff->anchor.anchor.threads == 1);
      CHECK(near_cliff->anchor.anchor.processes == 2);
      CHECK(near_cliff->terms.forward == Approx(cliff * model_alone->terms.forward));
      CHECK(near_cliff->images_per_second < model_alone->images_per_second / 5);
    } else {
      CHECK(near_cliff->anchor.anchor.threads == 2);
      CHECK(near_cliff->anchor.anchor.processes == 1);
      CHECK(near_cliff->terms.forward == Approx(model_alone->terms.forward));
    }
    // The anchors disagree by the cliff: the band widens by it, beyond agreeing anchors' band.
    CHECK(near_cliff->anchor.disagreement == Approx(std::log(cliff)));
    CHECK(without->anchor.disagreement == Approx(0).margin(1e-9));
    CHECK(band_ratio(*near_cliff) > band_ratio(*without) * 2);
    // A step that really falls off the cliff lies inside the band.
    const double fell =
        processes * 8 /
        (model_alone->iteration_seconds + (cliff - 1) * (model_alone->terms.forward + model_alone->terms.backward_data +
                                                         model_alone->terms.backward_weights));
    CHECK(near_cliff->images_per_second_low <= fell);
    CHECK(near_cliff->images_per_second_high >= fell);
  }

  // 1x4: the two-thread anchor's correction (no cliff there).
  const auto far_from_cliff = predictor->predict(*network, layout(1, 4));
  const auto model_alone = unanchored->predict(*network, layout(1, 4));
  REQUIRE(far_from_cliff);
  REQUIRE(model_alone);
  CHECK(far_from_cliff->anchor.anchor.threads == 2);
  CHECK(far_from_cliff->terms.forward == Approx(model_alone->terms.forward));
  CHECK(far_from_cliff->confidence != "measured");
}

TEST_CASE("on two packages an anchor backs its own layout only") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  records::MachineProfile machine = test::test_machine();
  machine.topology.packages = 2;
  machine.topology.numa_nodes = 2;
  machine.topology.cores_per_package = 2;
  Calibration calibration = fitted(machine);
  calibration.anchors = {test::anchor_at(calibration, *network, layout(2, 1), cliff)};
  const auto predictor = Predictor::from_calibration(calibration);
  REQUIRE(predictor);
  // 2x1 runs one process per package: its own anchor, measured.
  const auto own = predictor->predict(*network, layout(2, 1));
  REQUIRE(own);
  CHECK(own->confidence == "measured");
  // 4x1 runs two per package and 1x1 shares 2x1's execution setting: carried, never measured.
  for (const auto& [processes, threads] : {std::pair{4, 1}, std::pair{1, 1}}) {
    INFO(processes << "x" << threads);
    const auto other = predictor->predict(*network, layout(processes, threads));
    REQUIRE(other);
    CHECK(other->anchor.used);
    CHECK_FALSE(other->anchor.exact);
    CHECK(other->confidence != "measured");
  }
}

TEST_CASE("a micro-run is never carried to a thread count where another kernel runs the layer") {
  const auto network = workloads::load_network("resnet50");
  REQUIRE(network);
  // Every layer pass measured at one thread; then libtorch's own 1x1 convolutions (conv_native
  // at batch 8 on one thread, oneDNN's on two) measured 1000x slower: a cliff.
  const Calibration plain = test::every_layer_measured(*network);
  Calibration with_cliff = plain;
  int native = 0;
  std::set<std::string> slowed;  // each shape once: a shape shared by many layers is one micro-run
  for (const workloads::Layer& layer : network->layers) {
    if (classify(layer.spec, "torch", 8, 1) != LayerClass::conv_native) continue;
    ++native;
    if (!slowed.insert(layer.descriptor).second) continue;
    for (int pass = 0; pass < 3; ++pass)
      if (auto found = with_cliff.measured_layers.find(measured_layer_key(layer.descriptor, pass, 8));
          found != with_cliff.measured_layers.end())
        for (MeasuredLayer& measured : found->second) measured.seconds *= 1000;
  }
  REQUIRE(native > 10);
  const auto predict = [&](const Calibration& calibration, int threads) {
    auto predicted = Predictor::from_calibration(calibration)->predict(*network, layout(1, threads));
    if (!predicted) FAIL_CHECK(predicted.error().message);
    REQUIRE(predicted);
    return *predicted;
  };
  // At one thread the cliff is measured and shows.
  CHECK(predict(with_cliff, 1).iteration_seconds > 20 * predict(plain, 1).iteration_seconds);
  // At two threads oneDNN runs those layers: the one-thread figures, cliff or not, say nothing of
  // it, so both calibrations predict the same (the model alone for those layers).
  CHECK(predict(with_cliff, 2).iteration_seconds == Approx(predict(plain, 2).iteration_seconds).epsilon(1e-9));
}
