// tests/calibrate_plan_test.cpp — the calibration grid, its budget sampling and the records a plan
// turns into (pure: nothing is measured).
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "calibrate/layer_operands.hpp"
#include "calibrate/plan.hpp"
#include "calibrate/runner.hpp"
#include "workloads/backends.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using namespace dnntune::calibrate;

namespace {

PlanRequest request_for(const std::vector<std::string>& networks, double budget) {
  PlanRequest request;
  for (const auto& name : networks) request.networks.push_back(*workloads::load_network(name));
  request.backends = {"onednn", "torch"};
  request.batches = {8, 16};
  request.settings = grid_settings(2, 1);
  request.budget_seconds = budget;
  return request;
}

double total(const std::vector<PlannedMeasurement>& measurements) {
  double seconds = 0;
  for (const auto& measurement : measurements) seconds += measurement.estimated_seconds;
  return seconds;
}

}  // namespace

TEST_CASE("the grid's settings: base first, threads, SMT, co-running processes", "[layers][plan]") {
  const auto two_cores = grid_settings(2, 1);
  REQUIRE(two_cores.size() == 3);
  CHECK(two_cores[0] == Setting{2, false, 1});
  CHECK(two_cores[1] == Setting{1, false, 1});
  CHECK(two_cores[2] == Setting{1, false, 2});

  const auto smt_node = grid_settings(4, 2);
  CHECK(smt_node.front() == Setting{4, false, 1});
  const auto has = [&](Setting setting) {
    return std::find(smt_node.begin(), smt_node.end(), setting) != smt_node.end();
  };
  CHECK(has({3, false, 1}));
  CHECK(has({8, true, 1}));   // all 4 cores, both siblings
  CHECK(has({2, true, 1}));   // one core, both siblings
  CHECK(has({1, false, 4}));  // 4 single-thread processes
  CHECK(has({2, false, 2}));  // 2 processes of 2 cores
  CHECK(has({4, true, 2}));
  for (const auto& setting : smt_node) CHECK(setting.cores_per_process(2) * setting.processes <= 4);
}

TEST_CASE("layer classes separate the kernels that differ", "[layers][plan]") {
  const auto class_of = [](const std::string& descriptor) {
    return layer_class(*workloads::parse_descriptor(descriptor));
  };
  CHECK(class_of("conv:ic64ih56iw56oc256kh1kw1sh1ph0") == "conv1x1");
  CHECK(class_of("conv:ic256ih56iw56oc512kh1kw1sh2ph0") == "conv1x1_strided");
  CHECK(class_of("conv:ic64ih56iw56oc64kh3kw3sh1ph1") == "conv3x3");
  CHECK(class_of("conv:ic3ih224iw224oc64kh7kw7sh2ph3") == "conv_other");
  CHECK(class_of("conv:g32ic32ih112iw112oc32kh3kw3sh1ph1") == "conv_grouped");
  CHECK(class_of("maxpool:ic64ih112iw112kh3kw3sh2ph1") == "maxpool");
  CHECK(class_of("softmaxloss:ic1000") == "softmax_loss");
}

TEST_CASE("a plan that fits keeps the whole grid, passes follow what networks run", "[layers][plan]") {
  const auto request = request_for({"resnet18"}, 1e6);
  const Plan plan = make_plan(request, SpeedModel{});
  CHECK_FALSE(plan.sampled);
  CHECK(plan.measurements.size() == plan.grid_size);
  CHECK(plan.estimated_seconds == Approx(plan.grid_estimated_seconds));
  int network_runs = 0;
  for (const auto& measurement : plan.measurements) {
    if (measurement.whole_network) {
      ++network_runs;
      continue;
    }
    // The first convolution reads the image, which needs no gradient.
    CHECK_FALSE((measurement.descriptor == "conv:ic3ih224iw224oc64kh7kw7sh2ph3" &&
                 measurement.pass == workloads::Pass::backward_data));
    CHECK(has_pass(measurement.spec, measurement.pass));
  }
  CHECK(network_runs == 4);  // 1 network x 2 backends x 2 batches
  // Base-setting layers run first, whole-network runs next.
  CHECK(plan.measurements.front().setting == request.settings.front());
}

TEST_CASE("the plan respects the budget and samples what the model needs first", "[layers][plan]") {
  const auto full = make_plan(request_for({"resnet50", "inception_v3"}, 1e6), SpeedModel{});
  for (const double share : {0.02, 0.2, 0.5}) {
    const double budget = share * full.grid_estimated_seconds;
    const auto request = request_for({"resnet50", "inception_v3"}, budget);
    const Plan plan = make_plan(request, SpeedModel{});
    INFO("budget " << budget << " s of " << full.grid_estimated_seconds);
    CHECK(plan.sampled);
    CHECK(plan.estimated_seconds <= budget);
    CHECK(total(plan.measurements) == Approx(plan.estimated_seconds));

    std::set<std::string> base_layers, other_layers, other_classes, base_classes;
    for (const auto& measurement : plan.measurements) {
      if (measurement.whole_network) continue;
      const bool base = measurement.setting == request.settings.front();
      (base ? base_layers : other_layers).insert(measurement.descriptor);
      (base ? base_classes : other_classes).insert(layer_class(measurement.spec));
    }
    // Only once every layer is measured at the base setting do other settings get any time (but
    // where the framework runs another kernel: next test).
    std::set<std::string> other_same_kernel;
    for (const auto& measurement : plan.measurements)
      if (!measurement.whole_network && measurement.setting != request.settings.front() &&
          workloads::dispatched_class(measurement.spec, *workloads::find_backend(measurement.backend),
                                      measurement.batch, measurement.setting.threads) ==
              workloads::dispatched_class(measurement.spec, *workloads::find_backend(measurement.backend),
                                          measurement.batch, request.settings.front().threads))
        other_same_kernel.insert(measurement.descriptor);
    if (!other_same_kernel.empty()) CHECK(base_layers.size() == static_cast<std::size_t>(plan.distinct_layers));
    // Even a tight budget covers every class at the base setting before adding layers.
    CHECK(base_classes.size() >= std::min<std::size_t>(base_layers.size(), 10));
    if (share >= 0.5) CHECK(other_classes == base_classes);
  }
}

TEST_CASE("where the framework runs another kernel, a class's extremes come with the base setting's",
          "[layers][plan]") {
  // libtorch runs an unstrided 1x1 convolution at batch 8 on its own kernel at one thread,
  // oneDNN's at two: a cliff the base setting (2 threads) never shows.
  PlanRequest request = request_for({"resnet50"}, 0);
  request.batches = {8};
  request.budget_seconds = 0.1 * make_plan(request, SpeedModel{}).grid_estimated_seconds;
  const auto native = [](const PlannedMeasurement& measurement) {
    return !measurement.whole_network &&
           workloads::dispatched_class(measurement.spec, *workloads::find_backend(measurement.backend),
                                       measurement.batch,
                                       measurement.setting.threads) == workloads::KernelClass::conv_native;
  };
  for (const std::string backend : {"torch", "onednn"}) {
    INFO(backend);
    request.backends = {backend};
    const Plan plan = make_plan(request, SpeedModel{});
    REQUIRE(plan.sampled);
    // The printed plan says how it sampled, in full (it once outgrew a fixed line and was cut).
    CHECK(describe_plan(plan, request).find("then spread by size)\n") != std::string::npos);
    std::size_t first_native = plan.measurements.size(), last_base = 0, base_count = 0;
    std::set<std::string> native_layers;
    for (std::size_t index = 0; index < plan.measurements.size(); ++index) {
      const PlannedMeasurement& measurement = plan.measurements[index];
      if (measurement.setting == request.settings.front()) last_base = index, ++base_count;
      if (!native(measurement)) continue;
      first_native = std::min(first_native, index);
      native_layers.insert(measurement.descriptor);
      CHECK(measurement.setting.processes == 1);  // two co-running take it from there
    }
    if (backend == "onednn") {
      CHECK(native_layers.empty());  // no such dispatch: the base setting's layers only
      continue;
    }
    // The largest and the smallest of the class, measured before the base setting's other layers.
    CHECK(native_layers.size() == 2);
    CHECK(first_native < last_base);
    CHECK(base_count < static_cast<std::size_t>(plan.distinct_layers) * 3);  // the budget did cut the base setting
  }
}

TEST_CASE("selection keeps low priorities and skips what overflows", "[layers][plan]") {
  std::vector<PlannedMeasurement> candidates(4);
  const double seconds[] = {5, 50, 4, 1};
  for (int index = 0; index < 4; ++index) {
    candidates[index].priority = index;
    candidates[index].estimated_seconds = seconds[index];
  }
  const auto kept = select_within_budget(candidates, 10, [](const auto& m) { return m.estimated_seconds; });
  REQUIRE(kept.size() == 3);  // 5 + 4 + 1; the 50 s one does not fit
  CHECK(kept[0].priority == 0);
  CHECK(kept[1].priority == 2);
  CHECK(kept[2].priority == 3);
}

TEST_CASE("records of a plan round-trip and name their reproducing command", "[layers][plan]") {
  const auto request = request_for({"resnet18"}, 1e6);
  const Plan plan = make_plan(request, SpeedModel{});
  std::set<std::string> keys;
  for (const auto& measurement : plan.measurements) {
    records::Measurement record = planned_record(measurement, "0123456789abcdef", "default");
    record.status = records::MeasurementStatus::ok;
    record.median_seconds = 0.004;
    record.repetitions = 5;  // a reader refuses an ok record of no repetition
    record.cpu_sets = {{0}, {1}};
    record.timestamp = records::utc_timestamp_now();
    const auto parsed = records::measurement_from_json_line(records::to_json_line(record), "test");
    REQUIRE(parsed);
    CHECK(records::to_json_line(*parsed) == records::to_json_line(record));
    CHECK(keys.insert(records::measurement_key(*parsed)).second);  // one key per planned measurement
    CHECK(parsed->command.rfind("dnntune calibrate ", 0) == 0);
    if (measurement.whole_network) {
      CHECK(parsed->kind == records::MeasurementKind::network);
      CHECK(parsed->network == "resnet18");
      CHECK(parsed->pass == "forward_backward");
    } else {
      CHECK(parsed->network.empty());
      CHECK(parsed->command.find("--layer " + measurement.descriptor) != std::string::npos);
    }
  }
}

TEST_CASE("operand sets rotate small layers out of the cache", "[layers][plan]") {
  const auto small = pass_operands(*workloads::parse_descriptor("relu:ic64ih14iw14"), 8, workloads::Pass::forward);
  const auto large = pass_operands(*workloads::parse_descriptor("relu:ic64ih112iw112"), 64, workloads::Pass::forward);
  CHECK(operand_sets_for_cold_cache(small, workloads::Pass::forward, 32 << 20) == 8);
  CHECK(operand_sets_for_cold_cache(large, workloads::Pass::forward, 32 << 20) == 1);
}

TEST_CASE(
    "a micro-run's estimate counts the pages it faults in: its operand sets once, an output glibc maps afresh every "
    "run",
    "[layers][plan]") {
  const auto measurement_of = [](const std::string& descriptor, std::int64_t batch) {
    PlannedMeasurement measurement;
    measurement.backend = "torch";
    measurement.spec = *workloads::parse_descriptor(descriptor);
    measurement.descriptor = descriptor;
    measurement.pass = workloads::Pass::backward_data;
    measurement.batch = batch;
    measurement.setting = Setting{2, false, 1};
    return measurement;
  };
  SpeedModel free_pages, slow_pages;
  free_pages.first_touch_seconds_per_page = free_pages.first_touch_seconds_per_page_all_cores = 0;
  slow_pages.first_touch_seconds_per_page = slow_pages.first_touch_seconds_per_page_all_cores = 10e-6;
  // Batch 16 of 64 x 112 x 112: a 51 MB gradient, at least glibc's settled mmap threshold, so
  // each run maps and faults in 12 544 pages (125 ms at 10 us a page).
  const auto large = measurement_of("relu:ic64ih112iw112", 16);
  const double large_fault = 16.0 * 64 * 112 * 112 * 4 / 4096 * 10e-6;
  CHECK(estimate_run_fault_seconds(large, slow_pages, {}) == Approx(large_fault).epsilon(1e-9));
  CHECK(estimate_run_fault_seconds(large, free_pages, {}) == 0);
  // The measurement pays it in each of its runs; a training step's sum (the run estimate) does not.
  CHECK(estimate_run_seconds(large, slow_pages, {}) == Approx(estimate_run_seconds(large, free_pages, {})));
  CHECK(estimate_seconds(large, slow_pages, {}) - estimate_seconds(large, free_pages, {}) > 4 * large_fault);
  // Batch 4: 12.8 MB, served from the heap: its runs fault nothing, its set-up and warm-up do.
  const auto small = measurement_of("relu:ic64ih112iw112", 4);
  CHECK(estimate_run_fault_seconds(small, slow_pages, {}) == 0);
  CHECK(estimate_seconds(small, slow_pages, {}) > estimate_seconds(small, free_pages, {}) + 0.1);
  // A cache spanned by fewer operand sets fills and warms up fewer of them.
  SpeedModel small_cache = slow_pages;
  small_cache.last_level_cache_bytes = 1 << 20;
  CHECK(estimate_seconds(small, small_cache, {}) < estimate_seconds(small, slow_pages, {}));
}

TEST_CASE("a training process's first step faults in every page it holds at its peak", "[plan]") {
  const auto network = *workloads::load_network("resnet152");
  const auto cost = *workloads::network_cost(network, 32);
  SpeedModel speed;
  speed.first_touch_seconds_per_page = 10e-6;
  speed.first_touch_seconds_per_page_all_cores = 15e-6;
  const double pages = cost.training_memory_bytes() / 4096;
  CHECK(pages > 1e6);  // ResNet-152 at batch 32: several GB, tens of seconds at 10 us a page
  CHECK(estimate_first_step_fault_seconds(network, 32, Setting{2, false, 1}, speed) == Approx(pages * 10e-6));
  // Co-running processes fault their own memory at once, at the all-cores rate.
  CHECK(estimate_first_step_fault_seconds(network, 32, Setting{1, false, 2}, speed) == Approx(pages * 15e-6));
  CHECK(estimate_first_step_fault_seconds(network, 8, Setting{2, false, 1}, speed) <
        0.5 * estimate_first_step_fault_seconds(network, 32, Setting{2, false, 1}, speed));
  speed.first_touch_seconds_per_page = 0;
  CHECK(estimate_first_step_fault_seconds(network, 32, Setting{2, false, 1}, speed) == 0);
}

TEST_CASE("the cache cold operand sets span is what cores could have, not what a hypervisor reports",
          "[layers][plan]") {
  records::MachineProfile machine;
  machine.topology.pus_per_core = 2;
  // A VM's two vCPUs, each shown its host's 508 MiB L3: at most 16 MiB a core is believed.
  machine.topology.caches = {{3, "unified", std::uint64_t{508} << 20, 2, 1}};
  CHECK(last_level_cache_bytes(machine, 1) == std::int64_t{32} << 20);
  // A real socket's L3, 33 MB shared by 24 cores (48 PUs): as reported.
  machine.topology.caches = {{3, "unified", 33ull * 1000 * 1000, 2, 48}};
  CHECK(last_level_cache_bytes(machine, 1) == 66ll * 1000 * 1000);
}

TEST_CASE("micro-runs rotate weights and kept results but not what training has just written", "[layers][plan]") {
  using workloads::Pass;
  CHECK(operand_just_written("src", Pass::forward));
  CHECK(operand_just_written("src1", Pass::forward));
  CHECK_FALSE(operand_just_written("weights", Pass::forward));
  CHECK_FALSE(operand_just_written("dst", Pass::forward));
  CHECK(operand_just_written("diff_dst", Pass::backward_data));
  CHECK(operand_just_written("diff_dst", Pass::backward_weights));
  CHECK_FALSE(operand_just_written("src", Pass::backward_weights));  // kept by the forward long ago
  CHECK_FALSE(operand_just_written("weights", Pass::backward_data));

  // A ReLU at batch 16 on 64 x 56 x 56: 12.8 MB in, 12.8 MB out. Only the output rotates, so
  // it takes 6 sets to span a 32 MiB cache twice (3 if the input counted).
  const auto relu = *workloads::parse_descriptor("relu:ic64ih56iw56");
  CHECK(operand_sets_for_cold_cache(pass_operands(relu, 16, Pass::forward), Pass::forward, 32 << 20) == 6);
}

TEST_CASE("a GPU backend times each pass in each precision asked, the CPU backends in fp32 only", "[layers][plan]") {
  PlanRequest request = request_for({"resnet18"}, 1e6);
  request.backends = {"torch", "torch-cuda"};
  request.settings = {Setting{1, false, 1}};
  const std::vector<std::string> words{"fp32", "tf32", "bf16", "fp16:contiguous"};
  request.precisions.clear();
  for (const auto& word : words) request.precisions.push_back(*parse_micro_precision(word));
  CHECK(to_string(request.precisions[2]) == "bf16:channels_last");  // mixed precision goes with channels_last
  CHECK(to_string(request.precisions[1]) == "tf32:contiguous");
  const Plan plan = make_plan(request, SpeedModel{});
  std::map<std::string, std::set<std::string>> precisions_by_backend;
  std::map<std::string, std::size_t> passes_by_precision;
  std::set<std::string> keys;
  for (const auto& measurement : plan.measurements) {
    precisions_by_backend[measurement.backend].insert(to_string(measurement.precision));
    if (measurement.backend == "torch-cuda") ++passes_by_precision[to_string(measurement.precision)];
    const records::Measurement record = planned_record(measurement, "0123456789abcdef", "default");
    CHECK(record.precision == measurement.precision.precision);
    CHECK(record.memory_format == measurement.precision.memory_format);
    CHECK(keys.insert(records::measurement_key(record)).second);  // the precision tells keys apart
    if (!(measurement.precision == MicroPrecision{}))
      CHECK(record.command.find("--precision " + to_string(measurement.precision)) != std::string::npos);
  }
  CHECK(precisions_by_backend["torch"] == std::set<std::string>{"fp32:contiguous"});
  CHECK(precisions_by_backend["torch-cuda"] ==
        std::set<std::string>{"fp32:contiguous", "tf32:contiguous", "bf16:channels_last", "fp16:contiguous"});
  // Every precision times the same passes.
  REQUIRE(passes_by_precision.size() == 4);
  for (const auto& [precision, passes] : passes_by_precision) CHECK(passes == passes_by_precision["fp32:contiguous"]);
  CHECK(describe_plan(plan, request).find("GPU precisions: fp32:contiguous, tf32:contiguous") != std::string::npos);

  CHECK_FALSE(parse_micro_precision("fp8"));
  CHECK_FALSE(parse_micro_precision("bf16:nhwc"));
  CHECK_FALSE(parse_micro_precision("auto"));
}
