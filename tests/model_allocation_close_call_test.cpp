// tests/model_allocation_close_call_test.cpp — the close calls the allocator settles (tuner::
// recommend_allocator): two layouts within what their runs move, decided under the recommended
// allocator where its gain was measured, by the setups PyTorch timed from Python, by a job of
// yours, and by PyTorch's runs of the top score the tie-break passed over.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/allocation.hpp"
#include "tests/allocation_fixtures.hpp"
#include "tests/model_fixtures.hpp"
#include "tuner/allocator_choice.hpp"
#include "tuner/recommendation.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using namespace dnntune::model;

namespace {

// A setting of the close-call tests: P x T at batch 8, images/s within [low, high] x its
// figure, with its confidence and the run-to-run spread and runs behind it.
Prediction close_call_setting(int processes, int threads, double images_per_second, double low, double high,
                              const std::string& confidence, double run_spread_log_sd, int runs) {
  Prediction prediction;
  prediction.configuration.processes_per_node = processes;
  prediction.configuration.threads_per_process = threads;
  prediction.configuration.batch_per_process = 8;
  prediction.images_per_second = images_per_second;
  prediction.iteration_seconds = 8.0 * processes / images_per_second;
  prediction.images_per_second_low = low * images_per_second;
  prediction.images_per_second_high = high * images_per_second;
  prediction.confidence = confidence;
  prediction.run_spread_log_sd = run_spread_log_sd;
  prediction.anchor.anchor.runs = runs;
  return prediction;
}

// An allocator variant's fit at `threads` per process (0: the pooled fit) from its share of
// memory not reused, with a narrow band.
AllocatorFit fitted_variant(const std::string& name, double non_reuse, int threads) {
  AllocatorFit result{name, non_reuse, 0.95 * non_reuse, 1.05 * non_reuse, 1};
  result.own_sd = 0.01 * non_reuse;
  result.threads = threads;
  return result;
}

// The close call the PyTorch-timed tests decide: the tiny network at 2x1 and 1x2, both measured,
// 2x1 ahead within its runs; glibc's defaults fault more at one thread per process than at two,
// and glibc-tuned saves all of it; glibc's defaults and glibc-tuned installed.
struct TimedCloseCall {
  TimedCloseCall();
  workloads::Network network;
  tuner::Recommendation recommendation;
  AllocationModel model;
  std::vector<tuner::InstalledAllocator> installed;
};

workloads::Network tiny_network() {
  auto network = workloads::load_network(DNNTUNE_SOURCE_DIR "/tests/fixtures/tiny_network.json");
  if (!network) throw std::runtime_error(network.error().message);
  return std::move(*network);
}

TimedCloseCall::TimedCloseCall() : network(tiny_network()), model(test::one_ns_per_byte()) {
  const auto measured = [](int processes, int threads, double iteration_seconds) {
    return close_call_setting(processes, threads, 8.0 * processes / iteration_seconds, 0.9, 1.1, "measured", 0.05, 3);
  };
  recommendation.ranking = {{measured(2, 1, 1.95), 8.2}, {measured(1, 2, 1.0), 8.0}};
  recommendation.best = recommendation.ranking.front();
  const double fresh = fresh_bytes_per_step(network, 8);
  const double unit_one = fresh * fault_seconds_per_byte(model, 1, 2);
  const double unit_two = fresh * fault_seconds_per_byte(model, 2, 1);
  model.variants = {fitted_variant("glibc-tuned", 0, 0), fitted_variant("default", 0.3 / unit_two, 0),
                    fitted_variant("glibc-tuned", 0, 1), fitted_variant("default", 0.5 / unit_one, 1),
                    fitted_variant("glibc-tuned", 0, 2), fitted_variant("default", 0.3 / unit_two, 2)};
  installed = {{"default", {}}, {"glibc-tuned", {{"MALLOC_MMAP_THRESHOLD_", "1073741824"}}}};
}

}  // namespace

TEST_CASE("a close call under glibc's defaults is decided under the recommended allocator where it was measured") {
  const auto network = workloads::load_network(DNNTUNE_SOURCE_DIR "/tests/fixtures/tiny_network.json");
  REQUIRE(network);
  const auto measured = [](int processes, int threads, double iteration_seconds) {
    return close_call_setting(processes, threads, 8.0 * processes / iteration_seconds, 0.9, 1.1, "measured", 0.1, 3);
  };
  // Under glibc's defaults 2x1 leads 1x2 by 2.5%, within their runs' spread.
  tuner::Recommendation recommendation;
  recommendation.ranking = {{measured(2, 1, 1.95), 8.2}, {measured(1, 2, 1.0), 8.0}};
  recommendation.best = recommendation.ranking.front();
  REQUIRE(tuner::within_run_spread(recommendation.ranking[0].prediction, recommendation.ranking[1].prediction));
  const double fresh = fresh_bytes_per_step(*network, 8);
  AllocationModel model = test::one_ns_per_byte();
  const double unit_one = fresh * fault_seconds_per_byte(model, 1, 2),
               unit_two = fresh * fault_seconds_per_byte(model, 2, 1);
  // glibc's defaults fault in 0.05 s a step more at one thread per process, 0.5 s at two.
  model.variants = {fitted_variant("glibc-tuned", 0, 0), fitted_variant("default", 0.3 / unit_two, 0),
                    fitted_variant("glibc-tuned", 0, 1), fitted_variant("default", 0.05 / unit_one, 1),
                    fitted_variant("glibc-tuned", 0, 2), fitted_variant("default", 0.5 / unit_two, 2)};
  const std::vector<tuner::InstalledAllocator> installed = {
      {"default", {}}, {"glibc-tuned", {{"MALLOC_MMAP_THRESHOLD_", "1073741824"}}}};
  tuner::Recommendation decided = recommendation;
  tuner::recommend_allocator(decided, model, *network, installed, "");
  REQUIRE(decided.allocator);
  CHECK(decided.allocator->chosen == "glibc-tuned");
  CHECK(decided.best.prediction.configuration.processes_per_node == 1);  // 16 images/s against 8.4
  CHECK(decided.chosen_by_tie_break);
  CHECK(decided.choice_note.find("1 ppn x 2 threads, SMT off, batch 8/process under glibc-tuned is predicted 16.0 "
                                 "images/s against 8.4 under glibc-tuned") != std::string::npos);

  // Pooled over pairs of unknown thread counts (a calibration written before they were kept): the
  // pooled fit says nothing about the layouts, the pick stays.
  AllocationModel pooled = model;
  pooled.variants.resize(2);
  tuner::Recommendation kept = recommendation;
  tuner::recommend_allocator(kept, pooled, *network, installed, "");
  CHECK(kept.best.prediction.configuration.processes_per_node == 2);
  CHECK(kept.choice_note.empty());
  // The pairs ran at the pick's count: its gain is measured, the rival's is not; the pick stays.
  pooled.paired_threads = {1};
  tuner::Recommendation at_pick = recommendation;
  tuner::recommend_allocator(at_pick, pooled, *network, installed, "");
  CHECK(at_pick.best.prediction.configuration.processes_per_node == 2);
  // The pairs ran at the rival's count (two threads, the base anchor's) and the pick's gain is the
  // pooled fit's: the setup real steps checked under glibc-tuned is recommended.
  pooled.paired_threads = {2};
  tuner::Recommendation checked = recommendation;
  tuner::recommend_allocator(checked, pooled, *network, installed, "");
  REQUIRE(checked.allocator);
  CHECK(checked.allocator->chosen == "glibc-tuned");
  CHECK(checked.best.prediction.configuration.processes_per_node == 1);
  CHECK(checked.chosen_by_tie_break);
  CHECK(checked.choice_note.find("glibc-tuned's gain at 1 thread per process is the pooled fit's, glibc-tuned's at 2 "
                                 "threads per process was measured") != std::string::npos);
  // glibc's defaults asked for (--allocator default): the close call stays glibc's defaults'.
  tuner::Recommendation asked = recommendation;
  tuner::recommend_allocator(asked, model, *network, installed, "default");
  CHECK(asked.best.prediction.configuration.processes_per_node == 2);
  // Setups apart by less than the runs move (the gains at one and two threads nearly alike): the
  // runs' pick stays.
  AllocationModel alike = model;
  alike.variants[5] = fitted_variant("default", 0.1 / unit_two, 2);  // 1x2: 1.0 -> 0.9 s, 8.9 images/s against 8.4
  tuner::Recommendation unresolved = recommendation;
  tuner::recommend_allocator(unresolved, alike, *network, installed, "");
  CHECK(unresolved.best.prediction.configuration.processes_per_node == 2);
  // Two settings far apart are not a close call: the faster stays, whatever the allocator.
  tuner::Recommendation apart = recommendation;
  apart.ranking[1].prediction = measured(1, 2, 1.5);
  tuner::recommend_allocator(apart, model, *network, installed, "");
  CHECK(apart.best.prediction.configuration.processes_per_node == 2);
}

TEST_CASE_METHOD(TimedCloseCall,
                 "the close call's setups timed by PyTorch decide it where they are apart by more than runs move") {
  // glibc-tuned gains alike at both thread counts (the C++ trainer's view): the runs' pick, 2x1, stays.
  const auto answer = [&](const AllocationModel& with) {
    tuner::Recommendation decided = recommendation;
    tuner::recommend_allocator(decided, with, network, installed, "");
    return decided;
  };
  const tuner::Recommendation by_model = answer(model);
  REQUIRE(by_model.allocator);
  CHECK(by_model.allocator->chosen == "glibc-tuned");
  CHECK(by_model.best.prediction.configuration.processes_per_node == 2);
  const auto setup = [&](int processes, int threads, std::vector<double> seconds) {
    return MeasuredSetup{network.name, 8, processes, threads, false, "glibc-tuned", std::move(seconds), ""};
  };
  // PyTorch timed both under glibc-tuned: 1x2 at 11.4 images/s, 2x1 at 8.9: 1x2 is recommended.
  AllocationModel timed = model;
  timed.pytorch_setups = {setup(2, 1, {1.8}), setup(1, 2, {0.70})};
  const tuner::Recommendation by_pytorch = answer(timed);
  CHECK(by_pytorch.best.prediction.configuration.processes_per_node == 1);
  CHECK(by_pytorch.allocator->chosen == "glibc-tuned");
  CHECK(by_pytorch.choice_note.find("timed by PyTorch from Python") != std::string::npos);
  CHECK(by_pytorch.choice_note.find("is recommended") != std::string::npos);
  // 3% apart, less than one run each moves: still the faster median (PyTorch timed the very setups
  // the job runs; the model's call between them is the C++ trainer's), and the note says how close.
  timed.pytorch_setups = {setup(2, 1, {1.8}), setup(1, 2, {0.875})};
  const tuner::Recommendation close = answer(timed);
  CHECK(close.best.prediction.configuration.processes_per_node == 1);
  CHECK(close.choice_note.find("by less than their runs move") != std::string::npos);
  CHECK(close.choice_note.find("the call is open") != std::string::npos);
  // The model's pick timed the faster: it stays, and the note says so.
  timed.pytorch_setups = {setup(2, 1, {1.7}), setup(1, 2, {0.875})};
  const tuner::Recommendation confirmed = answer(timed);
  CHECK(confirmed.best.prediction.configuration.processes_per_node == 2);
  CHECK(confirmed.choice_note.find("the pick is the fastest") != std::string::npos);
  // --verify trained the layouts for real and kept 2x1: the layout and its note stand; the
  // allocator is still decided for that layout.
  tuner::Recommendation verified = recommendation;
  verified.verified = {{recommendation.ranking[0].prediction, 8.5, 8.0, 9.0},
                       {recommendation.ranking[1].prediction, 8.4, 7.9, 8.9}};
  verified.choice_note = "verified: the model's pick measured fastest (8.50 images/s)";
  timed.pytorch_setups = {setup(2, 1, {1.8}), setup(1, 2, {0.70})};
  tuner::recommend_allocator(verified, timed, network, installed, "");
  CHECK(verified.best.prediction.configuration.processes_per_node == 2);
  CHECK(verified.choice_note.rfind("verified: ", 0) == 0);
  REQUIRE(verified.allocator);
  CHECK(verified.allocator->chosen == "glibc-tuned");
  // Only one side timed: nothing to compare, the model's pick stays.
  timed.pytorch_setups = {setup(1, 2, {0.5})};
  CHECK(answer(timed).best.prediction.configuration.processes_per_node == 2);
  // PyTorch ran 1x2 fastest under another allocator than the model recommends there: that setup,
  // and the answer says the allocator was PyTorch's pick.
  timed.pytorch_setups = {setup(2, 1, {1.8}), setup(1, 2, {0.5})};
  timed.pytorch_setups[1].allocator = "default";
  const tuner::Recommendation by_allocator = answer(timed);
  CHECK(by_allocator.best.prediction.configuration.processes_per_node == 1);
  REQUIRE(by_allocator.allocator);
  CHECK(by_allocator.allocator->chosen == "default");
  CHECK(by_allocator.allocator->chosen_by == "pytorch");
  CHECK(by_allocator.allocator->note.find("PyTorch ran default faster") != std::string::npos);
  // --allocator glibc-tuned: only setups under it compete, so the default run does not count.
  tuner::Recommendation asked = recommendation;
  tuner::recommend_allocator(asked, timed, network, installed, "glibc-tuned");
  CHECK(asked.best.prediction.configuration.processes_per_node == 2);
  CHECK(asked.allocator->chosen == "glibc-tuned");
  // The same layout under glibc-tuned timed 1.6x faster than under glibc's defaults, which the
  // C++ trainer's pair did not show: the allocator is PyTorch's, the layout stays.
  AllocationModel no_gain = model;
  no_gain.variants = {fitted_variant("glibc-tuned", 0, 0), fitted_variant("default", 0, 0)};
  timed = no_gain;
  timed.pytorch_setups = {setup(2, 1, {1.2}), setup(2, 1, {1.95})};
  timed.pytorch_setups[1].allocator = "default";
  const tuner::Recommendation allocator_only = answer(timed);
  CHECK(answer(no_gain).allocator->chosen == "default");
  CHECK(allocator_only.best.prediction.configuration.processes_per_node == 2);
  CHECK(allocator_only.allocator->chosen == "glibc-tuned");
  CHECK(allocator_only.allocator->chosen_by == "pytorch");
}

TEST_CASE_METHOD(TimedCloseCall,
                 "a job of yours that ran the passed-over setup faster turns the pick, one that ran slower does not") {
  // The first run timed the pick, 2x1 under glibc-tuned, by PyTorch; the close call's 1x2 only by the model.
  model.pytorch_setups = {MeasuredSetup{network.name, 8, 2, 1, false, "glibc-tuned", {1.8}, ""}};
  const records::MachineProfile machine = test::test_machine();
  const auto job_of_1x2 = [&](double step_seconds) {
    records::Measurement job;
    job.kind = records::MeasurementKind::job;
    job.backend = "torch";
    job.machine_fingerprint = records::fingerprint(machine);
    job.network = network.name;
    job.batch = 8;
    job.processes = 1;
    job.threads = 2;
    job.allocator = "glibc-tuned";
    job.median_seconds = step_seconds;
    job.timestamp = "2026-12-07T10:00:00Z";
    return job;
  };
  const auto answer = [&](const std::vector<records::Measurement>& jobs) {
    AllocationModel with = model;
    with.pytorch_setups = with_recorded_jobs(model.pytorch_setups, jobs, machine, "torch");
    tuner::Recommendation decided = recommendation;
    tuner::recommend_allocator(decided, with, network, installed, "");
    return decided;
  };
  CHECK(answer({}).best.prediction.configuration.processes_per_node == 2);
  // The job ran 1x2 at 11.4 images/s, the first run's 2x1 at 8.9: the job turns the pick and is named.
  const tuner::Recommendation turned = answer({job_of_1x2(0.70)});
  CHECK(turned.best.prediction.configuration.processes_per_node == 1);
  CHECK(turned.choice_note.find("a job of yours, 2026-12-07") != std::string::npos);
  // Ran slower (6.7 images/s): the pick stays.
  CHECK(answer({job_of_1x2(1.2)}).best.prediction.configuration.processes_per_node == 2);
  // Another machine's job does not count.
  auto elsewhere = job_of_1x2(0.70);
  elsewhere.machine_fingerprint = "0123456789abcdef";
  CHECK(answer({elsewhere}).best.prediction.configuration.processes_per_node == 2);
}

TEST_CASE("PyTorch's runs of other settings, the top score the tie-break passed over too, can overturn the pick") {
  const auto network = workloads::load_network(DNNTUNE_SOURCE_DIR "/tests/fixtures/tiny_network.json");
  REQUIRE(network);
  const auto point = [](int processes, int threads, double images_per_second, const std::string& confidence) {
    const bool measured = confidence == "measured";
    return close_call_setting(processes, threads, images_per_second, 0.5, 2, confidence, measured ? 0.05 : 0,
                              measured ? 1 : 0);
  };
  // The model ranked 2x1 first, modelled only; the tie-break gave the pick to 1x2, measured.
  tuner::Recommendation recommendation;
  recommendation.ranking = {{point(2, 1, 9.0, "modelled"), 9.0}, {point(1, 2, 8.0, "measured"), 8.0}};
  recommendation.best = recommendation.ranking[1];
  recommendation.chosen_by_tie_break = true;
  REQUIRE(tuner::unchecked_top_score(recommendation) == &recommendation.ranking[0]);
  AllocationModel model = test::one_ns_per_byte();
  const std::vector<tuner::InstalledAllocator> installed = {{"default", {}}};
  const auto setup = [&](int processes, int threads, std::vector<double> seconds) {
    return MeasuredSetup{network->name, 8, processes, threads, false, "default", std::move(seconds), ""};
  };
  const auto answer = [&](std::vector<MeasuredSetup> setups) {
    AllocationModel with = model;
    with.pytorch_setups = std::move(setups);
    tuner::Recommendation decided = recommendation;
    tuner::recommend_allocator(decided, with, *network, installed, "");
    return decided;
  };
  // Only the pick timed: the tie-break's pick stays.
  CHECK(answer({setup(1, 2, {1.0})}).best.prediction.configuration.processes_per_node == 1);
  // PyTorch ran 2x1 at 10.7 images/s, 1x2 at 8.0: 2x1 is recommended, and no longer by the tie-break.
  const tuner::Recommendation overturned = answer({setup(1, 2, {1.0}), setup(2, 1, {1.5})});
  CHECK(overturned.best.prediction.configuration.processes_per_node == 2);
  CHECK_FALSE(overturned.chosen_by_tie_break);
  CHECK(overturned.choice_note.find("timed by PyTorch from Python") != std::string::npos);
  // PyTorch ran it slower: the pick stays, and the note says it is the fastest.
  const tuner::Recommendation confirmed = answer({setup(1, 2, {1.0}), setup(2, 1, {2.2})});
  CHECK(confirmed.best.prediction.configuration.processes_per_node == 1);
  CHECK(confirmed.choice_note.find("the pick is the fastest") != std::string::npos);
  // A measured top score is no unchecked one.
  tuner::Recommendation measured_top = recommendation;
  measured_top.ranking[0].prediction.confidence = "measured";
  CHECK(tuner::unchecked_top_score(measured_top) == nullptr);
  // The C++ runs set 2x1 12% ahead of 1x2, beyond what their runs move (no close call); PyTorch
  // timed both and ran 1x2 faster: 1x2 is recommended.
  measured_top.best = measured_top.ranking[0];
  measured_top.chosen_by_tie_break = false;
  REQUIRE_FALSE(tuner::within_run_spread(measured_top.ranking[0].prediction, measured_top.ranking[1].prediction));
  AllocationModel with = model;
  with.pytorch_setups = {setup(1, 2, {1.0}), setup(2, 1, {2.2})};
  tuner::recommend_allocator(measured_top, with, *network, installed, "");
  CHECK(measured_top.best.prediction.configuration.processes_per_node == 1);
  CHECK(measured_top.choice_note.find("timed by PyTorch from Python") != std::string::npos);
}
