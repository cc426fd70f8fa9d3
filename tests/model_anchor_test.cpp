// tests/model_anchor_test.cpp — anchors (Calibration::anchors): a prediction is labelled
// "measured" only when a real step of that network, batch and setting checked it; an anchor's
// correction reproduces the real step within the band, and is carried to other batches with a
// wider band; its measured optimizer replaces the model's streaming terms; a calibration file
// written before anchors (or before their optimizer) loads; a measured band holds how far glibc's
// defaults move a run; repeated runs of a setting are pooled into one anchor whose band holds them,
// and a setting trained once gets the spread the node's repeated settings showed; nine runs with
// a slow process take their median, and keep the slow one's spread in the band; a run by PyTorch
// from Python joins the median only as the third of three, the spread always.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/statistics.hpp"
#include "model/allocation.hpp"
#include "model/anchors.hpp"
#include "model/calibration.hpp"
#include "model/fit.hpp"
#include "model/layer_class.hpp"
#include "model/predictor.hpp"
#include "workloads/costs.hpp"
#include "workloads/zoo.hpp"
#include "tests/model_fixtures.hpp"

using namespace dnntune;
using namespace dnntune::model;

using test::every_layer_measured;
using test::one_thread_at;

namespace {

// One run of `network` at `batch`, 1x1, as the trainer records it: its forward, backward and
// iteration medians (0.4, 0.5 and 1 x `iteration` seconds); `trainer` names its runner.
void add_anchor_run(std::vector<records::Measurement>& runs, const Calibration& calibration, const std::string& network,
                    std::int64_t batch, double iteration, const std::string& trainer = records::kCppTrainer) {
  for (const auto& [pass, seconds] : {std::pair<const char*, double>{"forward", 0.4 * iteration},
                                      {"backward", 0.5 * iteration},
                                      {"iteration", iteration}}) {
    records::Measurement record;
    record.kind = records::MeasurementKind::network;
    record.backend = calibration.backend;
    record.machine_fingerprint = records::fingerprint(calibration.machine);
    record.network = network;
    record.pass = pass;
    record.batch = batch;
    record.median_seconds = seconds;
    record.coefficient_of_variation = 0.01;
    record.repetitions = 3;
    record.trainer = trainer;
    runs.push_back(record);
  }
}

// resnet18 with every layer measured, and its modelled step at batch 8, 1x1, before any anchor.
struct ResNet18AtBatch8 {
  std::optional<workloads::Network> network;
  Calibration calibration;
  double base = 0;
};

ResNet18AtBatch8 resnet18_at_batch_8() {
  ResNet18AtBatch8 resnet18;
  auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  resnet18.network = std::move(*network);
  resnet18.calibration = every_layer_measured(*resnet18.network);
  const auto uncorrected =
      Predictor::from_calibration(resnet18.calibration)->predict(*resnet18.network, one_thread_at(8));
  REQUIRE(uncorrected);
  resnet18.base = uncorrected->iteration_seconds;
  return resnet18;
}

}  // namespace

TEST_CASE("without an anchor no prediction is labelled measured, however many layers were") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const auto predictor = Predictor::from_calibration(every_layer_measured(*network));
  REQUIRE(predictor);
  const auto prediction = predictor->predict(*network, one_thread_at(8));
  REQUIRE(prediction);
  CHECK(prediction->measured_fraction > 0.99);
  CHECK(prediction->confidence == "partly measured");
  CHECK_FALSE(prediction->anchor.used);
}

TEST_CASE("an anchor corrects its own step into the band, and is carried to another batch") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  Calibration calibration = every_layer_measured(*network);
  const auto uncorrected = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(8));
  REQUIRE(uncorrected);
  // The real step: forward 1.5x and backward 0.8x what the layers sum to, the optimizer as is.
  Anchor anchor;
  anchor.network = network->name;
  anchor.batch = 8;
  anchor.steps = 3;
  anchor.layers_forward_seconds = uncorrected->terms.forward;
  anchor.layers_backward_seconds = uncorrected->terms.backward_data + uncorrected->terms.backward_weights;
  anchor.forward_seconds = 1.5 * anchor.layers_forward_seconds;
  anchor.backward_seconds = 0.8 * anchor.layers_backward_seconds;
  anchor.iteration_seconds = anchor.forward_seconds + anchor.backward_seconds + 2 * uncorrected->terms.optimizer;
  anchor.iteration_coefficient_of_variation = 0.03;
  calibration.anchors = {anchor};
  const auto predictor = Predictor::from_calibration(calibration);
  REQUIRE(predictor);

  const auto checked = predictor->predict(*network, one_thread_at(8));
  REQUIRE(checked);
  CHECK(checked->confidence == "measured");
  CHECK(checked->anchor.exact);
  CHECK(checked->terms.forward == Approx(anchor.forward_seconds));
  CHECK(checked->terms.backward_data + checked->terms.backward_weights == Approx(anchor.backward_seconds));
  const double measured = 8 / anchor.iteration_seconds;
  CHECK(checked->images_per_second_low <= measured);
  CHECK(checked->images_per_second_high >= measured);

  const auto carried = predictor->predict(*network, one_thread_at(16));
  const auto carried_without =
      Predictor::from_calibration(every_layer_measured(*network))->predict(*network, one_thread_at(16));
  REQUIRE(carried);
  REQUIRE(carried_without);
  CHECK(carried->confidence != "measured");
  CHECK(carried->anchor.used);
  CHECK_FALSE(carried->anchor.exact);
  CHECK(carried->terms.forward == Approx(1.5 * carried_without->terms.forward));
  CHECK(carried->images_per_second_high / carried->images_per_second_low >
        carried_without->images_per_second_high / carried_without->images_per_second_low);
}

TEST_CASE("a measured band holds the allocation term's gap between glibc's defaults and glibc keeping its memory") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  Calibration calibration = every_layer_measured(*network);
  calibration.anchors = {test::anchor_at(calibration, *network, one_thread_at(8), 1.0)};
  const double step = calibration.anchors.front().iteration_seconds;
  // A default fitted at non-reuse 0.5 from one anchor: a fault cost that makes its allocation
  // term 0.6 of the step puts 0.3 of it between the default and glibc-tuned (0).
  const double fresh = fresh_bytes_per_step(*network, 8);
  AllocationModel faulting;
  faulting.fault_ns_per_page = 0.6 * step / fresh * 4096 * 1e9;
  faulting.fault_ns_per_page_all_cores = faulting.fault_ns_per_page;
  AllocationModel prior_only = faulting;  // the same fault cost, the default at its prior: no widening
  faulting.variants = {{"default", 0.5, 0.4, 0.6, 1}, {"glibc-tuned", 0, 0, 0, 1}};
  AllocationModel free_faults = faulting;  // no fault cost: no gap
  free_faults.fault_ns_per_page = free_faults.fault_ns_per_page_all_cores = 0;
  const auto band_log_width = [&](const AllocationModel& allocation) {
    Calibration with = calibration;
    with.allocation = allocation;
    const auto predicted = Predictor::from_calibration(with)->predict(*network, one_thread_at(8));
    REQUIRE(predicted);
    CHECK(predicted->confidence == "measured");
    return std::log(predicted->images_per_second_high / predicted->images_per_second_low);
  };
  // Uniform over a gap of 0.3 of the step: a log sd of 0.3 / sqrt(3), for the anchor's run and the
  // new one; a 90% band of at least 2 x 1.645 x sqrt(2) x that.
  const double gap_width = 2 * 1.645 * std::sqrt(2.0) * 0.3 / std::sqrt(3.0);
  CHECK(band_log_width(faulting) >= 0.99 * gap_width);
  CHECK(band_log_width(free_faults) < 0.5 * gap_width);
  CHECK(band_log_width(prior_only) == Approx(band_log_width(free_faults)));
}

TEST_CASE("an anchor's measured optimizer replaces the model's streaming terms in its own step") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  Calibration calibration = every_layer_measured(*network);
  const auto uncorrected = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(8));
  REQUIRE(uncorrected);
  const double streaming = uncorrected->terms.gradient_sums + uncorrected->terms.optimizer;
  REQUIRE(streaming > 0);
  // The real step's passes as the layers sum to, its optimizer a tenth of what the model gives
  // the streaming terms.
  Anchor anchor = test::anchor_at(calibration, *network, one_thread_at(8), 1);
  anchor.optimizer_seconds = 0.1 * streaming;
  anchor.streaming_seconds = streaming;
  anchor.iteration_seconds = anchor.forward_seconds + anchor.backward_seconds + anchor.optimizer_seconds;
  calibration.anchors = {anchor};
  const auto checked = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(8));
  REQUIRE(checked);
  CHECK(checked->confidence == "measured");
  CHECK(checked->terms.gradient_sums + checked->terms.optimizer == Approx(anchor.optimizer_seconds));
  CHECK(checked->iteration_seconds == Approx(anchor.iteration_seconds).epsilon(0.01));
  // Carried to another batch, the streaming terms take the same ratio.
  const auto carried = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(16));
  const auto carried_without =
      Predictor::from_calibration(every_layer_measured(*network))->predict(*network, one_thread_at(16));
  REQUIRE(carried);
  REQUIRE(carried_without);
  CHECK(carried->terms.optimizer == Approx(0.1 * carried_without->terms.optimizer));
  // Without a recorded optimizer (a calibration written before anchors kept it) they stay the model's.
  calibration.anchors[0].optimizer_seconds = 0;
  const auto modelled = Predictor::from_calibration(calibration)->predict(*network, one_thread_at(8));
  REQUIRE(modelled);
  CHECK(modelled->terms.optimizer == Approx(uncorrected->terms.optimizer));
}

TEST_CASE("a calibration file without anchors loads, and one with anchors keeps them") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  Calibration calibration = every_layer_measured(*network);
  Anchor anchor;
  anchor.network = "resnet18";
  anchor.batch = 8;
  anchor.threads = 2;
  anchor.steps = 3;
  anchor.forward_seconds = 0.2;
  anchor.backward_seconds = 0.4;
  anchor.iteration_seconds = 0.65;
  anchor.layers_forward_seconds = 0.3;
  anchor.layers_backward_seconds = 0.35;
  anchor.optimizer_seconds = 0.05;
  anchor.streaming_seconds = 0.2;
  anchor.runs = 2;
  anchor.between_runs_log_sd = 0.1;
  calibration.anchors = {anchor};
  auto document = nlohmann::json::parse(to_json_text(calibration));
  const auto kept = calibration_from_json_text(document.dump(), "with.json");
  REQUIRE(kept);
  REQUIRE(kept->anchors.size() == 1);
  CHECK(kept->anchors[0].network == "resnet18");
  CHECK(kept->anchors[0].forward_ratio() == Approx(0.2 / 0.3));
  CHECK(kept->anchors[0].streaming_ratio() == Approx(0.25));
  CHECK(kept->anchors[0].runs == 2);
  CHECK(kept->anchors[0].between_runs_log_sd == Approx(0.1));
  // An anchor written before the optimizer was kept, or before runs were pooled: the streaming
  // terms stay the model's, and it is one run.
  nlohmann::json older = document;
  for (const char* field : {"optimizer_seconds", "streaming_seconds", "runs", "between_runs_log_sd"})
    older["anchors"][0].erase(field);
  const auto before = calibration_from_json_text(older.dump(), "older.json");
  REQUIRE(before);
  CHECK(before->anchors[0].streaming_ratio() == 1);
  CHECK(before->anchors[0].runs == 1);
  CHECK(before->anchors[0].between_runs_log_sd == 0);
  // Runs or a spread that cannot be are refused with the file's name.
  for (const auto& [field, value] : {std::pair<const char*, double>{"runs", 0}, {"between_runs_log_sd", -0.1}}) {
    nlohmann::json bad = document;
    bad["anchors"][0][field] = value;
    const auto refused = calibration_from_json_text(bad.dump(), "bad.json");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("bad.json") != std::string::npos);
  }
  document.erase("anchors");
  const auto old = calibration_from_json_text(document.dump(), "old.json");
  REQUIRE(old);
  CHECK(old->anchors.empty());
}

TEST_CASE(
    "an anchor pools every run of its setting, its band holds each of them, and a setting run once gets their spread") {
  const ResNet18AtBatch8 resnet18 = resnet18_at_batch_8();
  const auto& network = resnet18.network;
  const Calibration& calibration = resnet18.calibration;
  const double base = resnet18.base;
  // Three runs of resnet18 b8 1x1 whose steps took 1.0, 1.6 and 1.2 times the model's step (glibc
  // faulting in a different share of each run's buffers), and one run of b16.
  std::vector<records::Measurement> runs;
  const auto add_run = [&](std::int64_t batch, double iteration) {
    add_anchor_run(runs, calibration, network->name, batch, iteration);
  };
  const std::vector<double> factors{1.0, 1.6, 1.2};
  for (double factor : factors) add_run(8, factor * base);
  add_run(16, 2 * base);
  const auto anchors = fit_anchors(runs, calibration);
  REQUIRE(anchors.size() == 2);
  const Anchor& pooled = anchors[0].batch == 8 ? anchors[0] : anchors[1];
  const Anchor& single = anchors[0].batch == 8 ? anchors[1] : anchors[0];
  CHECK(pooled.runs == 3);
  CHECK(pooled.steps == 9);
  CHECK(pooled.iteration_seconds == Approx(1.2 * base));  // the median run
  CHECK(pooled.forward_seconds == Approx(0.4 * 1.2 * base));
  const double mean = (std::log(1.0) + std::log(1.6) + std::log(1.2)) / 3;
  double variance = 0;
  for (double factor : factors) variance += std::pow(std::log(factor) - mean, 2) / 2;
  CHECK(pooled.between_runs_log_sd == Approx(std::sqrt(variance)));
  CHECK(single.runs == 1);
  CHECK(single.between_runs_log_sd == 0);

  Calibration anchored = calibration;
  anchored.anchors = anchors;
  const auto prediction = Predictor::from_calibration(anchored)->predict(*network, one_thread_at(8));
  REQUIRE(prediction);
  CHECK(prediction->confidence == "measured");
  CHECK(prediction->anchor.anchor.runs == 3);
  for (double factor : factors) {
    INFO("run at " << factor << "x the model's step");
    const double measured = 8 / (factor * base);
    CHECK(prediction->images_per_second_low <= measured);
    CHECK(prediction->images_per_second_high >= measured);
  }

  // b16 ran once, in one process: the next process of it moves as far as b8's processes did (one
  // log sd slower here), which its band holds only by the spread b8's runs showed.
  CHECK(between_processes_log_sd(anchors, network->name) == Approx(pooled.between_runs_log_sd));
  const double slower_process = 16 / (2 * base * std::exp(pooled.between_runs_log_sd));
  const auto once = Predictor::from_calibration(anchored)->predict(*network, one_thread_at(16));
  Calibration alone = calibration;
  alone.anchors = {single};
  const auto once_alone = Predictor::from_calibration(alone)->predict(*network, one_thread_at(16));
  REQUIRE(once);
  REQUIRE(once_alone);
  CHECK(once->confidence == "measured");
  CHECK(once->images_per_second == Approx(once_alone->images_per_second));
  CHECK(once_alone->images_per_second_low > slower_process);  // its own run alone shows no such spread
  CHECK(once->images_per_second_low <= slower_process);
  CHECK(once->images_per_second_high >= 16 / (2 * base));
}

TEST_CASE("a setting trained nine times: the median drops its slow process, the band keeps its spread") {
  const ResNet18AtBatch8 resnet18 = resnet18_at_batch_8();
  const auto& [network, calibration, base] = resnet18;  // (no lambda below captures them)
  std::vector<records::Measurement> runs;
  // Nine runs within 3% of each other but one 1.8x slower (a process on glibc's slow mode), as
  // resnet18 b8 1x2 ran in a first run's close call on a 2-core VM.
  const std::vector<double> factors{1.00, 1.01, 0.99, 1.02, 1.80, 0.98, 1.03, 1.00, 1.01};
  for (double factor : factors) add_anchor_run(runs, calibration, network->name, 8, factor * base);
  const auto anchors = fit_anchors(runs, calibration);
  REQUIRE(anchors.size() == 1);
  CHECK(anchors[0].runs == 9);
  CHECK(anchors[0].iteration_seconds == Approx(1.01 * base));  // the median run, not pulled by the slow one
  std::vector<double> logs;
  for (double factor : factors) logs.push_back(std::log(factor));
  CHECK(anchors[0].between_runs_log_sd == Approx(sample_standard_deviation(logs)));

  Calibration anchored = calibration;
  anchored.anchors = anchors;
  const auto prediction = Predictor::from_calibration(anchored)->predict(*network, one_thread_at(8));
  REQUIRE(prediction);
  CHECK(prediction->confidence == "measured");
  CHECK(prediction->run_spread_log_sd == Approx(anchors[0].between_runs_log_sd));
  // The next process may be a slow one: the band reaches well below the eight (a run 1.5x slower).
  CHECK(prediction->images_per_second_low < 8 / (1.5 * base));
  for (double factor : factors) {
    if (factor > 1.5) continue;
    INFO("run at " << factor << "x the model's step");
    CHECK(prediction->images_per_second_low <= 8 / (factor * base));
    CHECK(prediction->images_per_second_high >= 8 / (factor * base));
  }
}

TEST_CASE("a Python run joins a setting's median only as the third of three runs, its spread always") {
  const ResNet18AtBatch8 resnet18 = resnet18_at_batch_8();
  const auto& [network, calibration, base] = resnet18;
  const std::string python = records::kPythonTrainer;
  // One C++ run and one 20% faster by PyTorch (resnet50 b16 at 1x2 on a 2-core VM: 3.59 and
  // 2.87 s): the setting stays at its C++ step, as every setting trained once by the C++ trainer.
  std::vector<records::Measurement> runs;
  add_anchor_run(runs, calibration, network->name, 8, base);
  add_anchor_run(runs, calibration, network->name, 8, 0.8 * base, python);
  auto anchors = fit_anchors(runs, calibration);
  REQUIRE(anchors.size() == 1);
  CHECK(anchors[0].runs == 2);
  CHECK(anchors[0].iteration_seconds == Approx(base));
  CHECK(anchors[0].forward_seconds == Approx(0.4 * base));
  CHECK(anchors[0].between_runs_log_sd == Approx(sample_standard_deviation({0.0, std::log(0.8)})));
  // A second C++ run in glibc's slow mode: the Python run is the third, and the median drops it.
  add_anchor_run(runs, calibration, network->name, 8, 1.6 * base);
  anchors = fit_anchors(runs, calibration);
  REQUIRE(anchors.size() == 1);
  CHECK(anchors[0].runs == 3);
  CHECK(anchors[0].iteration_seconds == Approx(base));
  CHECK(anchors[0].between_runs_log_sd == Approx(sample_standard_deviation({0.0, std::log(0.8), std::log(1.6)})));
  // Runs by PyTorch alone (no C++ run to compare with) still make an anchor.
  std::vector<records::Measurement> python_only;
  add_anchor_run(python_only, calibration, network->name, 8, 0.8 * base, python);
  anchors = fit_anchors(python_only, calibration);
  REQUIRE(anchors.size() == 1);
  CHECK(anchors[0].iteration_seconds == Approx(0.8 * base));
}

TEST_CASE("anchors and measured layers outside physical bounds are refused, naming the anchor and the field") {
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  Calibration calibration = every_layer_measured(*network);
  Anchor anchor;
  anchor.network = "resnet18";
  anchor.batch = 8;
  anchor.threads = 2;
  anchor.steps = 3;
  anchor.forward_seconds = 0.2;
  anchor.backward_seconds = 0.4;
  anchor.iteration_seconds = 0.65;
  anchor.layers_forward_seconds = 0.3;
  anchor.layers_backward_seconds = 0.35;
  calibration.anchors = {anchor};
  const nlohmann::json document = nlohmann::json::parse(to_json_text(calibration));
  REQUIRE(calibration_from_json_text(document.dump(), "cal.json"));
  // Each printed an answer before: forward 0 dropped the forward pass ("4.0 images/s measured"
  // instead of 2.5), batch 0 "+-nan%", threads -2 "1x-2", processes 1e9 2450127157.7 images/s.
  const std::vector<std::tuple<const char*, nlohmann::json, const char*>> cases = {
      {"forward_seconds", 0, "(/anchors/0) forward_seconds must be a finite number in (0, 1e6]"},
      {"iteration_seconds", 1e300, "iteration_seconds"},
      {"batch", 0, "(/anchors/0) batch must be 1..65536, not 0"},
      {"threads", -2, "(/anchors/0) threads must be 1..4096, not -2"},
      {"processes", 1e9, "processes) must be an integer"},
      {"processes", 1000000000, "(/anchors/0) processes must be 1..4096 (on the node)"},
      {"threads", 2.5, "threads) must be an integer"},
      {"steps", 0, "steps must be at least 1"},
      {"layers_backward_seconds", -1, "layers_backward_seconds"},
      {"iteration_coefficient_of_variation", -0.1, "iteration_coefficient_of_variation"}};
  for (const auto& [field, value, message] : cases) {
    nlohmann::json bad = document;
    bad["anchors"][0][field] = value;
    const auto refused = calibration_from_json_text(bad.dump(), "cal.json");
    INFO(field << " = " << value.dump());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::bad_input);
    CHECK(refused.error().message.find("cal.json: ") == 0);
    CHECK(refused.error().message.find(message) != std::string::npos);
  }
  // A measured layer's repetitions divide its noise: 0 gave an infinite band.
  nlohmann::json bad = document;
  auto& first = bad["measured_layers"].begin().value()[0];
  first[5] = 0;
  CHECK_FALSE(calibration_from_json_text(bad.dump(), "cal.json"));
  first[5] = 3;
  first[0] = 5000;
  CHECK_FALSE(calibration_from_json_text(bad.dump(), "cal.json"));
  first[0] = 1.5;
  CHECK_FALSE(calibration_from_json_text(bad.dump(), "cal.json"));
}
