// tests/frontend_test.cpp — the front end the command and the Python module share: what a source
// refuses, the setup predict and scale take when the user gives none (the whole recommendation's),
// the GPU answers' refusals, the announcement of a search a long list multiplies, and the
// partition's time limit read from sinfo.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "frontend/answers.hpp"
#include "frontend/gpu_answers.hpp"
#include "frontend/model_source.hpp"
#include "frontend/partition_calibration.hpp"
#include "frontend/request_defaults.hpp"
#include "tests/cli_support.hpp"
#include "tuner/recommendation.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;

namespace {

// A spec machine's model, from the built-in references only (an empty cache: no user's).
model::Predictor spec_predictor(const std::string& machine) {
  ::setenv("DNNTUNE_CACHE_DIR", test::make_temporary_directory().c_str(), 1);
  ::unsetenv("DNNTUNE_REFERENCE_DIR");
  frontend::ModelSource source;
  source.machine = machine;
  auto predictor = frontend::load_predictor(source, {}, nullptr);
  REQUIRE(predictor);
  return std::move(*predictor);
}

}  // namespace

TEST_CASE("a source refuses an empty machine name and a topology beside a spec machine") {
  for (const char* empty : {"", " "}) {
    const auto checked = frontend::check_machine_name(empty);
    REQUIRE_FALSE(checked);
    CHECK(checked.error().kind == ErrorKind::bad_input);
    CHECK(checked.error().message.find("leave --machine out for this machine") != std::string::npos);
  }
  CHECK(frontend::check_machine_name("skylake-8180"));

  frontend::ModelSource both;
  both.machine = "skylake-8180";
  both.topology_path = test::source_path("tests/fixtures/anchored_resnet18_calibration/machine.json");
  const auto refused = frontend::load_model(both, {}, nullptr);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("--topology and --machine both describe the node") != std::string::npos);

  frontend::ModelSource missing;
  missing.calibration_path = "/no/such/calibration.json";
  missing.topology_path = "/no/such/node.xml";
  const auto absent = frontend::load_model(missing, {}, nullptr);
  REQUIRE_FALSE(absent);
  CHECK(absent.error().message == "--topology /no/such/node.xml: no such file");
}

TEST_CASE("without --ppn and --threads the layout is the one recommend picks, and it says so") {
  (void)spec_predictor("skylake-8180");  // an empty cache, the built-in references only
  frontend::ModelSource spec;
  spec.machine = "skylake-8180";
  const frontend::AnswerSource source(spec, "", nullptr);
  frontend::PredictRequest asked;  // 1 x 1, batch 32, one node: the layout not given
  asked.network = "resnet18";
  const auto defaulted = frontend::answer_predict(source, asked);
  REQUIRE(defaulted);
  frontend::RecommendRequest recommend;
  recommend.network = "resnet18";
  const auto recommendation = frontend::answer_recommend(source, recommend);
  REQUIRE(recommendation);
  const auto& pick = recommendation->recommendation.best.prediction.configuration;
  CHECK(defaulted->prediction.configuration == pick);
  CHECK(pick.processes_per_node * pick.threads_per_process > 1);
  CHECK(defaulted->layout_basis.find("the one `dnntune recommend` picks for resnet18 at batch 32 on skylake-8180") !=
        std::string::npos);

  // What the user gave stays: both (nothing chosen, nothing said), or --ppn alone.
  asked.configuration.processes_per_node = 2;
  asked.configuration.threads_per_process = 3;
  asked.given = {true, true, false};
  const auto given = frontend::answer_predict(source, asked);
  REQUIRE(given);
  CHECK(given->prediction.configuration == asked.configuration);
  CHECK(given->layout_basis.empty());
  asked.given = {true, false, false};
  const auto ppn_only = frontend::answer_predict(source, asked);
  REQUIRE(ppn_only);
  CHECK(ppn_only->prediction.configuration.processes_per_node == 2);
  CHECK_FALSE(ppn_only->layout_basis.empty());
}

TEST_CASE("predict's default setup is the whole recommendation's, where PyTorch's runs overturn the tie-break") {
  // tests/fixtures/parity: the tuner alone ties 2x1 and 1x2 for resnet18 at batch 8 and picks
  // 1x2; PyTorch timed 2x1 faster under glibc-tuned, the allocator the anchors pick.
  ::setenv("DNNTUNE_CACHE_DIR", test::make_temporary_directory().c_str(), 1);
  frontend::ModelSource fixture;
  fixture.calibration_path = test::source_path("tests/fixtures/parity/calibration.json");
  const frontend::AnswerSource source(fixture, "", nullptr);
  frontend::RecommendRequest recommend;
  recommend.network = "resnet18";
  recommend.space.batches_per_process = {8};
  const auto whole = frontend::answer_recommend(source, recommend);
  REQUIRE(whole);
  const tuner::Recommendation& answer = whole->recommendation;
  const auto loaded = source.model_for("resnet18", {8});
  REQUIRE(loaded);
  const auto bare = tuner::recommend(loaded->predictor, *workloads::load_network("resnet18"), recommend.space, {});
  REQUIRE(bare);
  CHECK(bare->best.prediction.configuration.processes_per_node == 1);
  CHECK(answer.best.prediction.configuration.processes_per_node == 2);
  REQUIRE(answer.allocator);
  CHECK(answer.allocator->chosen == "glibc-tuned");
  CHECK(whole->job_allocator == "glibc-tuned");
  CHECK(whole->seconds_to_train == Approx(90.0 * 1281167 / answer.best.prediction.images_per_second));

  frontend::PredictRequest predict;
  predict.network = "resnet18";
  predict.configuration.batch_per_process = 8;
  const auto predicted = frontend::answer_predict(source, predict);
  REQUIRE(predicted);
  CHECK(predicted->prediction.configuration == answer.best.prediction.configuration);
  CHECK(predicted->prediction.images_per_second == answer.best.prediction.images_per_second);
  CHECK(tuner::allocator_json(predicted->allocator) == tuner::allocator_json(*answer.allocator));
  CHECK(frontend::prediction_document(*predicted)["allocator"] ==
        frontend::recommendation_document(*whole, false)["allocator"]);

  // An allocator the user names applies to the figure, and PyTorch's runs under another do not count.
  predict.allocator = "default";
  const auto under_default = frontend::answer_predict(source, predict);
  REQUIRE(under_default);
  CHECK(under_default->allocator.chosen == "default");
  CHECK(under_default->allocator.chosen_by == "user");
  CHECK(under_default->prediction.configuration.processes_per_node == 1);
  predict.allocator = "no-such-allocator";
  const auto refused = frontend::answer_predict(source, predict);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.rfind("--allocator: ", 0) == 0);
}

TEST_CASE("the GPU answers refuse what the GPU model does not take: names twice, empty names, an allocator") {
  frontend::ModelSource h200;
  h200.machine = "h200";
  const auto gpu = frontend::gpu_source(h200);
  REQUIRE(gpu);
  REQUIRE(*gpu);
  frontend::GpuRecommendRequest request;
  request.network = "resnet50";
  request.search.batches_per_gpu = {32};
  REQUIRE(frontend::answer_gpu_recommend(**gpu, request));
  request.precisions = {"bf16", "bf16"};
  const auto twice = frontend::answer_gpu_recommend(**gpu, request);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message == "--precision: bf16 is listed twice");
  request.precisions = {""};
  CHECK_FALSE(frontend::answer_gpu_recommend(**gpu, request));
  request.precisions = {};
  request.allocator = "glibc-tuned";
  CHECK_FALSE(frontend::answer_gpu_recommend(**gpu, request));
  frontend::GpuSetupRequest setup{"resnet50", {}, std::string(""), std::nullopt};
  CHECK_FALSE(frontend::answer_gpu_predict(**gpu, setup));
  setup.precision = std::nullopt;
  CHECK(frontend::answer_gpu_predict(**gpu, setup));
  frontend::ModelSource cpu;
  cpu.machine = "skylake-8180";
  const auto none = frontend::gpu_source(cpu);
  REQUIRE(none);
  CHECK_FALSE(*none);
}

TEST_CASE("a search a long --nodes list multiplies is announced with its estimate") {
  const auto predictor = spec_predictor("skylake-8180");
  const auto network = workloads::load_network("resnet18");
  REQUIRE(network);
  std::vector<std::string> lines;
  const auto heard = [&](const std::string& line) { lines.push_back(line); };
  tuner::SearchSpaceOptions space;
  CHECK(frontend::announce_search(predictor, *network, space, heard, 1e6, "--max-minutes"));
  CHECK(lines.empty());  // one node: a few hundred candidates, said nothing
  for (int nodes = 2; nodes <= 64; ++nodes) space.node_counts.push_back(nodes);
  CHECK(frontend::announce_search(predictor, *network, space, heard, 1e6, "--max-minutes"));
  REQUIRE(lines.size() == 1);
  CHECK(lines.front().rfind("scoring ", 0) == 0);
  CHECK(lines.front().find(" candidate configurations (about ") != std::string::npos);
}

TEST_CASE("the partition's time limit comes from sinfo, and nothing when SLURM cannot say") {
  {
    test::FakeSinfo sinfo("debug 1:00:00\\nbatch* 2-00:00:00\\nlong infinite\\n", 0);
    CHECK(frontend::partition_time_limit_seconds("") == Approx(2 * 86400.0));  // the default partition
    CHECK(frontend::partition_time_limit_seconds("debug") == Approx(3600.0));
    const auto unlimited = frontend::partition_time_limit_seconds("long");
    REQUIRE(unlimited);
    CHECK(std::isinf(*unlimited));
    CHECK_FALSE(frontend::partition_time_limit_seconds("nosuch"));
  }
  test::FakeSinfo failing("sinfo: error: Could not establish a configuration source\\n", 1);
  CHECK_FALSE(frontend::partition_time_limit_seconds(""));
}

// Issue 61: a search of 5,193,728 candidates ("about 97 minutes") ran with only an announcement.
TEST_CASE("a search estimated past the limit is refused with its size, its estimate and the way out") {
  const frontend::SearchEstimate long_search{5193728, 97 * 60};
  const auto refused =
      frontend::check_search_estimate(long_search, frontend::default_max_search_minutes, "--max-minutes");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::bad_input);
  CHECK(refused.error().message ==
        "the search would score 5193728 candidate configurations, about 97 minutes on this machine, past the limit "
        "of 10 minutes: shorten the lists (node counts, batches, fusion sizes) or raise --max-minutes");
  CHECK(frontend::check_search_estimate(long_search, 100, "--max-minutes"));  // raised: it runs
  CHECK(frontend::check_search_estimate({300, 0}, 0.001, "--max-minutes"));   // too small to be timed
  const auto unnamed = frontend::check_search_estimate(long_search, 10, "");
  REQUIRE_FALSE(unnamed);
  CHECK(unnamed.error().message.find("raise") == std::string::npos);
}
