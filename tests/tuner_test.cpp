// tests/tuner_test.cpp — the search space (its size, its exclusions and their reasons), the
// choice among candidates within each other's band, and the emitted launch lines and scripts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <regex>

#include "model/fit.hpp"
#include "tests/model_fixtures.hpp"
#include "tuner/comparison.hpp"
#include "tuner/job_script.hpp"
#include "tuner/launch_policy.hpp"
#include "tuner/sbatch_header.hpp"
#include "tuner/recommendation.hpp"
#include "tuner/search_space.hpp"
#include "tuner/report.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;

namespace {

model::MachineRates two_socket_node(int cores_per_package, int pus_per_core) {
  model::MachineRates rates;
  rates.peak_gflops_per_core = 100;
  rates.packages = 2;
  rates.cores_per_package = cores_per_package;
  rates.pus_per_core = pus_per_core;
  rates.package_bandwidth_curve = {{1, 10}, {cores_per_package, 100}};
  return rates;
}

}  // namespace

TEST_CASE("the search space of a 2-socket 56-core SMT node") {
  const auto rates = two_socket_node(28, 2);
  tuner::SearchSpaceOptions options;
  const auto space = tuner::enumerate_search_space(rates, options);
  // Every valid point fits: processes never straddle sockets, cores and threads suffice.
  for (const auto& configuration : space.valid) REQUIRE(model::place(configuration, rates));
  for (const auto& excluded : space.excluded) CHECK_FALSE(excluded.reason.empty());
  CHECK(space.valid.size() > 300);
  // The studies' favourites are in it.
  const auto has = [&](int ppn, int threads, bool smt) {
    return std::any_of(space.valid.begin(), space.valid.end(), [&](const auto& c) {
      return c.processes_per_node == ppn && c.threads_per_process == threads && c.smt == smt;
    });
  };
  CHECK(has(1, 56, false));
  CHECK(has(4, 14, false));
  CHECK(has(2, 28, false));
  CHECK(has(4, 28, true));
  CHECK(has(56, 1, false));
  CHECK_FALSE(has(3, 15, false));  // three 15-core processes cannot fit two 28-core sockets whole
  const auto excluded_3_15 = std::find_if(space.excluded.begin(), space.excluded.end(), [](const auto& point) {
    return point.configuration.processes_per_node == 3 && point.configuration.threads_per_process == 15 &&
           !point.configuration.smt;
  });
  REQUIRE(excluded_3_15 != space.excluded.end());
  CHECK(excluded_3_15->reason.find("straddle") != std::string::npos);
}

TEST_CASE("a global batch that does not split evenly is excluded with its reason") {
  const auto rates = two_socket_node(2, 1);
  tuner::SearchSpaceOptions options;
  options.global_batch = 30;
  const auto space = tuner::enumerate_search_space(rates, options);
  for (const auto& configuration : space.valid)
    CHECK(configuration.batch_per_process * configuration.processes_per_node == 30);
  const bool four_excluded = std::any_of(space.excluded.begin(), space.excluded.end(), [](const auto& point) {
    return point.configuration.processes_per_node == 4 &&
           point.reason.find("does not split evenly") != std::string::npos;
  });
  CHECK(four_excluded);
}

TEST_CASE("the batches a default calibration measures for a global batch") {
  tuner::SearchSpaceOptions options;
  options.batches_per_process = {8, 16};
  CHECK(tuner::batches_to_score(options, 4) == std::vector<std::int64_t>{8, 16});
  options.global_batch = 48;
  options.node_counts = {1, 2};
  // 48 over 1, 2, 3, 4 ranks on one node and 2, 4, 6, 8 on two.
  CHECK(tuner::batches_to_score(options, 4) == std::vector<std::int64_t>{48, 24, 16, 12, 8, 6});
  options.global_batch = 7;
  options.node_counts = {2};
  CHECK(tuner::batches_to_score(options, 4).empty());
}

TEST_CASE("recommend ranks by the model and compares with the baselines") {
  const auto machine = test::test_machine();
  const model::FitOptions fit_options = test::fixture_fit_options(4);
  auto calibration =
      model::fit_calibration(test::synthetic_records(machine, 0.02, 5), machine, "torch", {}, fit_options);
  REQUIRE(calibration);
  const auto predictor = model::Predictor::from_calibration(*calibration);
  REQUIRE(predictor);
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  tuner::SearchSpaceOptions space;
  space.batches_per_process = {8};
  const auto result = tuner::recommend(*predictor, *network, space, tuner::RecommendOptions{});
  REQUIRE(result);
  REQUIRE(result->single_process);
  REQUIRE(result->rule_of_thumb);
  CHECK(result->single_process->configuration.processes_per_node == 1);
  CHECK(result->single_process->configuration.threads_per_process == 4);
  CHECK(result->rule_of_thumb->configuration.processes_per_node == 4);
  // The ranking is sorted, and the winner is the top score or a simpler point within its band.
  for (std::size_t index = 1; index < result->ranking.size(); ++index)
    CHECK(result->ranking[index - 1].score >= result->ranking[index].score);
  const auto& top = result->ranking.front().prediction;
  const auto& best = result->best.prediction;
  if (result->best.score != result->ranking.front().score) {
    CHECK(result->tied_within_band);
    CHECK(best.images_per_second_high >= top.images_per_second_low);
    CHECK(best.configuration.processes_per_node <= top.configuration.processes_per_node);
  }
  CHECK(best.images_per_second >= result->single_process->images_per_second * 0.8);
}

TEST_CASE("a close call between a modelled pick and a measured setting goes to the measured one") {
  const auto point = [](int ppn, int threads, double predicted, double low, double high, const char* confidence) {
    tuner::RankedPoint ranked;
    ranked.prediction.configuration.processes_per_node = ppn;
    ranked.prediction.configuration.threads_per_process = threads;
    ranked.prediction.images_per_second = predicted;
    ranked.prediction.images_per_second_low = low;
    ranked.prediction.images_per_second_high = high;
    ranked.prediction.confidence = confidence;
    ranked.score = predicted;
    return ranked;
  };
  // The replicates put 2x1 ahead in every draw: by the model alone it is no tie.
  const std::vector<std::vector<double>> replicates(3, std::vector<double>(20, 0));
  std::vector<std::vector<double>> paired = replicates;
  std::fill(paired[0].begin(), paired[0].end(), 2.0);
  std::fill(paired[1].begin(), paired[1].end(), 1.0);
  tuner::Recommendation recommendation;
  SECTION("modelled top, measured runner-up within its band: the measured one") {
    recommendation.ranking = {point(2, 1, 1.75, 0.3, 11.7, "modelled"), point(1, 2, 1.70, 1.2, 2.5, "measured"),
                              point(1, 1, 0.9, 0.1, 6.1, "partly measured")};
    tuner::choose_among_ties(recommendation, paired);
    CHECK(recommendation.best.prediction.configuration.processes_per_node == 1);
    CHECK(recommendation.best.prediction.configuration.threads_per_process == 2);
    CHECK(recommendation.chosen_by_tie_break);
    CHECK(recommendation.choice_note.find("prefers what a real step checked") != std::string::npos);
  }
  SECTION("the measured one clearly slower (bands apart): the model's pick stays") {
    recommendation.ranking = {point(2, 1, 9.0, 8.0, 11.7, "modelled"), point(1, 2, 1.70, 1.2, 2.5, "measured"),
                              point(1, 1, 0.9, 0.1, 6.1, "partly measured")};
    tuner::choose_among_ties(recommendation, paired);
    CHECK(recommendation.best.prediction.configuration.processes_per_node == 2);
    CHECK_FALSE(recommendation.chosen_by_tie_break);
  }
  SECTION("a measured top stays") {
    recommendation.ranking = {point(2, 1, 1.75, 1.5, 2.0, "measured"), point(1, 2, 1.70, 1.2, 2.5, "measured"),
                              point(1, 1, 0.9, 0.1, 6.1, "partly measured")};
    tuner::choose_among_ties(recommendation, paired);
    CHECK(recommendation.best.prediction.configuration.processes_per_node == 2);
  }
}

TEST_CASE("two measured settings within what their runs move: tied, the faster median stays the pick") {
  const auto measured = [](int ppn, int threads, double images_per_second, int runs, double run_spread) {
    tuner::RankedPoint ranked;
    ranked.prediction.configuration.processes_per_node = ppn;
    ranked.prediction.configuration.threads_per_process = threads;
    ranked.prediction.images_per_second = images_per_second;
    ranked.prediction.images_per_second_low = 0.8 * images_per_second;
    ranked.prediction.images_per_second_high = 1.25 * images_per_second;
    ranked.prediction.confidence = "measured";
    ranked.prediction.anchor.anchor.runs = runs;
    ranked.prediction.run_spread_log_sd = run_spread;
    ranked.score = images_per_second;
    return ranked;
  };
  // Paired replicates that put 2x1 ahead in every draw (an anchor's correction is no parameter).
  std::vector<std::vector<double>> paired(2, std::vector<double>(20, 1.0));
  std::fill(paired[0].begin(), paired[0].end(), 2.0);
  tuner::Recommendation recommendation;
  SECTION("one run each, 5% apart, runs that move 5%: tied, the faster kept") {
    recommendation.ranking = {measured(2, 1, 24.2, 1, 0.05), measured(1, 2, 23.0, 3, 0.05)};
    CHECK(tuner::within_run_spread(recommendation.ranking[0].prediction, recommendation.ranking[1].prediction));
    tuner::choose_among_ties(recommendation, paired);
    CHECK(recommendation.best.prediction.configuration.processes_per_node == 2);  // not the simpler 1x2
    CHECK_FALSE(recommendation.chosen_by_tie_break);
    CHECK(recommendation.tied_candidates == 2);
    CHECK(recommendation.choice_note.find("within what their runs move") != std::string::npos);
    CHECK(recommendation.choice_note.find("(1 run)") != std::string::npos);
  }
  SECTION("replicates that cannot tell them apart do not hand the pick to the simpler") {
    const std::vector<std::vector<double>> even(2, std::vector<double>(20, 1.0));
    recommendation.ranking = {measured(2, 1, 24.2, 7, 0.08), measured(1, 2, 23.0, 7, 0.08)};
    tuner::choose_among_ties(recommendation, even);
    CHECK(recommendation.best.prediction.configuration.processes_per_node == 2);
    CHECK_FALSE(recommendation.chosen_by_tie_break);
    CHECK(recommendation.choice_note.find("within what their runs move") != std::string::npos);
    CHECK(recommendation.choice_note.find("(7 runs)") != std::string::npos);
  }
  SECTION("nine runs each pin the medians down: 5% apart is no tie") {
    recommendation.ranking = {measured(2, 1, 24.2, 9, 0.05), measured(1, 2, 23.0, 9, 0.05)};
    CHECK_FALSE(tuner::within_run_spread(recommendation.ranking[0].prediction, recommendation.ranking[1].prediction));
    tuner::choose_among_ties(recommendation, paired);
    CHECK(recommendation.tied_candidates == 1);
    CHECK(recommendation.choice_note.empty());
  }
  SECTION("a modelled candidate is never within a run spread") {
    recommendation.ranking = {measured(2, 1, 24.2, 1, 0.05), measured(1, 2, 23.0, 1, 0.05)};
    recommendation.ranking[1].prediction.confidence = "modelled";
    CHECK_FALSE(tuner::within_run_spread(recommendation.ranking[0].prediction, recommendation.ranking[1].prediction));
  }
}

TEST_CASE("verification overrides the model only where the measurement resolves the difference") {
  tuner::Recommendation recommendation;
  const auto point = [](int ppn, int threads, double predicted) {
    tuner::RankedPoint ranked;
    ranked.prediction.configuration.processes_per_node = ppn;
    ranked.prediction.configuration.threads_per_process = threads;
    ranked.prediction.images_per_second = predicted;
    ranked.score = predicted;
    return ranked;
  };
  recommendation.ranking = {point(2, 1, 27), point(1, 2, 26), point(1, 1, 14)};
  recommendation.best = recommendation.ranking[1];  // the simpler of two tied in band
  const auto candidates = tuner::verification_candidates(recommendation, 2);
  REQUIRE(candidates.size() == 2);
  CHECK(candidates[0].processes_per_node == 1);  // the recommended one first,
  CHECK(candidates[1].processes_per_node == 2);  // then the best-ranked other

  const auto measured = [&](std::size_t index, double median, double low, double high) {
    return tuner::VerifiedPoint{recommendation.ranking[index].prediction, median, low, high};
  };
  SECTION("overlapping step ranges: a tie, the model's pick stays") {
    tuner::choose_by_measurement(recommendation, {measured(1, 27.2, 26.9, 27.4), measured(0, 27.3, 27.0, 27.6)});
    CHECK(recommendation.best.prediction.configuration.processes_per_node == 1);
    CHECK(recommendation.choice_note.find("tie") != std::string::npos);
    CHECK(recommendation.verified.size() == 2);
    CHECK(tuner::recommendation_text(recommendation, false).find("trained for real") != std::string::npos);
    CHECK(tuner::recommendation_json(recommendation, false)["verified"].size() == 2);
  }
  SECTION("the measured best clearly faster: it is recommended") {
    tuner::choose_by_measurement(recommendation, {measured(1, 25.0, 24.8, 25.3), measured(0, 27.3, 27.0, 27.6)});
    CHECK(recommendation.best.prediction.configuration.processes_per_node == 2);
    CHECK(recommendation.choice_note.find("measured best is recommended") != std::string::npos);
  }
}

TEST_CASE("launch lines give each rank its own cores") {
  const auto rates = two_socket_node(28, 2);
  model::TrainingConfiguration configuration;
  configuration.processes_per_node = 4;
  configuration.threads_per_process = 14;
  configuration.nodes = 2;
  const auto arguments = tuner::mpirun_arguments(configuration, rates);
  const auto has = [&](const std::string& word) {
    return std::find(arguments.begin(), arguments.end(), word) != arguments.end();
  };
  CHECK(has("-np"));
  CHECK(has("8"));  // 4 per node x 2 nodes
  CHECK(has("ppr:2:socket:PE=14"));
  CHECK(has("OMP_NUM_THREADS=14"));
  CHECK(has("OMP_PLACES=cores"));
  configuration.processes_per_node = 1;
  configuration.threads_per_process = 56;
  const auto wide = tuner::mpirun_arguments(configuration, rates);
  CHECK(std::find(wide.begin(), wide.end(), "ppr:1:node:PE=56") != wide.end());
}

TEST_CASE("the SLURM script") {
  const auto rates = two_socket_node(28, 2);
  model::Prediction prediction;
  prediction.network = "resnet152";
  prediction.backend = "torch";
  prediction.configuration.processes_per_node = 4;
  prediction.configuration.threads_per_process = 28;
  prediction.configuration.smt = true;
  prediction.configuration.nodes = 16;
  tuner::JobScriptOptions options;
  options.train_command = {"python", "train.py", "--arch", "resnet152", "--note", "it's"};
  const std::string script = tuner::slurm_script(prediction, rates, options);
  CHECK(script.find("#!/bin/bash\n") == 0);
  CHECK(script.find("#SBATCH --nodes=16\n") != std::string::npos);
  CHECK(script.find("#SBATCH --ntasks-per-node=4\n") != std::string::npos);
  CHECK(script.find("#SBATCH --cpus-per-task=28\n") != std::string::npos);  // 14 cores x 2 hardware threads
  CHECK(script.find("#SBATCH --hint=multithread\n") != std::string::npos);
  CHECK(script.find("export OMP_NUM_THREADS=28\n") != std::string::npos);
  CHECK(script.find("export OMP_PLACES=threads\n") != std::string::npos);
  CHECK(script.find("export KMP_BLOCKTIME=1\n") != std::string::npos);
  CHECK(script.find("srun --cpus-per-task=\"$SLURM_CPUS_PER_TASK\" --cpu-bind=cores") != std::string::npos);
  CHECK(script.find("python train.py --arch resnet152 --note 'it'\\''s'\n") != std::string::npos);
  options.train_command.clear();
  CHECK(tuner::slurm_script(prediction, rates, options).find("put your training command here") != std::string::npos);
}

TEST_CASE("the launch lines carry what a job's record needs: the network and the prediction before the job") {
  const auto rates = two_socket_node(28, 2);
  model::Prediction prediction;
  prediction.network = "resnet152";
  prediction.backend = "torch";
  prediction.images_per_second = 123.25;
  prediction.configuration.processes_per_node = 2;
  prediction.configuration.threads_per_process = 28;
  tuner::JobScriptOptions options;
  options.allocator_environment = {{"LD_PRELOAD", "libjemalloc.so.2"}};
  options.allocator_name = "jemalloc";
  for (const std::string& text :
       {tuner::slurm_script(prediction, rates, options), tuner::torchrun_text(prediction, rates, options)}) {
    CHECK(text.find("export DNNTUNE_NETWORK=resnet152\n") != std::string::npos);
    CHECK(text.find("export DNNTUNE_PREDICTED_IMAGES_PER_SECOND=123.25\n") != std::string::npos);
    CHECK(text.find("export DNNTUNE_ALLOCATOR=jemalloc\n") != std::string::npos);
  }
  const std::string mpirun = tuner::mpirun_text(prediction, rates, options);
  CHECK(mpirun.find("-x DNNTUNE_NETWORK=resnet152 -x DNNTUNE_PREDICTED_IMAGES_PER_SECOND=123.25") != std::string::npos);
  // On one node no fabric is said; over nodes the answer's, whose terms the job's record then fits.
  CHECK(mpirun.find("DNNTUNE_FABRIC") == std::string::npos);
  prediction.configuration.nodes = 4;
  prediction.configuration.fabric = "hdr";
  CHECK(tuner::mpirun_text(prediction, rates, options).find("-x DNNTUNE_FABRIC=hdr") != std::string::npos);
  CHECK(tuner::slurm_script(prediction, rates, options).find("export DNNTUNE_FABRIC=hdr\n") != std::string::npos);
}

TEST_CASE("one rule for the words and times that reach #SBATCH lines") {
  for (const char* good : {"debug", "gpu-a100", "cpu_2.x", "a+b"}) CHECK(tuner::check_slurm_name("--partition", good));
  for (const char* bad : {"", ".", "..", "a;b", "a b", "$(id)", "a\nb", "a'b"}) {
    const auto checked = tuner::check_slurm_name("--account", bad);
    REQUIRE_FALSE(checked);
    CHECK(checked.error().message.rfind("--account", 0) == 0);
  }
  for (const char* good : {"30", "1:30:00", "2-00:00:00", "12:00"}) CHECK(tuner::check_slurm_time(good));
  for (const char* bad : {"", "soon", "1h", "1:2:3:4", "-5"}) CHECK_FALSE(tuner::check_slurm_time(bad));
}

TEST_CASE("one #SBATCH writer, and a --time within the partition's limit that says when the training is longer") {
  tuner::SbatchHeader header;
  header.job_name = "dnntune-calibrate;x";
  header.nodes = 2;
  header.tasks_per_node = 1;
  header.time_limit = "0-01:00:00";
  header.partition = "batch";
  header.output = "/cache/slurm/jobs/log.out";
  CHECK(tuner::sbatch_header(header) ==
        "#!/bin/bash\n#SBATCH --job-name=dnntune-calibrate_x\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
        "#SBATCH --exclusive\n#SBATCH --time=0-01:00:00\n#SBATCH --partition=batch\n"
        "#SBATCH --output=/cache/slurm/jobs/log.out\n");

  for (const auto& [text, seconds] : std::vector<std::pair<std::string, double>>{{"30", 1800},
                                                                                 {"12:30", 750},
                                                                                 {"2:00:00", 7200},
                                                                                 {"1-00:00:00", 86400},
                                                                                 {"7-12", 7 * 86400 + 12 * 3600},
                                                                                 {"1-02:03", 86400 + 2 * 3600 + 180}})
    CHECK(tuner::slurm_time_seconds(text) == Approx(seconds));
  for (const char* unlimited : {"infinite", "UNLIMITED", "", "1:2:3:4"})
    CHECK_FALSE(tuner::slurm_time_seconds(unlimited));

  // An hour of training: +25% and 10 minutes, well within the default day.
  const auto short_job = tuner::job_time(3600, std::nullopt, "");
  CHECK(short_job.time_limit == "0-01:25:00");
  CHECK_FALSE(short_job.requeue);
  CHECK(short_job.comment.find("dnntune's default limit") != std::string::npos);
  // 170 days (resnet152 on 4 spec nodes once): the default day, requeued, and the whole time said.
  const auto long_job = tuner::job_time(170 * 86400.0, std::nullopt, "");
  CHECK(long_job.time_limit == "1-00:00:00");
  CHECK(long_job.requeue);
  CHECK(long_job.comment.find("the whole training takes about 170 days") != std::string::npos);
  CHECK(long_job.comment.find("checkpoint") != std::string::npos);
  // A partition's own limit (sinfo's) wins over the default.
  const auto partition_job = tuner::job_time(3 * 86400.0, 2 * 86400.0, "long");
  CHECK(partition_job.time_limit == "2-00:00:00");
  CHECK(partition_job.comment.find("partition long") != std::string::npos);
  // Issue 61, case 4: UNLIMITED is no limit a script can state: the default day, requeued, said.
  const auto unlimited_job = tuner::job_time(3 * 86400.0, std::numeric_limits<double>::infinity(), "long");
  CHECK(unlimited_job.time_limit == "1-00:00:00");
  CHECK(unlimited_job.requeue);
  CHECK(unlimited_job.capped);
  CHECK(unlimited_job.comment.find("partition long has none: sinfo says UNLIMITED") != std::string::npos);
  CHECK(unlimited_job.note.find("--time capped at 1-00:00:00") != std::string::npos);
  CHECK_FALSE(short_job.capped);
  CHECK(short_job.note.empty());

  model::Prediction prediction;
  prediction.network = "resnet152";
  prediction.backend = "torch";
  tuner::JobScriptOptions options;
  options.time_limit = long_job.time_limit;
  options.requeue = long_job.requeue;
  options.time_comment = long_job.comment;
  const std::string script = tuner::slurm_script(prediction, two_socket_node(28, 2), options);
  CHECK(script.find("#SBATCH --time=1-00:00:00\n#SBATCH --requeue\n") != std::string::npos);
  CHECK(script.find("# --time: the whole training takes about 170 days") != std::string::npos);
}

TEST_CASE("compare of a machine with itself says so, with no ratio band") {
  dnntune::tuner::Comparison comparison;
  comparison.network = "resnet50";
  const dnntune::tuner::ComparedMachine skylake{
      "skylake-8180", "cpu-node", "one node, 4 ppn x 14 threads", 87.2, 32.4, 235, "reference"};
  comparison.machines = {skylake, skylake, {"v100", "gpu", "1 GPU x batch 64", 269, 169, 428, "reference"}};
  const auto same = dnntune::tuner::ratio_to_first(comparison, 1);
  CHECK(same.same_machine);
  CHECK(same.low == 1);
  CHECK(same.high == 1);
  CHECK_FALSE(dnntune::tuner::ratio_to_first(comparison, 2).same_machine);
  const std::string text = dnntune::tuner::comparison_text(comparison);
  CHECK(text.find("the same machine as skylake-8180") != std::string::npos);
  CHECK(text.find("1.00x faster") == std::string::npos);
  CHECK(dnntune::tuner::comparison_json(comparison)["machines"][1]["ratio_to_first"]["same_machine"] == true);
}

TEST_CASE("compare: a machine whose band is wider than the gate's ratio has no figure and no ratio") {
  dnntune::tuner::Comparison comparison;
  comparison.network = "resnet50";
  comparison.machines = {{"skylake-8180", "cpu-node", "one node", 87.2, 32.4, 235, "reference"},
                         {"vm", "cpu-node", "one node", 3662.1, 0.2, 77674320.3, "calibration"}};
  const std::string text = dnntune::tuner::comparison_text(comparison);
  CHECK(text.find("images/s unknown") != std::string::npos);
  CHECK(text.find("3660") == std::string::npos);
  CHECK(text.find("faster than") == std::string::npos);
  const auto json = dnntune::tuner::comparison_json(comparison);
  CHECK(json["machines"][1]["images_per_second"].is_null());
  CHECK(json["machines"][1]["band"]["known"] == false);
}

// Issue 61, case 5: an overflowing product of epochs and images (or a figure that is no number)
// is capped like any other long training, never wrapped into a negative or absurd --time.
TEST_CASE("a job's --time is checked arithmetic: any predicted duration is capped, never wrapped") {
  const std::regex slurm_time(R"(\d+-\d\d:\d\d:\d\d)");
  for (const double seconds : {1e13, 3.5e22, 1e19, 9.3e18, 1e300, std::numeric_limits<double>::max(),
                               std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    INFO(seconds);
    for (const std::optional<double> limit :
         {std::optional<double>(), std::optional<double>(2 * 86400.0),
          std::optional<double>(std::numeric_limits<double>::infinity()), std::optional<double>(1e300)}) {
      const auto time = tuner::job_time(seconds, limit, "batch");
      CHECK(std::regex_match(time.time_limit, slurm_time));
      CHECK(time.requeue);
      CHECK(time.capped);
      CHECK_FALSE(std::regex_search(time.comment, std::regex(R"([ (=:]-\d)")));  // no negative figure
      CHECK_FALSE(std::regex_search(time.comment, std::regex(R"(\b(nan|inf)\b)")));
    }
    CHECK(tuner::job_time(seconds, std::nullopt, "").time_limit == "1-00:00:00");
    CHECK(tuner::job_time(seconds, 2 * 86400.0, "").time_limit == "2-00:00:00");
  }
  // What the issue saw: resnet152, 1e6 epochs of 1e12 images at 35.8 images/s.
  const auto seen = tuner::job_time(1e18 / 35.8, std::nullopt, "");
  CHECK(seen.time_limit == "1-00:00:00");
  CHECK(seen.comment.find("the whole training takes about 8.9e+08 years") != std::string::npos);
  // SLURM's own durations stay within what it holds, and never below zero.
  CHECK(tuner::slurm_duration(1e300) == tuner::slurm_duration(tuner::longest_slurm_time_seconds));
  CHECK(tuner::slurm_duration(-5) == "0-00:00:00");
  CHECK(tuner::slurm_duration(std::numeric_limits<double>::quiet_NaN()) == "0-00:00:00");
  // A partition whose MaxTime is past what SLURM holds is taken at SLURM's longest.
  CHECK(tuner::job_time(1e300, 1e300, "").time_limit == tuner::slurm_duration(tuner::longest_slurm_time_seconds));
}

// Issue 61: SLURM expands %j, %N, %u ... in --output; a path holding '%' is written as its literal.
TEST_CASE("the SBATCH --output line keeps a path holding % as it is") {
  tuner::SbatchHeader header;
  header.job_name = "dnntune-%j";
  header.output = "/cache/%j/log-%N.out";
  const std::string text = tuner::sbatch_header(header);
  CHECK(text.find("#SBATCH --output=/cache/%%j/log-%%N.out\n") != std::string::npos);
  CHECK(text.find("#SBATCH --job-name=dnntune-_j\n") != std::string::npos);
}

// Issue 59: the launch policy (the job's time, OpenMP runtime, allocator) in the library, from
// the request and what the caller found out, with nothing of the command line in it.
TEST_CASE("the launch policy: --time given or derived within the partition's limit, the runtime, the allocator") {
  tuner::LaunchRequest request;
  tuner::LaunchFacts facts;
  facts.partition_limit_seconds = 2 * 86400.0;
  facts.loaded_openmp = tuner::OpenMpRuntime::intel;
  facts.allocator_environment = {{"LD_PRELOAD", "/usr/lib/libjemalloc.so.2"}};
  const auto derived = tuner::job_script_options(request, "resnet152", 3600, facts);
  REQUIRE(derived);
  CHECK(derived->time_limit == "0-01:25:00");
  CHECK_FALSE(derived->requeue);
  CHECK(derived->time_note.empty());
  CHECK(derived->job_name == "dnntune-resnet152");
  CHECK(derived->openmp == tuner::OpenMpRuntime::intel);  // auto: what the caller found loaded
  CHECK(derived->allocator_environment == facts.allocator_environment);
  const auto capped = tuner::job_script_options(request, "resnet152", 1e7, facts);
  REQUIRE(capped);
  CHECK(capped->time_limit == "2-00:00:00");
  CHECK(capped->requeue);
  CHECK(capped->time_note.find("--time capped at 2-00:00:00") != std::string::npos);

  request.time_limit = "1-12";
  request.openmp = "gnu";
  request.partition = "batch";
  const auto given = tuner::job_script_options(request, "resnet152", 1e7, facts);
  REQUIRE(given);
  CHECK(given->time_limit == "1-12");  // the user's, as given: not capped, nothing said
  CHECK_FALSE(given->requeue);
  CHECK(given->time_note.empty());
  CHECK(given->openmp == tuner::OpenMpRuntime::gnu);
  CHECK(given->partition == "batch");

  tuner::LaunchRequest bad;
  CHECK_FALSE(tuner::job_script_options(bad, "resnet152", std::numeric_limits<double>::quiet_NaN(), facts));
  CHECK_FALSE(tuner::job_script_options(bad, "resnet152", 0, facts));
  bad.openmp = "llvm";
  CHECK_FALSE(tuner::check_launch_request(bad));
  bad.openmp = "auto";
  bad.partition = "a b";
  CHECK_FALSE(tuner::check_launch_request(bad));
  bad.partition = "";
  bad.time_limit = "1-24:00:00";
  CHECK_FALSE(tuner::check_launch_request(bad));
}

// Issue 61: the size of a search, counted without holding millions of points, is the search's.
TEST_CASE("the search space is counted as it is enumerated") {
  const auto rates = two_socket_node(28, 2);
  tuner::SearchSpaceOptions options;
  options.node_counts = {1, 2, 4};
  options.batches_per_process = {16, 32};
  options.fusion_megabytes = {16, 64};
  options.consider_parameter_server = true;
  const auto space = tuner::enumerate_search_space(rates, options);
  const auto size = tuner::count_search_space(rates, options);
  CHECK(size.valid == space.valid.size());
  REQUIRE(size.first);
  CHECK(*size.first == space.valid.front());
}
