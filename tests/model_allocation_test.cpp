// tests/model_allocation_test.cpp — the allocator term (model/allocation.hpp) on hand-computed
// cases: the fresh bytes of a step, the fault cost per byte, the fit of each variant's non-reuse
// fraction against glibc-tuned with its band, the prediction under a variant from the one under
// the default, the calibration file's optional member (PyTorch's setups in it too), and the
// tuner's choice among variants. The close calls the allocators and PyTorch's runs decide:
// tests/model_allocation_close_call_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "model/allocation.hpp"
#include "model/anchors.hpp"
#include "model/calibration.hpp"
#include "model/setup_calls.hpp"
#include "tests/allocation_fixtures.hpp"
#include "tests/model_fixtures.hpp"
#include "tuner/allocator_choice.hpp"
#include "tuner/recommendation.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using namespace dnntune::model;

namespace {

AllocatorAnchor anchor(const std::string& allocator, double seconds, double spread, double fresh_bytes = 1e8,
                       std::int64_t batch = 8) {
  return {allocator, "net", batch, 1, false, 1, seconds, spread, fresh_bytes};
}

}  // namespace

TEST_CASE("fresh bytes of a step: outputs but views, input gradients but add's and concat's, weight gradients") {
  const auto network = workloads::load_network(DNNTUNE_SOURCE_DIR "/tests/fixtures/tiny_network.json");
  REQUIRE(network);
  // Per image, outputs: seven 8x16x16 tensors (conv1 .. block.relu) 7 x 2048, pool 512, conv2 and
  // relu2 256 each, avgpool 16, fc 10, loss 10 (flatten is a view): 15396 values.
  // Input gradients: bn1, relu1, block.conv, block.bn, block.relu and pool each 2048 (conv1 has
  // none, add hands it on), conv2 512, relu2 256, avgpool 256, fc 16, loss 10: 13338 values.
  // Weight gradients: 216 + 16 + 576 + 16 + 1168 + 170 = 2162 values.
  CHECK(fresh_bytes_per_step(*network, 1) == Approx(4.0 * (15396 + 13338 + 2162)));
  CHECK(fresh_bytes_per_step(*network, 2) == Approx(4.0 * (2 * (15396 + 13338) + 2162)));
}

TEST_CASE("fault cost per byte: one thread pays the one-thread figure, several share the all-cores one") {
  const AllocationModel model = test::one_ns_per_byte();
  CHECK(fault_seconds_per_byte(model, 1, 1) == Approx(1e-9));
  CHECK(fault_seconds_per_byte(model, 2, 1) == Approx(1e-9));  // 2 ns per byte shared by 2 threads
  CHECK(fault_seconds_per_byte(model, 1, 2) == Approx(2e-9));
  AllocationModel fitted = model;
  fitted.variants = {{"default", 1.5, 1.4, 1.6, 1}};
  CHECK(allocation_seconds(fitted, "default", 1e8, 1, 1) == Approx(0.15));
  CHECK(allocation_seconds(fitted, "glibc-tuned", 1e8, 1, 1) == 0);  // the reference's prior
}

TEST_CASE("each variant's non-reuse fraction is fitted against glibc-tuned's anchor, with its band") {
  // 1e8 fresh bytes at 1 ns each: 0.1 s per unit of non-reuse.
  const std::vector<AllocatorAnchor> anchors = {anchor("glibc-tuned", 1.0, 0.003), anchor("default", 1.12, 0.004),
                                                // tcmalloc at two batches: -0.1 and +0.1, so 0 with the scatter's band
                                                anchor("tcmalloc", 0.99, 0), anchor("glibc-tuned", 2.0, 0, 2e8, 16),
                                                anchor("tcmalloc", 2.02, 0, 2e8, 16),
                                                // jemalloc where glibc-tuned never ran: nothing to fit against
                                                anchor("jemalloc", 3.0, 0.01, 1e8, 32)};
  const auto model = fit_allocation(anchors, 4096, 8192);
  REQUIRE(model);
  const AllocatorFit reference = model->variant("glibc-tuned");
  CHECK(reference.non_reuse == 0);
  CHECK(reference.anchors == 2);
  const AllocatorFit glibc = model->variant("default");
  CHECK(glibc.non_reuse == Approx(1.2));                        // (1.12 - 1.0) / 0.1
  CHECK(glibc.high - glibc.non_reuse == Approx(1.645 * 0.05));  // hypot(0.003, 0.004) / 0.1
  CHECK(glibc.anchors == 1);
  CHECK(glibc.own_sd == Approx(0.04));  // its own step's 0.004 s / 0.1, without glibc-tuned's
  const AllocatorFit tcmalloc = model->variant("tcmalloc");
  CHECK(tcmalloc.non_reuse == Approx(0).margin(1e-12));
  // scatter 0.02 / (2 - 1) / 2, and the first pair's spread: glibc-tuned's 0.003 s / 0.1 s, over 2 squared
  CHECK(tcmalloc.high == Approx(1.645 * std::sqrt(0.01 + 0.03 * 0.03 / 4)));
  CHECK(tcmalloc.anchors == 2);
  const AllocatorFit jemalloc = model->variant("jemalloc");
  CHECK(jemalloc.anchors == 0);  // the prior
  CHECK(jemalloc.non_reuse == 0.5);
  CHECK_FALSE(fit_allocation(anchors, 0, 8192));
  CHECK_FALSE(fit_allocation(anchors, 4096, std::nan("")));
}

TEST_CASE("from records, each allocator's run is paired with the glibc-tuned run trained next to it") {
  records::MachineProfile machine = test::test_machine();
  records::Figure fault;
  fault.value = 4096;  // 1 ns per byte, one thread
  machine.performance.first_touch_ns_per_page = fault;
  fault.value = 8192;
  machine.performance.first_touch_ns_per_page_all_cores = fault;
  std::vector<records::Measurement> records;
  const auto run = [&](const std::string& allocator, double seconds, const std::string& runner_option = "") {
    records::Measurement record;
    record.kind = records::MeasurementKind::network;
    record.backend = "torch";
    record.machine_fingerprint = records::fingerprint(machine);
    record.network = "resnet18";
    record.pass = "iteration";
    record.batch = 8;
    record.allocator = allocator;
    record.median_seconds = seconds;
    record.repetitions = 3;
    record.trainer = runner_option.empty() ? records::kCppTrainer : records::kPythonTrainer;
    records.push_back(record);
  };
  // A first run's order: the base anchor, PyTorch's run, the default again in a process of its
  // own, the allocator variants, then a close call trains the default twice more as the VM slows.
  run("default", 1.00);
  run("default", 1.40, " --runner python");
  run("default", 1.10);
  run("glibc-tuned", 1.00);
  run("jemalloc", 1.30);
  run("default", 1.50);
  run("default", 1.80);
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const double seconds_per_unit = fresh_bytes_per_step(*network, 8) * 1e-9;
  const auto model = fit_allocation_from_records(records, machine, "torch");
  REQUIRE(model);
  CHECK(model->variant("default").non_reuse == Approx(0.10 / seconds_per_unit));  // not 0.8 s, the newest's
  CHECK(model->variant("jemalloc").non_reuse == Approx(0.30 / seconds_per_unit));
  CHECK(model->variant("default").anchors == 1);
  // Runs that show no spread of their own (one timed step each) still move between runs: the gain keeps a band.
  CHECK(model->variant("default").low < model->variant("default").non_reuse);
  CHECK(model->variant("default").high > model->variant("default").non_reuse);
  CHECK(model->variant("default").own_sd > 0);
  // Without glibc-tuned nothing is compared.
  records.erase(records.begin() + 3);
  CHECK_FALSE(fit_allocation_from_records(records, machine, "torch"));
}

TEST_CASE("a step under a variant is the default's plus the difference of the allocation terms") {
  AllocationModel model = test::one_ns_per_byte();
  model.variants = {{"glibc-tuned", 0, 0, 0, 1}, {"default", 1.2, 1.1, 1.3, 1}, {"tcmalloc", 0.2, 0.1, 0.3, 1}};
  const auto tcmalloc = predict_allocator(model, "tcmalloc", 1.0, 1e8, 1, 1);
  CHECK(tcmalloc.measured);
  CHECK(tcmalloc.iteration_seconds == Approx(0.9));  // 1.0 + 0.1 x (0.2 - 1.2)
  CHECK(tcmalloc.gain == Approx(1 / 0.9));
  CHECK(tcmalloc.gain_low == Approx(1 / 0.92));   // 1.0 + 0.1 x (0.3 - 1.1)
  CHECK(tcmalloc.gain_high == Approx(1 / 0.88));  // 1.0 + 0.1 x (0.1 - 1.3)
  const auto same = predict_allocator(model, "default", 1.0, 1e8, 1, 1);
  CHECK(same.gain == 1);
  CHECK(same.gain_low == 1);
  // jemalloc was never anchored: 0.5 by the prior, 0.93 s, and a band that holds no gain.
  const auto jemalloc = predict_allocator(model, "jemalloc", 1.0, 1e8, 1, 1);
  CHECK_FALSE(jemalloc.measured);
  CHECK(jemalloc.iteration_seconds == Approx(0.93));
  CHECK(jemalloc.gain_low <= 1);
  // Extrapolated far outside the anchors, a step never falls below a tenth of the default's.
  const auto extrapolated = predict_allocator(model, "glibc-tuned", 0.1, 1e10, 1, 1);
  CHECK(extrapolated.iteration_seconds == Approx(0.01));
}

TEST_CASE("two fitted variants are compared by their own spreads: the shared reference cancels") {
  AllocationModel model = test::one_ns_per_byte();
  model.variants = {{"glibc-tuned", 0, 0, 0, 1}, {"default", 1.2, 1.1, 1.3, 1}, {"tcmalloc", 0.2, 0.1, 0.3, 1}};
  model.variants[0].own_sd = 0.01;
  model.variants[1].own_sd = 0.02;
  model.variants[2].own_sd = 0.03;
  const auto tcmalloc = predict_allocator(model, "tcmalloc", 1.0, 1e8, 1, 1);
  CHECK(tcmalloc.iteration_seconds == Approx(0.9));  // as before: 1.0 + 0.1 x (0.2 - 1.2)
  const double sd = std::hypot(0.03, 0.02);
  CHECK(tcmalloc.gain_low == Approx(1 / (0.9 + 0.1 * 1.645 * sd)));
  CHECK(tcmalloc.gain_high == Approx(1 / (0.9 - 0.1 * 1.645 * sd)));
  // Narrower than the bands taken against the reference, which count its spread twice.
  CHECK(tcmalloc.gain_low > 1 / 0.92);
  // One variant without its own spread (an older calibration): the reference bands, as before.
  model.variants[2].own_sd = -1;
  CHECK(predict_allocator(model, "tcmalloc", 1.0, 1e8, 1, 1).gain_low == Approx(1 / 0.92));
}

TEST_CASE("the calibration's allocation member: written, read back, optional, and checked") {
  AllocationModel model = test::one_ns_per_byte();
  model.variants = {{"glibc-tuned", 0, 0, 0, 1}, {"default", 1.2, 1.1, 1.3, 1}};
  model.variants[1].own_sd = 0.02;
  const auto back = allocation_from_json(allocation_to_json(model), "test");
  REQUIRE(back);
  CHECK(back->fault_ns_per_page == 4096);
  CHECK(back->variant("default").high == 1.3);
  CHECK(back->variant("default").own_sd == 0.02);
  CHECK(back->variant("glibc-tuned").own_sd < 0);  // absent: unknown
  auto bad = allocation_to_json(model);
  bad["variants"][1]["low"] = 1.25;  // above its value
  CHECK_FALSE(allocation_from_json(bad, "test"));
  bad = allocation_to_json(model);
  bad["variants"][1]["own_sd"] = -0.5;
  CHECK_FALSE(allocation_from_json(bad, "test"));
  bad = allocation_to_json(model);
  bad["fault_ns_per_page"] = -1;
  CHECK_FALSE(allocation_from_json(bad, "test"));
  bad = allocation_to_json(model);
  bad["variants"][0]["name"] = "x; rm -rf /";
  CHECK_FALSE(allocation_from_json(bad, "test"));
  CHECK(allocator_prior("default").low == 0);
  CHECK(allocator_prior("default").high == 1);
}

TEST_CASE("the recommended allocator: the largest measured median gain, else the default, and --allocator wins") {
  const auto network = workloads::load_network(DNNTUNE_SOURCE_DIR "/tests/fixtures/tiny_network.json");
  REQUIRE(network);
  Prediction best;
  best.configuration.batch_per_process = 8;
  best.iteration_seconds = 1.0;
  best.images_per_second = 8;
  best.images_per_second_low = 7;
  best.images_per_second_high = 9;
  const double fresh = fresh_bytes_per_step(*network, 8);
  AllocationModel model = test::one_ns_per_byte();
  // default: 0.2 s more than glibc-tuned per step at this network and batch; tcmalloc 0.1 s more.
  model.variants = {{"glibc-tuned", 0, 0, 0, 1},
                    {"default", 0.2 / (fresh * 1e-9), 0.19 / (fresh * 1e-9), 0.21 / (fresh * 1e-9), 1},
                    {"tcmalloc", 0.1 / (fresh * 1e-9), 0.09 / (fresh * 1e-9), 0.11 / (fresh * 1e-9), 1}};
  const std::vector<tuner::InstalledAllocator> installed = {
      {"default", {}},
      {"glibc-tuned", {{"MALLOC_MMAP_THRESHOLD_", "1073741824"}, {"MALLOC_TRIM_THRESHOLD_", "4294967295"}}},
      {"tcmalloc", {{"LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"}}}};
  auto choice = tuner::choose_allocator(model, *network, best, installed, "");
  CHECK(choice.chosen == "glibc-tuned");  // 1.0 -> 0.8 s: 1.25x, band 1.22-1.28
  CHECK(choice.chosen_by == "model");
  REQUIRE(choice.find("glibc-tuned"));
  CHECK(choice.find("glibc-tuned")->prediction.gain == Approx(1.25));
  CHECK(choice.find("glibc-tuned")->images_per_second == Approx(10));
  CHECK(choice.environment().size() == 2);
  CHECK(choice.candidates.front().allocator.name == "default");
  CHECK(tuner::allocator_json(choice)["chosen"] == "glibc-tuned");
  CHECK(tuner::allocator_table_text(choice).find("tcmalloc: 8.9 images/s") != std::string::npos);

  auto asked = tuner::choose_allocator(model, *network, best, installed, "default");
  CHECK(asked.chosen == "default");
  CHECK(asked.chosen_by == "user");
  CHECK(asked.note.find("the model would pick glibc-tuned") != std::string::npos);

  // Neither jemalloc nor tcmalloc: still an answer, which says so.
  auto glibc_only = tuner::choose_allocator(model, *network, best, {installed[0], installed[1]}, "");
  CHECK(glibc_only.chosen == "glibc-tuned");
  CHECK(glibc_only.note.find("neither jemalloc nor tcmalloc") != std::string::npos);

  // tcmalloc a little faster than glibc-tuned, within its band: the faster median still wins, and
  // the note names the other.
  auto tied_model = model;
  tied_model.variants[2] = {"tcmalloc", -0.01 / (fresh * 1e-9), -0.04 / (fresh * 1e-9), 0.02 / (fresh * 1e-9), 1};
  auto tied = tuner::choose_allocator(tied_model, *network, best, installed, "");
  CHECK(tied.find("tcmalloc")->prediction.gain > tied.find("glibc-tuned")->prediction.gain);
  CHECK(tied.chosen == "tcmalloc");
  CHECK(tied.note.find("within each other's band") != std::string::npos);
  CHECK(tied.note.find("glibc-tuned (1.25x)") != std::string::npos);
  CHECK(tied.close == std::vector<std::string>{"glibc-tuned"});  // what a first run times by PyTorch
  CHECK(choice.close.empty());                                   // tcmalloc's band lies below glibc-tuned's
  // A faster median whose band reaches below no gain: still the better bet, and the note says its
  // band includes no gain.
  tied_model.variants[2] = {"tcmalloc", -0.01 / (fresh * 1e-9), -0.04 / (fresh * 1e-9), 0.25 / (fresh * 1e-9), 1};
  auto reaching = tuner::choose_allocator(tied_model, *network, best, installed, "");
  CHECK(reaching.find("tcmalloc")->prediction.gain_low < 1);
  CHECK(reaching.chosen == "tcmalloc");
  CHECK(reaching.close == std::vector<std::string>{"glibc-tuned"});
  CHECK(reaching.note.find("includes no gain") != std::string::npos);
  // The only measured variant 1.1x with a band reaching below no gain (one step a variant, a noisy
  // VM): recommended over glibc's defaults, where its median says more than its band.
  AllocationModel wide = model;
  wide.variants = {{"glibc-tuned", 0, 0, 0, 1},
                   {"default", 0.09 / (fresh * 1e-9), -0.05 / (fresh * 1e-9), 0.3 / (fresh * 1e-9), 1}};
  auto wide_choice = tuner::choose_allocator(wide, *network, best, installed, "");
  REQUIRE(wide_choice.find("glibc-tuned"));
  CHECK(wide_choice.find("glibc-tuned")->prediction.gain > 1);
  CHECK(wide_choice.find("glibc-tuned")->prediction.gain_low < 1);
  CHECK(wide_choice.chosen == "glibc-tuned");
  CHECK(wide_choice.note.find("glibc-tuned's band") != std::string::npos);
  // Measured slower than glibc's defaults: the defaults stay.
  wide.variants[1] = {"default", -0.05 / (fresh * 1e-9), -0.2 / (fresh * 1e-9), 0.1 / (fresh * 1e-9), 1};
  CHECK(tuner::choose_allocator(wide, *network, best, installed, "").chosen == "default");
  // Beyond glibc-tuned's band, tcmalloc is recommended.
  tied_model.variants[2] = {"tcmalloc", -0.1 / (fresh * 1e-9), -0.11 / (fresh * 1e-9), -0.09 / (fresh * 1e-9), 1};
  CHECK(tuner::choose_allocator(tied_model, *network, best, installed, "").chosen == "tcmalloc");

  // Priors only: nothing measured, the default stays.
  auto prior = tuner::choose_allocator(test::one_ns_per_byte(), *network, best, installed, "");
  CHECK(prior.chosen == "default");
  CHECK(prior.note.find("prior") != std::string::npos);
  // No fault cost (a spec machine): not modelled, the default stays.
  auto unmodelled = tuner::choose_allocator(std::nullopt, *network, best, installed, "");
  CHECK(unmodelled.chosen == "default");
  CHECK(unmodelled.chosen_by == "unmodelled");
}

TEST_CASE("pairs at several thread counts are also fitted per count, and a prediction there uses its own") {
  // One thread per process (two processes): glibc's defaults 0.1 s over glibc-tuned; two threads
  // in one process: 0.4 s over (per unit of fresh bytes x fault cost at each layout).
  const auto at = [](const std::string& allocator, double seconds, int threads, int processes) {
    return AllocatorAnchor{allocator, "net", 8, threads, false, processes, seconds, 0.01, 1e8};
  };
  AllocationModel costs = test::one_ns_per_byte();
  const double one_thread_unit = 1e8 * fault_seconds_per_byte(costs, 1, 2);
  const double two_thread_unit = 1e8 * fault_seconds_per_byte(costs, 2, 1);
  const auto model = fit_allocation(
      {at("glibc-tuned", 1.0, 1, 2), at("default", 1.1, 1, 2), at("glibc-tuned", 0.5, 2, 1), at("default", 0.9, 2, 1)},
      costs.fault_ns_per_page, costs.fault_ns_per_page_all_cores);
  REQUIRE(model);
  CHECK(model->variant("default").anchors == 2);  // the pooled fit, both pairs
  CHECK(model->variant("default").threads == 0);
  CHECK(model->fitted_at("default", 1));
  CHECK(model->fitted_at("default", 2));
  CHECK_FALSE(model->fitted_at("default", 4));
  CHECK(model->variant("default", 1).non_reuse == Approx(0.1 / one_thread_unit));
  CHECK(model->variant("default", 2).non_reuse == Approx(0.4 / two_thread_unit));
  CHECK(model->variant("default", 4).threads == 0);  // no pair there: the pooled fit
  CHECK(model->variant("glibc-tuned", 2).threads == 2);
  // Under glibc-tuned: 1.1 -> 1.0 s at one thread, 0.9 -> 0.5 s at two.
  CHECK(predict_allocator(*model, "glibc-tuned", 1.1, 1e8, 1, 2).iteration_seconds == Approx(1.0));
  CHECK(predict_allocator(*model, "glibc-tuned", 0.9, 1e8, 2, 1).iteration_seconds == Approx(0.5));
  // Written and read back with their thread counts; a count that is not a whole number is refused.
  const auto back = allocation_from_json(allocation_to_json(*model), "test");
  REQUIRE(back);
  CHECK(back->variant("default", 2).non_reuse == Approx(model->variant("default", 2).non_reuse));
  for (const nlohmann::json& threads : {nlohmann::json(2.5), nlohmann::json(0), nlohmann::json("2")}) {
    nlohmann::json bad = allocation_to_json(*model);
    bad["variants"][0]["threads_per_process"] = threads;
    CHECK_FALSE(allocation_from_json(bad, "test"));
  }
  nlohmann::json twice = allocation_to_json(*model);
  twice["variants"].push_back(twice["variants"][1]);
  CHECK_FALSE(allocation_from_json(twice, "test"));
  // One thread count only: the pooled fit alone.
  const auto pooled = fit_allocation({at("glibc-tuned", 1.0, 1, 2), at("default", 1.1, 1, 2)}, costs.fault_ns_per_page,
                                     costs.fault_ns_per_page_all_cores);
  REQUIRE(pooled);
  CHECK_FALSE(pooled->fitted_at("default", 1));
  // ... which is measured at that count, and not at another; the counts written and read back.
  CHECK(pooled->paired_threads == std::vector<int>{1});
  CHECK(pooled->measured_at("default", 1));
  CHECK_FALSE(pooled->measured_at("default", 2));
  CHECK_FALSE(pooled->measured_at("tcmalloc", 1));  // no pair: its prior
  CHECK(model->paired_threads == std::vector<int>{1, 2});
  const auto pooled_back = allocation_from_json(allocation_to_json(*pooled), "test");
  REQUIRE(pooled_back);
  CHECK(pooled_back->paired_threads == std::vector<int>{1});
  for (const nlohmann::json& counts : {nlohmann::json(2), nlohmann::json::array({2, 1}), nlohmann::json::array({1, 1}),
                                       nlohmann::json::array({0}), nlohmann::json::array({1.5})}) {
    nlohmann::json bad = allocation_to_json(*pooled);
    bad["paired_threads"] = counts;
    CHECK_FALSE(allocation_from_json(bad, "test"));
  }
  nlohmann::json unknown = allocation_to_json(*pooled);  // a calibration written before the field
  unknown.erase("paired_threads");
  const auto older = allocation_from_json(unknown, "test");
  REQUIRE(older);
  CHECK_FALSE(older->measured_at("default", 1));
}

TEST_CASE("PyTorch's whole setups come from the Python runner's records and are checked on read") {
  const records::MachineProfile machine = test::test_machine();
  records::Measurement record;
  record.kind = records::MeasurementKind::network;
  record.backend = "torch";
  record.machine_fingerprint = records::fingerprint(machine);
  record.network = "resnet18";
  record.pass = "iteration";
  record.batch = 8;
  record.processes = 2;
  record.allocator = "glibc-tuned";
  record.median_seconds = 1.0;
  record.trainer = records::kPythonTrainer;
  std::vector<records::Measurement> records{record, record};
  records[1].median_seconds = 1.2;
  records.push_back(record);
  records.back().trainer = records::kCppTrainer;  // the C++ trainer's runs are anchors, not setups
  records.push_back(record);
  records.back().pass = "forward";
  const auto setups = measured_setups_from_records(records, machine, "torch");
  REQUIRE(setups.size() == 1);
  CHECK(setups[0].iteration_seconds == std::vector<double>{1.0, 1.2});
  CHECK(setups[0].images_per_second() == Approx(16 / 1.1));
  const auto back = measured_setups_from_json(measured_setups_to_json(setups), "test");
  REQUIRE(back);
  CHECK(back->at(0).iteration_seconds == setups[0].iteration_seconds);
  CHECK(back->at(0).processes == 2);
  const auto refused = [&](const std::string& member, const nlohmann::json& value) {
    nlohmann::json bad = measured_setups_to_json(setups);
    bad[0][member] = value;
    return !measured_setups_from_json(bad, "test");
  };
  CHECK(refused("iteration_seconds", nlohmann::json::array()));
  CHECK(refused("iteration_seconds", {1.0, -2.0}));
  CHECK(refused("batch", 0));
  CHECK(refused("threads_per_process", 2.5));
  CHECK(refused("allocator", "Not An Allocator"));
  nlohmann::json twice = measured_setups_to_json(setups);
  twice.push_back(twice[0]);
  CHECK_FALSE(measured_setups_from_json(twice, "test"));
  // In the calibration's allocation member, and back.
  AllocationModel model = test::one_ns_per_byte();
  model.variants = {allocator_prior("glibc-tuned")};
  model.pytorch_setups = setups;
  const auto read = allocation_from_json(allocation_to_json(model), "test");
  REQUIRE(read);
  CHECK(read->pytorch_setups.size() == 1);
}

TEST_CASE("PyTorch's runs of two setups settle the call between them only beyond what their runs move") {
  const auto setup = [](std::vector<double> seconds) {
    return MeasuredSetup{"resnet50", 16, 1, 2, false, "glibc-tuned", std::move(seconds), ""};
  };
  // One run each, 4% apart: within what one run moves at the floor (1.645 x 0.025 x sqrt 2 = 5.8%).
  CHECK(setup_run_log_sd(setup({3.0})) == 0);
  CHECK(compare_setups(setup({3.0}), setup({3.12}), run_to_run_log_sd).open());
  CHECK(compare_setups(setup({3.0}), setup({3.12}), run_to_run_log_sd).apart_log == Approx(std::log(1.04)));
  // Ten percent apart at the floor: settled.
  CHECK_FALSE(compare_setups(setup({3.0}), setup({3.3}), run_to_run_log_sd).open());
  // The same ten percent where one side's own runs moved by 23% (docs/results.md): open.
  const MeasuredSetup moving = setup({3.0, 3.7, 3.0});
  CHECK(setup_run_log_sd(moving) > 0.1);
  CHECK(compare_setups(setup({3.3, 3.3, 3.3}), moving, run_to_run_log_sd).open());
  // More runs that agree narrow the call: 4% apart over seven steady runs each is settled.
  CHECK_FALSE(compare_setups(setup(std::vector<double>(7, 3.0)), setup(std::vector<double>(7, 3.12)), run_to_run_log_sd)
                  .open());
}

TEST_CASE("from records, PyTorch's runs of an allocator are paired with PyTorch's glibc-tuned and defaults") {
  records::MachineProfile machine = test::test_machine();
  records::Figure fault;
  fault.value = 4096;  // 1 ns per byte, one thread
  machine.performance.first_touch_ns_per_page = fault;
  fault.value = 8192;
  machine.performance.first_touch_ns_per_page_all_cores = fault;
  std::vector<records::Measurement> records;
  const auto run = [&](const std::string& allocator, double seconds, const char* trainer) {
    records::Measurement record;
    record.kind = records::MeasurementKind::network;
    record.backend = "torch";
    record.machine_fingerprint = records::fingerprint(machine);
    record.network = "resnet18";
    record.pass = "iteration";
    record.batch = 8;
    record.allocator = allocator;
    record.median_seconds = seconds;
    record.repetitions = 3;
    record.trainer = trainer;
    records.push_back(record);
  };
  // A first run whose deciding anchors PyTorch trains: the C++ trainer's base anchor (its module
  // times), then PyTorch's glibc's defaults, glibc-tuned and tcmalloc at the same setting.
  run("default", 1.50, records::kCppTrainer);
  run("default", 1.20, records::kPythonTrainer);
  run("glibc-tuned", 1.00, records::kPythonTrainer);
  run("tcmalloc", 0.90, records::kPythonTrainer);
  const auto network = workloads::build_network("resnet18");
  REQUIRE(network);
  const double seconds_per_unit = fresh_bytes_per_step(*network, 8) * 1e-9;
  const auto model = fit_allocation_from_records(records, machine, "torch");
  REQUIRE(model);
  // The gain PyTorch saw (1.2 s against 1.0 s), not the C++ trainer's 1.5 s against PyTorch's 1.0 s.
  CHECK(model->variant("default").non_reuse == Approx(0.20 / seconds_per_unit));
  CHECK(model->variant("tcmalloc").non_reuse == Approx(-0.10 / seconds_per_unit));
  // Without PyTorch's run of glibc's defaults its variants are not compared with the C++ trainer's:
  // the C++ trainer's runs alone, here glibc's defaults without its glibc-tuned, compare nothing.
  records.erase(records.begin() + 1);
  CHECK_FALSE(fit_allocation_from_records(records, machine, "torch"));
}
