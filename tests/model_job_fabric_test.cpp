// tests/model_job_fabric_test.cpp — the user's multi-node jobs fit the communication terms of
// their fabric (model/job_fabric_fit.hpp): a known link is recovered from jobs of 2 and 4 nodes,
// a held-back node count is predicted better after than before, bad jobs are refused by name;
// and a job that ran outside an answer's band is said (model/job_contradictions.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "model/fit.hpp"
#include "model/job_contradictions.hpp"
#include "model/job_fabric_fit.hpp"
#include "model/predictor.hpp"
#include "tests/model_fixtures.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using namespace dnntune::model;

namespace {

Predictor fitted_predictor() {
  const records::MachineProfile machine = test::test_machine();
  const FitOptions options = test::fixture_fit_options(2);
  auto calibration =
      fit_calibration(test::synthetic_records(machine, 0.0, 5), machine, "torch", {"synthetic"}, options);
  REQUIRE(calibration);
  auto predictor = Predictor::from_calibration(*calibration);
  REQUIRE(predictor);
  return *predictor;
}

TrainingConfiguration over(int nodes, const std::string& fabric) {
  TrainingConfiguration configuration;
  configuration.batch_per_process = 8;
  configuration.processes_per_node = 1;
  configuration.threads_per_process = 2;
  configuration.nodes = nodes;
  configuration.fabric = fabric;
  return configuration;
}

records::Measurement job_of(const Predictor& predictor, const TrainingConfiguration& c, double step_seconds,
                            const std::string& id) {
  records::Measurement job;
  job.kind = records::MeasurementKind::job;
  job.backend = "torch";
  job.machine_fingerprint = records::fingerprint(predictor.machine());
  job.network = "resnet18";
  job.pass = "iteration";
  job.batch = c.batch_per_process;
  job.processes = c.processes_per_node;
  job.threads = c.threads_per_process;
  job.smt = c.smt;
  job.nodes = c.nodes;
  job.median_seconds = step_seconds;
  job.coefficient_of_variation = 0.02;
  job.repetitions = job.steps = 10;
  job.trainer = records::kPythonTrainer;
  job.bucket_megabytes = 25;
  job.job.id = id;
  job.job.launcher = "mpirun";
  job.job.rank_median_seconds.assign(static_cast<std::size_t>(c.processes_per_node * c.nodes), step_seconds);
  job.job.fabric = c.nodes > 1 ? c.fabric : "";
  job.timestamp = "2026-12-07T10:00:00Z";
  return job;
}

// The step `predictor` with the link `link` on `fabric` predicts for `configuration`.
double step_with_link(Predictor predictor, const workloads::Network& network,
                      const TrainingConfiguration& configuration, const LinkModel& link) {
  predictor.set_fabric_terms(configuration.fabric, {link, {0.02, 1, "true", 0.02, 0.02}, "true"});
  auto prediction = predictor.predict(network, configuration, false);
  REQUIRE(prediction);
  return prediction->iteration_seconds;
}

}  // namespace

TEST_CASE("jobs of 2 and 4 nodes fit their fabric's link, and a held-back 3 nodes is predicted better after") {
  const Predictor predictor = fitted_predictor();
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  // The jobs ran over a link of 0.03 GB/s and 2 ms per ring step (a slow Ethernet), on nodes whose
  // step is 15% slower than the model's: the one-node job says so, and the fit must not take it
  // for communication.
  const LinkModel truth{2e-3, 0.03, true, "truth"};
  auto model_step = [&](int nodes) { return step_with_link(predictor, *network, over(nodes, "eth10"), truth); };
  const double compute_offset = 0.15 * model_step(1);
  auto ran = [&](int nodes) { return model_step(nodes) + compute_offset; };
  const std::vector<records::Measurement> jobs = {job_of(predictor, over(1, "eth10"), ran(1), "101"),
                                                  job_of(predictor, over(2, "eth10"), ran(2), "102"),
                                                  job_of(predictor, over(4, "eth10"), ran(4), "104")};
  const FabricFits fits = fit_fabrics_from_jobs(predictor, jobs);
  CHECK(fits.not_fitted.empty());
  REQUIRE(fits.fits.size() == 1);
  const FabricFit& fit = fits.fits[0];
  CHECK(fit.fabric == "eth10");
  CHECK(fit.terms.inter_node.bandwidth_gbs == Approx(0.03).epsilon(0.1));
  CHECK(fit.terms.inter_node.latency_seconds == Approx(2e-3).epsilon(0.5));
  CHECK(fit.terms.spread.coefficient_of_variation == Approx(0.02));
  CHECK(fit.job_ids == std::vector<std::string>{"102", "104"});
  CHECK(fit.log_rms_after < 0.02);
  CHECK(fit.log_rms_before > 0.5);  // eth10's preset is 10 Gb/s: 40x the link the jobs ran over
  CHECK(fit.terms.source.find("2 jobs of yours on eth10 (2 and 4 nodes, the last 2026-12-07: 102, 104)") == 0);

  // The held-back setting: 3 nodes of the same setup.
  const Predictor after = with_fabric_fits(predictor, fits);
  const auto before_3 = predictor.predict(*network, over(3, "eth10"));
  const auto after_3 = after.predict(*network, over(3, "eth10"));
  REQUIRE(before_3);
  REQUIRE(after_3);
  const double observed = ran(3);
  const double error_before = before_3->iteration_seconds / observed - 1;
  const double error_after = after_3->iteration_seconds / observed - 1;
  std::printf("held-back 3 nodes: step %.3f s; predicted %.3f s before (%+.1f%%), %.3f s after (%+.1f%%)\n", observed,
              before_3->iteration_seconds, 100 * error_before, after_3->iteration_seconds, 100 * error_after);
  CHECK(std::abs(error_after) < 0.15);  // what remains is the nodes' compute, which no link explains
  CHECK(std::abs(error_after) < std::abs(error_before) / 5);
  CHECK(after_3->inter_node_link_source == fit.terms.source);
  CHECK(after_3->step_spread_source == fit.terms.spread.source);
  // Another fabric keeps its preset.
  const auto other = after.predict(*network, over(3, "edr"));
  REQUIRE(other);
  CHECK(other->inter_node_link_source == "preset edr");

  // A fabric's latest 16 jobs are what a fit reads.
  std::vector<records::Measurement> many = {jobs[0]};
  for (int index = 0; index < 20; ++index)
    many.push_back(job_of(predictor, over(2 + index % 3, "eth10"), ran(2 + index % 3), "m" + std::to_string(index)));
  const FabricFits latest = fit_fabrics_from_jobs(predictor, many);
  REQUIRE(latest.fits.size() == 1);
  CHECK(latest.fits[0].job_ids.size() == 16);
  CHECK(latest.fits[0].job_ids.front() == "m4");
  CHECK(latest.fits[0].terms.inter_node.bandwidth_gbs == Approx(0.03).epsilon(0.1));
}

TEST_CASE(
    "a multi-node job naming no fabric, an unknown one, too few ranks, an impossible step or one past its fabric's "
    "line rate is not fitted") {
  const Predictor predictor = fitted_predictor();
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const double step = step_with_link(predictor, *network, over(2, "eth10"), {2e-3, 0.03, true, ""});
  records::Measurement no_fabric = job_of(predictor, over(2, "eth10"), step, "201");
  no_fabric.job.fabric = "";
  records::Measurement unknown = job_of(predictor, over(2, "warp9"), step, "202");
  records::Measurement too_few_ranks = job_of(predictor, over(4, "eth10"), step, "203");
  too_few_ranks.job.rank_median_seconds.resize(2);
  records::Measurement impossible = job_of(predictor, over(2, "eth10"), 1e-9, "204");
  const FabricFits fits = fit_fabrics_from_jobs(predictor, {no_fabric, unknown, too_few_ranks, impossible});
  CHECK(fits.fits.empty());
  REQUIRE(fits.not_fitted.size() == 4);
  CHECK(fits.not_fitted[0].find("job 201 (resnet18, 2 nodes, 2026-12-07) is not fitted: it names no fabric") == 0);
  CHECK(fits.not_fitted[1].find("job 202") == 0);
  CHECK(fits.not_fitted[1].find("unknown network \"warp9\"") != std::string::npos);
  CHECK(fits.not_fitted[2].find("claims 4 nodes x 1 processes but holds 2 ranks' times") != std::string::npos);
  CHECK(fits.not_fitted[3].find("job 204") == 0);
  CHECK(fits.not_fitted[3].find("median_seconds") != std::string::npos);  // faster than the roofline

  // A multi-node job faster than the one-node job of its setup: no link gives that.
  const std::vector<records::Measurement> faster = {job_of(predictor, over(1, "eth10"), 2 * step, "301"),
                                                    job_of(predictor, over(2, "eth10"), step, "302")};
  const FabricFits refused = fit_fabrics_from_jobs(predictor, faster);
  CHECK(refused.fits.empty());
  REQUIRE(refused.not_fitted.size() == 1);
  CHECK(refused.not_fitted[0].find("ran as if over a link faster than its line rate (1.250 GB/s)") !=
        std::string::npos);

  // Jobs over eth10 (10 Gb/s) that ran as over a link of 40 GB/s: no eth10 link gives that.
  const LinkModel too_fast{1e-6, 40, true, ""};
  const std::vector<records::Measurement> past_line_rate = {
      job_of(predictor, over(2, "eth10"), step_with_link(predictor, *network, over(2, "eth10"), too_fast), "401"),
      job_of(predictor, over(4, "eth10"), step_with_link(predictor, *network, over(4, "eth10"), too_fast), "402")};
  const FabricFits capped = fit_fabrics_from_jobs(predictor, past_line_rate);
  CHECK(capped.fits.empty());
  REQUIRE(capped.not_fitted.size() == 1);
  CHECK(capped.not_fitted[0].find("ran as if over a link faster than its line rate") != std::string::npos);
}

TEST_CASE("a job of the answer's setup that ran outside its band is said, one inside it or of another setup is not") {
  const Predictor predictor = fitted_predictor();
  TrainingConfiguration setup = over(1, "edr");
  // The answer: 10-12 images/s under glibc's defaults, 13-15 under jemalloc. One process of batch 8.
  const std::vector<SetupBand> bands = {{"default", 10, 12}, {"jemalloc", 13, 15}};
  const auto job_at = [&](double images_per_second, const std::string& id) {
    return job_of(predictor, setup, 8 / images_per_second, id);
  };
  records::Measurement slow = job_at(8, "1");  // outside, below
  records::Measurement inside = job_at(11, "2");
  records::Measurement jemalloc_inside = job_at(14, "3");
  jemalloc_inside.allocator = "jemalloc";
  records::Measurement jemalloc_fast = job_at(16, "4");
  jemalloc_fast.allocator = "jemalloc";
  records::Measurement other_batch = job_at(8, "5");
  other_batch.batch = 16;
  records::Measurement unbanded = job_at(8, "6");
  unbanded.allocator = "tcmalloc";  // the answer has no band under it
  const std::string fingerprint = records::fingerprint(predictor.machine());
  const auto found = contradicting_jobs({slow, inside, jemalloc_inside, jemalloc_fast, other_batch, unbanded},
                                        {"resnet18"}, setup, bands, fingerprint, "torch");
  REQUIRE(found.size() == 2);
  CHECK(found[0].text ==
        "a job of yours, 2026-12-07, ran 8.0 images/s, outside this answer's band 10.0-12.0 (job 1, under glibc's "
        "defaults)");
  CHECK(found[1].job_id == "4");
  CHECK(found[1].band_low == 13);
  CHECK(contradictions_text(found).find("  contradicted: a job of yours, 2026-12-07, ran 16.0 images/s") !=
        std::string::npos);
  CHECK(contradictions_json(found)[1]["allocator"] == "jemalloc");
  // Another machine's job, or another network, says nothing of this answer.
  CHECK(contradicting_jobs({slow}, {"resnet50"}, setup, bands, fingerprint, "torch").empty());
  CHECK(contradicting_jobs({slow}, {"resnet18"}, setup, bands, "0123456789abcdef", "torch").empty());
  // Over nodes the fabric is part of the setup.
  setup = over(2, "edr");
  records::Measurement over_eth10 = job_of(predictor, over(2, "eth10"), 16 / 8.0, "7");
  CHECK(contradicting_jobs({over_eth10}, {"resnet18"}, setup, bands, fingerprint, "torch").empty());
  records::Measurement over_edr = job_of(predictor, over(2, "edr"), 16 / 8.0, "8");
  CHECK(contradicting_jobs({over_edr}, {"resnet18"}, setup, bands, fingerprint, "torch").size() == 1);
}
