// tests/calibrate_backend_test.cpp — every layer backend computes what the naive reference says on
// one small layer of each kind and pass, and whole-network runs execute.
#include <catch2/catch.hpp>

#include "calibrate/layer_backend.hpp"
#include "calibrate/layer_operands.hpp"
#include "calibrate/naive_reference.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using namespace dnntune::calibrate;

namespace {

std::unique_ptr<LayerBackend> backend_named(const std::string& name) {
  auto backend = make_backend(name);
  REQUIRE(backend);
  // One thread: two OpenMP threads crawl when other work shares the cores (spinning barriers).
  (*backend)->set_threads(1);
  return std::move(*backend);
}

}  // namespace

TEST_CASE("each backend matches the naive reference on one layer of each kind", "[layers]") {
  for (const std::string name : {"onednn", "torch"}) {
    auto backend = backend_named(name);
    const auto results = check_backend(*backend);
    REQUIRE(results.size() > 20);
    for (const CheckResult& result : results) {
      INFO(name << " " << result.descriptor << " " << workloads::pass_name(result.pass) << ": " << result.reason);
      if (result.implemented) CHECK(result.passed);
    }
  }
}

TEST_CASE("whole-network training steps run on each backend", "[layers]") {
  const auto network = workloads::load_network("resnet18");
  REQUIRE(network);
  for (const std::string name : {"onednn", "torch"}) {
    INFO(name);
    auto backend = backend_named(name);
    auto run = backend->prepare_network(*network, 2);
    REQUIRE(run);
    for (int step = 0; step < 2; ++step) CHECK_NOTHROW((*run)->run());
  }
}

TEST_CASE("a pass the layer does not have, or oneDNN has no kernel for, is bad input", "[layers]") {
  auto onednn = backend_named("onednn");
  const auto relu = *workloads::parse_descriptor("relu:ic8ih4iw4");
  CHECK(onednn->prepare(relu, 2, workloads::Pass::backward_weights, 1).error().kind == ErrorKind::bad_input);
  const auto uneven = *workloads::parse_descriptor("adaptavgpool:ic8ih7iw7oh3ow3");
  const auto refused = onednn->prepare(uneven, 2, workloads::Pass::forward, 1);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::bad_input);
  CHECK(make_backend("tensorflow").error().kind == ErrorKind::bad_input);
}
