// tests/model_context_correction_test.cpp — the context correction (model/context_correction.hpp):
// in-network module times fitted into one ratio per pass and thread count against the isolated
// micro-runs; a network without an anchor of its own predicted through them, with a wider band;
// an exact anchor keeping its whole-network correction; calibrations without module records
// unchanged, and the calibration file's new member round-tripping and refusing bad values.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/calibration.hpp"
#include "model/context_correction.hpp"
#include "model/fit.hpp"
#include "model/layer_class.hpp"
#include "model/predictor.hpp"
#include "workloads/costs.hpp"
#include "workloads/zoo.hpp"
#include "tests/model_fixtures.hpp"

using namespace dnntune;
using namespace dnntune::model;

namespace {

using test::every_layer_measured;
using test::one_thread_at;
constexpr double isolated_pass_seconds = test::measured_pass_seconds;

// The module records of one anchor run of `network` (batch 8, one thread): each layer's forward
// `forward_ratio` x its isolated forward, its backward `backward_ratio` x its isolated backward.
std::vector<records::Measurement> module_records(const workloads::Network& network, const Calibration& calibration,
                                                 double forward_ratio, double backward_ratio) {
  std::vector<records::Measurement> out;
  for (const workloads::Layer& layer : network.layers) {
    const workloads::LayerCost cost = workloads::layer_cost(layer, 8);
    int forward_passes = 0, backward_passes = 0;
    for (const workloads::Pass pass : workloads::all_passes)
      if (cost.pass(pass).flops > 0 || cost.pass(pass).bytes > 0)
        ++(pass == workloads::Pass::forward ? forward_passes : backward_passes);
    for (const auto& [pass, passes, ratio] : {std::tuple{"forward", forward_passes, forward_ratio},
                                              std::tuple{"backward", backward_passes, backward_ratio}}) {
      if (passes == 0) continue;
      records::Measurement record;
      record.kind = records::MeasurementKind::module;
      record.backend = "torch";
      record.machine_fingerprint = records::fingerprint(calibration.machine);
      record.network = network.name;
      record.module = layer.name;
      record.descriptor = layer.descriptor;
      record.pass = pass;
      record.batch = 8;
      record.median_seconds = ratio * passes * isolated_pass_seconds;
      record.repetitions = 3;
      out.push_back(record);
    }
  }
  return out;
}

double band_log_width(const Prediction& prediction) {
  return std::log(prediction.images_per_second_high / prediction.images_per_second_low);
}

}  // namespace

TEST_CASE("module times fit one ratio per pass against the isolated micro-runs") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const Calibration calibration = every_layer_measured(*network);
  const auto ratios = fit_context_ratios(module_records(*network, calibration, 0.5, 1.5), calibration);
  REQUIRE(ratios.size() == 2);  // forward and backward, all layer classes pooled
  bool forward = false, backward = false;
  for (const ContextRatio& ratio : ratios) {
    INFO(ratio.pass);
    CHECK(ratio.ratio == Approx(ratio.pass == "forward" ? 0.5 : 1.5));
    CHECK(ratio.runs == 1);
    CHECK(ratio.log_sd == Approx(std::abs(std::log(ratio.ratio))));  // one run: as much as it corrects
    forward = forward || ratio.pass == "forward";
    backward = backward || ratio.pass == "backward";
  }
  CHECK(forward);
  CHECK(backward);

  // Another machine's, another backend's or another allocator's module times are not this one's.
  auto foreign = module_records(*network, calibration, 0.5, 1.5);
  for (auto& record : foreign) record.machine_fingerprint = "another";
  CHECK(fit_context_ratios(foreign, calibration).empty());
  foreign = module_records(*network, calibration, 0.5, 1.5);
  for (auto& record : foreign) record.allocator = "jemalloc";
  CHECK(fit_context_ratios(foreign, calibration).empty());

  // Two runs (resnet34 shares resnet18's layer shapes, all measured) of forward ratios 0.5 and 2:
  // their geometric mean 1, and the spread of the two logs, sqrt(2) ln 2.
  const auto resnet34 = workloads::build_network("resnet34");
  REQUIRE(resnet34);
  auto two_runs = module_records(*network, calibration, 0.5, 1.5);
  for (const auto& record : module_records(*resnet34, calibration, 2.0, 1.5)) two_runs.push_back(record);
  int pooled = 0;
  for (const ContextRatio& ratio : fit_context_ratios(two_runs, calibration)) {
    if (ratio.runs != 2) continue;
    ++pooled;
    INFO(ratio.pass);
    CHECK(ratio.ratio == Approx(ratio.pass == "forward" ? 1.0 : 1.5));
    CHECK(ratio.log_sd == Approx(ratio.pass == "forward" ? std::sqrt(2.0) * std::log(2.0) : 0).margin(1e-9));
  }
  CHECK(pooled == 2);
}

TEST_CASE("a run's ratio weighs its layers by their time") {
  // Every fourth record's forward at 3x its isolated time, the rest at 1x: the run's forward
  // ratio is their in-network total over their isolated total, not a mean of their ratios.
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const Calibration calibration = every_layer_measured(*network);
  auto records = module_records(*network, calibration, 1, 1);
  double in_network = 0, isolated = 0;
  for (std::size_t index = 0; index < records.size(); ++index) {
    if (records[index].pass != "forward") continue;
    isolated += records[index].median_seconds;
    if (index % 4 == 0) records[index].median_seconds *= 3;
    in_network += records[index].median_seconds;
  }
  for (const ContextRatio& ratio : fit_context_ratios(records, calibration))
    if (ratio.pass == "forward") CHECK(ratio.ratio == Approx(in_network / isolated));
}

TEST_CASE("the context correction moves an un-anchored network by the pass ratios and widens its band") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  Calibration calibration = every_layer_measured(*network);
  const auto before = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(8));
  REQUIRE(before);
  CHECK(before->context_corrected_share == 0);

  calibration.context_ratios = fit_context_ratios(module_records(*network, calibration, 0.5, 1.5), calibration);
  REQUIRE_FALSE(calibration.context_ratios.empty());
  const auto predictor = Predictor::from_calibration(calibration);
  REQUIRE(predictor);
  const auto after = predictor->predict(*network, one_thread_at(8));
  REQUIRE(after);
  CHECK(after->terms.forward == Approx(0.5 * before->terms.forward).epsilon(1e-9));
  CHECK(after->terms.backward_data + after->terms.backward_weights ==
        Approx(1.5 * (before->terms.backward_data + before->terms.backward_weights)).epsilon(1e-9));
  CHECK(after->context_corrected_share > 0.5);
  CHECK(band_log_width(*after) > band_log_width(*before) + 0.1);
  CHECK(after->confidence != "measured");  // a pass ratio is not a check of this step

  // Another network without an anchor of its own: the ratios apply too.
  const auto other = workloads::build_network("resnet34");
  REQUIRE(other);
  const auto other_before =
      Predictor::from_calibration(every_layer_measured(*network))->predict(*other, one_thread_at(8));
  const auto other_after = predictor->predict(*other, one_thread_at(8));
  REQUIRE(other_before);
  REQUIRE(other_after);
  CHECK(other_after->terms.forward < 0.75 * other_before->terms.forward);
  CHECK(other_after->context_corrected_share > 0);
  CHECK(band_log_width(*other_after) > band_log_width(*other_before));
}

TEST_CASE("a network trained here keeps its own anchor's correction over the pass ratios") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  Calibration calibration = every_layer_measured(*network);
  const auto uncorrected = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(8));
  REQUIRE(uncorrected);
  Anchor anchor;
  anchor.network = network->name;
  anchor.batch = 8;
  anchor.steps = 3;
  anchor.layers_forward_seconds = uncorrected->terms.forward;
  anchor.layers_backward_seconds = uncorrected->terms.backward_data + uncorrected->terms.backward_weights;
  anchor.forward_seconds = 1.2 * anchor.layers_forward_seconds;
  anchor.backward_seconds = anchor.layers_backward_seconds;
  anchor.iteration_seconds = anchor.forward_seconds + anchor.backward_seconds + 2 * uncorrected->terms.optimizer;
  anchor.iteration_coefficient_of_variation = 0.03;
  calibration.anchors = {anchor};
  calibration.context_ratios = fit_context_ratios(module_records(*network, calibration, 0.5, 1.5), calibration);
  const auto predicted = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(8));
  REQUIRE(predicted);
  CHECK(predicted->terms.forward == Approx(1.2 * uncorrected->terms.forward).epsilon(1e-9));
  CHECK(predicted->context_corrected_share == 0);
  CHECK(predicted->confidence == "measured");
  // At another batch the anchor is carried, still its whole-network ratio (it holds the glue
  // between layers no module timer sees): no pass ratio is used.
  const auto carried = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(16));
  REQUIRE(carried);
  CHECK(carried->context_corrected_share == 0);
  CHECK(carried->anchor.used);
  // A network never trained here takes the pass ratios.
  const auto other = workloads::build_network("resnet34");
  REQUIRE(other);
  const auto untrained = Predictor::from_calibration(calibration)->predict(*other, one_thread_at(8));
  REQUIRE(untrained);
  CHECK(untrained->context_corrected_share > 0);
}

TEST_CASE("a calibration without module records has no ratios, and the file member round-trips and is checked") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  Calibration calibration = every_layer_measured(*network);
  CHECK(calibration.context_ratios.empty());  // fitted from micro-runs only
  CHECK(to_json_text(calibration).find("context_ratios") == std::string::npos);

  calibration.context_ratios = fit_context_ratios(module_records(*network, calibration, 0.5, 1.5), calibration);
  const std::string text = to_json_text(calibration);
  const auto loaded = calibration_from_json_text(text, "c");
  REQUIRE(loaded);
  REQUIRE(loaded->context_ratios.size() == calibration.context_ratios.size());
  CHECK(loaded->context_ratios.front().ratio == Approx(calibration.context_ratios.front().ratio));
  CHECK(to_json_text(*loaded) == text);

  for (const auto& [from, to] :
       {std::pair{"\"pass\": \"forward\"", "\"pass\": \"backward_data\""},
        std::pair{"\"ratio\": 0.5", "\"ratio\": -0.5"}, std::pair{"\"ratio\": 0.5", "\"ratio\": 0"},
        std::pair{"\"ratio\": 0.5", "\"ratio\": \"x\""}}) {
    std::string bad = text;
    const auto at = bad.find(from);
    REQUIRE(at != std::string::npos);
    bad.replace(at, std::string(from).size(), to);
    CHECK_FALSE(calibration_from_json_text(bad, "c"));
  }
  // A per-class ratio an earlier dnntune wrote is left out, not misread as the pass's.
  std::string older = text;
  const auto first = older.find("\"pass\": \"forward\"");
  REQUIRE(first != std::string::npos);
  older.insert(first, "\"class\": \"conv_spatial\", ");
  const auto read_older = calibration_from_json_text(older, "c");
  REQUIRE(read_older);
  CHECK(read_older->context_ratios.size() == calibration.context_ratios.size() - 1);
}

TEST_CASE("context ratios are kept per thread count and carried to the nearest one, as a cliff is") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const Calibration calibration = every_layer_measured(*network);
  auto records = module_records(*network, calibration, 20, 20);  // a one-thread cliff: 20x the micro-runs
  for (auto record : module_records(*network, calibration, 1, 1)) {
    record.threads = 2;
    records.push_back(record);
  }
  const auto ratios = fit_context_ratios(records, calibration);
  const auto at = [&](int threads) {
    for (const ContextRatio& ratio : ratios)
      if (ratio.threads == threads) return &ratio;
    return static_cast<const ContextRatio*>(nullptr);
  };
  REQUIRE(at(1));
  REQUIRE(at(2));
  CHECK(at(1)->ratio == Approx(20));
  for (const workloads::Pass pass : {workloads::Pass::forward, workloads::Pass::backward_data}) {
    CHECK(find_context_ratio(ratios, pass, 1)->threads == 1);
    CHECK(find_context_ratio(ratios, pass, 2)->threads == 2);
    CHECK(find_context_ratio(ratios, pass, 8)->threads == 2);
  }
}
