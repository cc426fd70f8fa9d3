// tests/frontend_job_evidence_test.cpp — the user's recorded jobs in the answers the command and
// the Python module share (frontend/job_evidence.hpp): predict and recommend name a job of their
// setup that ran outside their band (and not one inside it), and the answer for a fabric that
// multi-node jobs fitted says it rests on them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

#include "frontend/answers.hpp"
#include "records/measurement.hpp"
#include "tests/cli_support.hpp"
#include "tuner/report.hpp"

using namespace dnntune;

namespace {

struct JobsFixture {
  frontend::ModelSource source;
  std::string jobs_file;
  std::string fingerprint;
  JobsFixture() {
    ::setenv("DNNTUNE_CACHE_DIR", test::make_temporary_directory().c_str(), 1);
    jobs_file = test::make_temporary_directory() + "/jobs.jsonl";
    ::setenv("DNNTUNE_JOB_RECORD", jobs_file.c_str(), 1);
    source.calibration_path = test::source_path("data/reference_calibrations/torch.json");
    auto predictor = frontend::load_predictor(source, {}, nullptr);
    REQUIRE(predictor);
    fingerprint = records::fingerprint(predictor->machine());  // the calibration's machine ran the jobs
  }
  ~JobsFixture() { ::unsetenv("DNNTUNE_JOB_RECORD"); }

  void record(const model::TrainingConfiguration& c, double images_per_second, const std::string& id,
              const std::string& fabric = "") const {
    records::Measurement job;
    job.kind = records::MeasurementKind::job;
    job.backend = "torch";
    job.backend_version = "PyTorch 1.13.0";
    job.machine_fingerprint = fingerprint;
    job.network = "resnet18";
    job.descriptor = c.nodes > 1 ? "allreduce" : "single";
    job.pass = "iteration";
    job.batch = c.batch_per_process;
    job.processes = c.processes_per_node;
    job.threads = c.threads_per_process;
    job.smt = c.smt;
    job.nodes = c.nodes;
    const double step = static_cast<double>(c.processes_per_node) * c.nodes * c.batch_per_process / images_per_second;
    job.median_seconds = job.min_seconds = job.max_seconds = step;
    job.coefficient_of_variation = 0.01;
    job.repetitions = job.steps = 10;
    job.warmup_steps = 5;
    job.trainer = records::kPythonTrainer;
    job.bucket_megabytes = 25;
    job.job.id = id;
    job.job.launcher = "mpirun";
    job.job.rank_median_seconds.assign(static_cast<std::size_t>(c.processes_per_node * c.nodes), step);
    job.job.fabric = fabric;
    job.timestamp = "2026-12-07T10:00:00Z";
    REQUIRE(records::append_measurement(jobs_file, job));
  }
};

frontend::PredictRequest predict_request(std::int64_t batch, int nodes, const std::string& fabric) {
  frontend::PredictRequest request;
  request.network = "resnet18";
  request.configuration.batch_per_process = batch;
  request.configuration.nodes = nodes;
  request.configuration.fabric = fabric;
  return request;  // the layout: the recommended one
}

}  // namespace

TEST_CASE("predict and recommend say when a job of their setup ran outside their band, not when inside it") {
  JobsFixture fixture;
  const frontend::AnswerSource source(fixture.source, "", nullptr);
  const auto before = frontend::answer_predict(source, predict_request(8, 1, "edr"));
  REQUIRE(before);
  CHECK(before->contradicting_jobs.empty());  // no job recorded
  const model::Prediction& p = before->prediction;
  fixture.record(p.configuration, (p.images_per_second_low + p.images_per_second_high) / 2, "inside");
  fixture.record(p.configuration, p.images_per_second_low / 2, "slow");
  model::TrainingConfiguration other = p.configuration;
  other.batch_per_process = 16;
  fixture.record(other, p.images_per_second_low / 2, "other-batch");

  const auto predicted = frontend::answer_predict(source, predict_request(8, 1, "edr"));
  REQUIRE(predicted);
  REQUIRE(predicted->contradicting_jobs.size() == 1);
  const model::JobContradiction& said = predicted->contradicting_jobs[0];
  CHECK(said.job_id == "slow");
  CHECK(said.text.find("a job of yours, 2026-12-07, ran ") == 0);
  CHECK(said.text.find(" images/s, outside this answer's band ") != std::string::npos);
  const auto document = frontend::prediction_document(*predicted);
  REQUIRE(document.contains("contradicting_jobs"));
  CHECK(document["contradicting_jobs"][0]["id"] == "slow");

  frontend::RecommendRequest asked;
  asked.network = "resnet18";
  asked.space.batches_per_process = {8};
  const auto recommended = frontend::answer_recommend(source, asked);
  REQUIRE(recommended);
  REQUIRE(recommended->recommendation.best.prediction.configuration == p.configuration);
  REQUIRE(recommended->recommendation.contradicting_jobs.size() == 1);
  CHECK(tuner::recommendation_text(recommended->recommendation, false).find("  contradicted: a job of yours") !=
        std::string::npos);
  CHECK(frontend::recommendation_document(*recommended, false)["contradicting_jobs"][0]["id"] == "slow");
}

TEST_CASE("the answer over nodes of a fabric that multi-node jobs fitted rests on them, and says so") {
  JobsFixture fixture;
  std::vector<std::string> heard;
  const frontend::AnswerSource source(fixture.source, "", [&](const std::string& line) { heard.push_back(line); });
  const auto one_node = frontend::answer_predict(source, predict_request(8, 1, "eth10"));
  REQUIRE(one_node);
  model::TrainingConfiguration setup = one_node->prediction.configuration;
  const auto preset = frontend::answer_predict(source, predict_request(8, 4, "eth10"));
  REQUIRE(preset);
  CHECK(preset->prediction.inter_node_link_source == "preset eth10");
  // The jobs ran 4x slower than the preset says over 2 and 4 nodes: the link is slower than eth10's preset.
  const double one_node_rate = one_node->prediction.images_per_second;
  fixture.record(setup, one_node_rate, "j1");
  setup.nodes = 2;
  fixture.record(setup, one_node_rate * 0.6, "j2", "eth10");
  setup.nodes = 4;
  fixture.record(setup, one_node_rate * 0.9, "j4", "eth10");
  setup.nodes = 3;
  fixture.record(setup, one_node_rate, "no-fabric");  // said, not fitted

  heard.clear();
  const auto fitted = frontend::answer_predict(source, predict_request(8, 4, "eth10"));
  REQUIRE(fitted);
  // The job that names no fabric is said, not fitted.
  REQUIRE_FALSE(heard.empty());
  std::string said;
  for (const std::string& line : heard) said += line + "\n";
  INFO(said);
  CHECK(heard[0].find("job no-fabric (resnet18, 3 nodes, 2026-12-07) is not fitted: it names no fabric") == 0);
  CHECK(fitted->prediction.inter_node_link_source.find("2 jobs of yours on eth10 (2 and 4 nodes, the last 2026-12-07: "
                                                       "j2, j4)") == 0);
  CHECK(fitted->prediction.images_per_second < preset->prediction.images_per_second);
  CHECK(frontend::prediction_document(*fitted)["inter_node_link"] == fitted->prediction.inter_node_link_source);
  // Another fabric keeps its preset.
  const auto edr = frontend::answer_predict(source, predict_request(8, 4, "edr"));
  REQUIRE(edr);
  CHECK(edr->prediction.inter_node_link_source == "preset edr");

  frontend::RecommendRequest asked;
  asked.network = "resnet18";
  asked.space.batches_per_process = {8};
  asked.space.node_counts = {4};
  asked.space.fabric = "eth10";
  const auto recommended = frontend::answer_recommend(source, asked);
  REQUIRE(recommended);
  const auto& basis = recommended->recommendation.basis;
  CHECK(std::any_of(basis.begin(), basis.end(), [](const std::string& line) {
    return line.find("between nodes on eth10: 2 jobs of yours on eth10") == 0;
  }));
}
