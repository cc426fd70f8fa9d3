// tests/model_stragglers_test.cpp — the scaling terms the emulated cluster settled: the slowest of
// N nodes (a measured step spread, the expected maximum of N normal draws) in synchronous steps
// only, and the inter-node ring's per-step cost fitted where training communicates (gradient-sized
// messages).
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "model/communication.hpp"
#include "model/fit.hpp"
#include "model/predictor.hpp"
#include "model/stragglers.hpp"
#include "workloads/zoo.hpp"
#include "tests/model_fixtures.hpp"

using namespace dnntune;
using namespace dnntune::model;

namespace {

Anchor anchor_of(const std::string& network, int steps, double coefficient_of_variation) {
  Anchor anchor;
  anchor.network = network;
  anchor.batch = 8;
  anchor.steps = steps;
  anchor.iteration_seconds = 1;
  anchor.iteration_coefficient_of_variation = coefficient_of_variation;
  return anchor;
}

// The test machine's calibration, fitted to its noiseless synthetic records without anchors, once
// for every test case that predicts from it.
const Calibration& synthetic_calibration() {
  static const Calibration fitted = [] {
    const FitOptions options = test::fixture_fit_options(2);
    auto calibration = fit_calibration(test::synthetic_records(test::test_machine(), 0.0, 5), test::test_machine(),
                                       "torch", {"synthetic"}, options);
    if (!calibration) throw std::runtime_error("the synthetic calibration: " + calibration.error().message);
    return std::move(*calibration);
  }();
  return fitted;
}

}  // namespace

TEST_CASE("the expected maximum of N standard normals, against its exact values") {
  // Exact values by numerical integration of x n phi(x) Phi(x)^(n-1).
  CHECK(expected_maximum_of_standard_normals(1) == 0);
  CHECK(expected_maximum_of_standard_normals(0) == 0);
  CHECK(expected_maximum_of_standard_normals(2) == Approx(0.5642).margin(0.03));
  CHECK(expected_maximum_of_standard_normals(4) == Approx(1.0294).margin(0.03));
  CHECK(expected_maximum_of_standard_normals(16) == Approx(1.7660).margin(0.03));
  CHECK(expected_maximum_of_standard_normals(128) == Approx(2.5946).margin(0.03));
  CHECK(expected_maximum_of_standard_normals(1024) == Approx(3.2482).margin(0.03));
  // It grows with N, and below sqrt(2 ln N), the bound it approaches.
  for (int nodes = 2; nodes < 4096; nodes *= 2) {
    CHECK(expected_maximum_of_standard_normals(2 * nodes) > expected_maximum_of_standard_normals(nodes));
    CHECK(expected_maximum_of_standard_normals(nodes) < std::sqrt(2 * std::log(nodes)));
  }
}

TEST_CASE("the step spread comes from the network's own anchors, else the node's, else none") {
  const std::vector<Anchor> anchors = {anchor_of("resnet18", 3, 0.02), anchor_of("resnet18", 2, 0.04),
                                       anchor_of("resnet18", 3, 0.10), anchor_of("resnet50", 1, 0.5),
                                       anchor_of("resnet50", 3, 0.06)};
  const StepSpread own = step_spread(anchors, "resnet18");
  CHECK(own.coefficient_of_variation == Approx(0.04));  // the median of three
  CHECK(own.anchors == 3);
  CHECK(own.source.find("of resnet18") != std::string::npos);
  // resnet50's one-step anchor has no spread: only its 3-step one counts.
  CHECK(step_spread(anchors, "resnet50").coefficient_of_variation == Approx(0.06));
  const StepSpread other = step_spread(anchors, "vgg16");
  CHECK(other.coefficient_of_variation == Approx(0.05));  // median of 0.02, 0.04, 0.06, 0.10
  CHECK(other.source.find("other networks") != std::string::npos);
  const StepSpread none = step_spread({anchor_of("resnet18", 1, 0.3)}, "resnet18");
  CHECK(none.coefficient_of_variation == 0);
  CHECK(none.source.find("not measured") != std::string::npos);
  CHECK(step_spread({anchor_of("resnet18", 3, std::nan(""))}, "resnet18").coefficient_of_variation == 0);

  CHECK(straggler_seconds(2.0, own, 1) == 0);
  CHECK(straggler_seconds(2.0, own, 16) == Approx(2.0 * 0.04 * expected_maximum_of_standard_normals(16)));
  CHECK(straggler_seconds(2.0, none, 16) == 0);
}

TEST_CASE("stragglers slow synchronous steps across nodes, not one node nor asynchronous workers") {
  Calibration calibration = synthetic_calibration();
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const auto without = Predictor::from_calibration(calibration);
  calibration.anchors = {anchor_of("resnet18", 3, 0.03)};
  const auto with = Predictor::from_calibration(calibration);
  REQUIRE(without);
  REQUIRE(with);
  TrainingConfiguration configuration;
  configuration.batch_per_process = 8;
  configuration.fabric = "edr";

  configuration.nodes = 1;
  const auto one_node = with->predict(*network, configuration);
  REQUIRE(one_node);
  CHECK(one_node->terms.stragglers == 0);

  configuration.nodes = 64;
  const auto spread_unknown = without->predict(*network, configuration);
  const auto spread_measured = with->predict(*network, configuration);
  REQUIRE(spread_unknown);
  REQUIRE(spread_measured);
  CHECK(spread_unknown->terms.stragglers == 0);
  CHECK(spread_unknown->step_spread_source.find("not measured") != std::string::npos);
  const IterationTerms& terms = spread_measured->terms;
  const double compute =
      terms.forward + terms.backward_data + terms.backward_weights + terms.gradient_sums + terms.optimizer;
  CHECK(terms.stragglers == Approx(compute * 0.03 * expected_maximum_of_standard_normals(64)));
  CHECK(spread_measured->iteration_seconds ==
        Approx(compute + terms.exposed_communication + terms.communication_cpu + terms.stragglers));
  // The one-node baseline has no straggler to wait for: efficiency drops by about the term's share.
  CHECK(spread_measured->scaling_efficiency < spread_unknown->scaling_efficiency);
  CHECK(spread_measured->scaling_efficiency ==
        Approx(spread_unknown->scaling_efficiency * spread_unknown->iteration_seconds /
               spread_measured->iteration_seconds));

  configuration.scheme = CommunicationScheme::parameter_server;
  configuration.parameter_servers = 1;
  configuration.asynchronous = false;
  const auto synchronous = with->predict(*network, configuration);
  REQUIRE(synchronous);
  CHECK(synchronous->terms.stragglers == Approx(terms.stragglers));
  configuration.asynchronous = true;
  const auto asynchronous = with->predict(*network, configuration);
  REQUIRE(asynchronous);
  CHECK(asynchronous->terms.stragglers == 0);  // no barrier: nobody waits for the slowest
  CHECK(asynchronous->step_spread_source.empty());
  CHECK(synchronous->step_spread_source.find("anchor of resnet18") != std::string::npos);
}

TEST_CASE("the ring's per-step cost is fitted from gradient-sized messages, where training pays it") {
  // Over TCP a small message's step costs 100 us, a gradient-sized one's 8 ms (the transfer's
  // ramp and handshake after each step's wait): 4 nodes, 12 MB/s.
  std::vector<records::Measurement> records;
  for (double bytes : {1e3, 1e4, 1e5, 1.5e6, 3e6, 6e6}) {
    records::Measurement record;
    record.kind = records::MeasurementKind::communication;
    record.descriptor = "allreduce";
    record.processes = record.nodes = 4;
    record.message_bytes = static_cast<std::int64_t>(bytes);
    const double per_step = bytes >= 1 << 20 ? 8e-3 : 100e-6;
    record.median_seconds = 6 * per_step + 1.5 * bytes / 12e6;
    records.push_back(record);
  }
  const auto link = fit_allreduce_link(records, true);
  REQUIRE(link);
  CHECK(link->latency_seconds == Approx(8e-3).epsilon(1e-3));
  CHECK(link->bandwidth_gbs == Approx(0.012).epsilon(1e-3));
  CHECK(link->source.find("latency from messages of >= 1 MiB") != std::string::npos);
  // With a 2-node ring the 4-node fit predicts 2 steps of 8 ms on top of the volume.
  const CommunicationLinks links{default_intra_node_link(), *link};
  CHECK(allreduce_seconds(4.2e6, 1, 2, links) == Approx(2 * 8e-3 + 4.2e6 / 12e6).epsilon(1e-3));

  // Within a node the same records keep the latency of all sizes: shared memory has no handshake.
  std::vector<records::Measurement> within_node = records;
  for (auto& record : within_node) record.nodes = 1;
  const auto shared_memory = fit_allreduce_link(within_node, false);
  REQUIRE(shared_memory);
  CHECK(shared_memory->latency_seconds < 8e-3);
  CHECK(shared_memory->source.find("latency from all sizes") != std::string::npos);

  // Sweeps over 2, 3 and 4 nodes (as the emulated cluster's benchmark runs them) are fitted
  // together: the per-step cost is told apart from the bandwidth by the ring's step count.
  std::vector<records::Measurement> over_node_counts;
  for (int nodes : {2, 3, 4})
    for (double bytes : {1e3, 1.5e6, 6e6}) {
      records::Measurement record = records.front();
      record.processes = record.nodes = nodes;
      record.message_bytes = static_cast<std::int64_t>(bytes);
      const double per_step = bytes >= 1 << 20 ? 8e-3 : 100e-6;
      record.median_seconds = 2 * (nodes - 1) * per_step + 2.0 * (nodes - 1) / nodes * bytes / 12e6;
      over_node_counts.push_back(record);
    }
  const auto together = fit_allreduce_link(over_node_counts, true);
  REQUIRE(together);
  CHECK(together->latency_seconds == Approx(8e-3).epsilon(1e-3));
  CHECK(together->bandwidth_gbs == Approx(0.012).epsilon(1e-3));
}

TEST_CASE("a spec node waits for the slowest of N at the published spread of HPC nodes, with its range") {
  // Acun et al., ICS 2016: up to 16% between the processors of a Turbo Boost system, under 1%
  // without; read as standard deviations over thousands of processors, 2.5% and 0.15%.
  const StepSpread prior = spec_node_step_spread();
  CHECK(prior.coefficient_of_variation_low == Approx(0.0015));
  CHECK(prior.coefficient_of_variation_high == Approx(0.025));
  CHECK(prior.coefficient_of_variation == Approx(std::sqrt(0.0015 * 0.025)).epsilon(0.03));
  CHECK(prior.source.find("Acun") != std::string::npos);
  CHECK(prior.source.find("Hoefler") != std::string::npos);

  const Calibration& calibration = synthetic_calibration();
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const auto spec = Predictor::from_spec(test::test_machine(), calibration);
  const auto measured = Predictor::from_calibration(calibration);  // no anchors: no spread
  REQUIRE(spec);
  REQUIRE(measured);
  TrainingConfiguration configuration;
  configuration.batch_per_process = 8;
  configuration.fabric = "edr";
  configuration.nodes = 128;
  const auto wide = spec->predict(*network, configuration);
  REQUIRE(wide);
  const IterationTerms& terms = wide->terms;
  const double compute =
      terms.forward + terms.backward_data + terms.backward_weights + terms.gradient_sums + terms.optimizer;
  CHECK(terms.stragglers ==
        Approx(compute * prior.coefficient_of_variation * expected_maximum_of_standard_normals(128)));
  CHECK(wide->step_spread_source.find("spec node") != std::string::npos);
  const auto unmeasured = measured->predict(*network, configuration);
  REQUIRE(unmeasured);
  CHECK(unmeasured->terms.stragglers == 0);
  // The prior's range widens the band beyond one node's (whose other terms it shares).
  configuration.nodes = 1;
  const auto one = spec->predict(*network, configuration);
  REQUIRE(one);
  CHECK(std::log(wide->images_per_second_high / wide->images_per_second_low) >
        std::log(one->images_per_second_high / one->images_per_second_low) + 1e-3);
}
