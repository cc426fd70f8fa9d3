// tests/train_cli_test.cpp — end-to-end tests of `dnntune train` on a tiny network: one process,
// 2 ranks through real mpirun (all-reduce: identical weights on every rank), parameter servers
// (synchronous: identical weights; asynchronous: progress, staleness recorded), the launch
// helper, records, and the configurations it must refuse (exit 2, one line). Never timings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"

using dnntune::test::check_bad_input;
using dnntune::test::CommandResult;
using dnntune::test::run_dnntune;
using dnntune::test::run_program;
using nlohmann::json;

namespace {

std::string tiny_network() { return dnntune::test::source_path("tests/fixtures/tiny_network.json"); }

// `train` on the tiny network with small defaults; `extra` options replace the defaults of the
// same name (the command refuses an option given twice) or add to them.
std::vector<std::string> train_arguments(const std::vector<std::string>& extra) {
  std::vector<std::pair<std::string, std::string>> options{
      {"--model", tiny_network()}, {"--batch", "4"}, {"--iters", "4"}, {"--warmup", "1"}, {"--threads", "1"}};
  std::vector<std::string> flags{"--json"};
  for (std::size_t i = 0; i < extra.size(); ++i) {
    const bool has_value = i + 1 < extra.size() && extra[i + 1].rfind("--", 0) != 0;
    if (!has_value) {
      flags.push_back(extra[i]);
      continue;
    }
    const auto same =
        std::find_if(options.begin(), options.end(), [&](const auto& option) { return option.first == extra[i]; });
    if (same != options.end())
      same->second = extra[i + 1];
    else
      options.emplace_back(extra[i], extra[i + 1]);
    ++i;
  }
  std::vector<std::string> arguments{"train"};
  for (const auto& [name, value] : options) arguments.insert(arguments.end(), {name, value});
  arguments.insert(arguments.end(), flags.begin(), flags.end());
  return arguments;
}

// `mpirun -np RANKS dnntune train ...`, ranks left unbound so that more ranks than cores work.
CommandResult run_under_mpirun(int ranks, const std::vector<std::string>& train_extra) {
  std::vector<std::string> arguments{"-np", std::to_string(ranks), "--allow-run-as-root", "--oversubscribe",
                                     DNNTUNE_BINARY};
  const auto train = train_arguments(train_extra);
  arguments.insert(arguments.end(), train.begin(), train.end());
  return run_program(DNNTUNE_MPIEXEC, arguments);
}

json parsed_report(const CommandResult& result) {
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  return json::parse(result.out);
}

std::vector<std::string> worker_checksums(const json& report) {
  std::vector<std::string> checksums;
  for (const json& rank : report["ranks"])
    if (rank["role"] == "worker") checksums.push_back(rank["weights_checksum"]);
  return checksums;
}

}  // namespace

TEST_CASE("one process trains the tiny network, lowers its loss and records the passes") {
  const std::string records = dnntune::test::make_temporary_directory() + "/train.jsonl";
  const json report = parsed_report(run_dnntune(train_arguments({"--iters", "8", "--record", records})));
  CHECK(report["schema"] == "dnntune.train");
  CHECK(report["strategy"] == "single");
  CHECK(report["processes"] == 1);
  CHECK(report["parameters"] == 2162);
  CHECK(report["images_per_second"].get<double>() > 0);
  const auto losses = report["losses"].get<std::vector<double>>();
  REQUIRE(losses.size() == 9);
  CHECK(losses.back() < losses.front());
  REQUIRE(report["ranks"].size() == 1);
  CHECK(report["ranks"][0]["torch_threads"] == 1);
  CHECK(report["ranks"][0]["openmp_threads"] == 1);
  CHECK_FALSE(report["ranks"][0]["cpus"].empty());

  const auto file = dnntune::records::read_measurements(records);
  REQUIRE(file);
  REQUIRE(file->records.size() == 5);
  std::vector<std::string> passes;
  for (const auto& record : file->records) {
    CHECK(record.kind == dnntune::records::MeasurementKind::network);
    CHECK(record.network == "tiny_residual");
    CHECK(record.batch == 4);
    CHECK(record.repetitions == 8);
    CHECK(record.command.find("dnntune train --model") == 0);
    passes.push_back(record.pass);
  }
  CHECK(passes == std::vector<std::string>{"iteration", "forward", "backward", "exposed_communication", "optimizer"});
}

TEST_CASE("2 ranks all-reduce gradients and end every step with identical weights") {
  // A bucket threshold of 1 KiB splits the gradients over several buckets.
  const json report = parsed_report(run_under_mpirun(2, {"--bucket-mb", "0.001"}));
  CHECK(report["strategy"] == "allreduce");
  CHECK(report["processes"] == 2);
  CHECK(report["buckets"].get<int>() > 1);
  const auto checksums = worker_checksums(report);
  REQUIRE(checksums.size() == 2);
  CHECK(checksums[0] == checksums[1]);
  CHECK(report["timings"]["exposed_communication"]["repetitions"] == 8);  // 4 steps x 2 workers, pooled
}

TEST_CASE("synchronous parameter servers give every worker identical weights") {
  const json report = parsed_report(run_under_mpirun(3, {"--ps-servers", "1"}));
  CHECK(report["strategy"] == "ps-sync");
  CHECK(report["workers"] == 2);
  CHECK(report["servers"] == 1);
  const auto checksums = worker_checksums(report);
  REQUIRE(checksums.size() == 2);
  CHECK(checksums[0] == checksums[1]);
}

TEST_CASE("asynchronous parameter servers make progress and record the staleness they see") {
  // Each worker has its own random batch, so a worker that runs ahead (a busy machine decides which)
  // fits its batch and raises the other's loss for a while: after 12 steps rank 0's loss ended above
  // its first once in CI. 100 steps fit both batches whatever the interleaving (last losses near 0.01
  // under load and with either worker stopped for 2 s, against a first of 2.3): a loss still near its
  // first then means updates that did not train.
  const int steps = 100;
  const json report =
      parsed_report(run_under_mpirun(3, {"--ps-servers", "1", "--async", "--iters", std::to_string(steps)}));
  CHECK(report["strategy"] == "ps-async");
  const auto staleness = report["staleness_counts"].get<std::vector<std::int64_t>>();
  std::int64_t updates = 0;
  for (const auto count : staleness) updates += count;
  CHECK(updates == 2 * (steps + 1));  // every push of both workers, warm-up included, was applied
  const auto losses = report["losses"].get<std::vector<double>>();
  CHECK(losses.back() < losses.front() / 4);
}

TEST_CASE("the launch helper composes the mpirun line with its binding, prints it and runs it") {
  const auto dry =
      run_dnntune({"train", "--launch", "--ppn", "2", "--threads", "1", "--model", tiny_network(), "--dry-run"});
  INFO(dry.err);
  REQUIRE(dry.exit_code == 0);
  CHECK(dry.out.find("mpirun -np 2 --map-by ppr:2:") == 0);
  CHECK(dry.out.find("PE=1 --bind-to core") != std::string::npos);
  CHECK(dry.out.find("train --model") != std::string::npos);

  if (std::thread::hardware_concurrency() < 2) return;  // 2 x 1 bound ranks need 2 cores
  const auto run = run_dnntune({"train", "--launch", "--ppn", "2", "--threads", "1", "--model", tiny_network(),
                                "--batch", "4", "--iters", "3", "--warmup", "1", "--json"});
  CHECK(run.err.find("dnntune: launching: mpirun") != std::string::npos);
  const json report = parsed_report(run);
  REQUIRE(report["ranks"].size() == 2);
  CHECK(report["ranks"][0]["cpus"].size() == 1);  // bound to one core each
  CHECK(report["ranks"][0]["cpus"] != report["ranks"][1]["cpus"]);
}

TEST_CASE("a time limit ends the timed steps early, every rank at the same step, after at least one") {
  // A microsecond is shorter than any step: the first timed step always runs, and is the last.
  const json one = parsed_report(run_dnntune(train_arguments({"--iters", "50", "--time-limit", "1e-6"})));
  CHECK(one["iterations"] == 1);
  CHECK(one["timings"]["iteration"]["repetitions"] == 1);
  // Two ranks stop together (else the job would hang in the next all-reduce) and agree on the weights.
  const json both = parsed_report(run_under_mpirun(2, {"--iters", "50", "--time-limit", "1e-6"}));
  CHECK(both["iterations"] == 1);
  const auto checksums = worker_checksums(both);
  REQUIRE(checksums.size() == 2);
  CHECK(checksums[0] == checksums[1]);
  // The warm-up steps run whatever the limit: never timed, never cut.
  const json warmed = parsed_report(run_dnntune(train_arguments({"--warmup", "2", "--time-limit", "1e-6"})));
  CHECK(warmed["iterations"] == 1);
  CHECK(warmed["warmup"] == 2);
  CHECK(warmed["losses"].size() == 3);
  // A limit far away changes nothing.
  CHECK(parsed_report(run_dnntune(train_arguments({"--time-limit", "100000"})))["iterations"] == 4);
  check_bad_input(run_dnntune(train_arguments({"--time-limit", "0"})), "--time-limit");
  check_bad_input(run_dnntune(train_arguments({"--time-limit", "nan"})), "--time-limit");
}

TEST_CASE("configurations that cannot work are refused with one clear line") {
  const std::string too_many = std::to_string(std::thread::hardware_concurrency() + 1);
  check_bad_input(run_dnntune(train_arguments({"--threads", too_many})), "may run on only");
  check_bad_input(run_dnntune(train_arguments({"--ps-servers", "1"})), "needs more ranks than servers");
  check_bad_input(run_dnntune(train_arguments({"--batch", "0"})), "--batch must be at least 1");
  check_bad_input(run_dnntune({"train", "--model", "no_such_network"}), "resnet50");
  check_bad_input(run_dnntune(train_arguments({"--async"})), "--ps-servers");
  check_bad_input(run_dnntune(train_arguments({"--ppn", "2"})), "go with --launch");

  // Under mpirun's default binding (one core per rank) a rank cannot have 16 threads.
  const auto bound = run_program(DNNTUNE_MPIEXEC, {"-np", "2", "--allow-run-as-root", DNNTUNE_BINARY, "train",
                                                   "--model", tiny_network(), "--threads", "16"});
  INFO(bound.err);
  CHECK(bound.exit_code == 2);
  CHECK(bound.err.find("dnntune: error: rank 0: --threads 16") != std::string::npos);
  CHECK(bound.err.find("Open MPI binds each rank to one core") != std::string::npos);
  const auto limited = run_under_mpirun(3, {"--ps-servers", "1", "--time-limit", "5"});
  CHECK(limited.exit_code == 2);
  CHECK(limited.err.find("--time-limit cannot stop parameter servers early") != std::string::npos);
  const auto servers = run_under_mpirun(2, {"--ps-servers", "2"});
  CHECK(servers.exit_code == 2);
  CHECK(servers.err.find("needs more ranks than servers") != std::string::npos);
}

TEST_CASE("train refuses GPU precisions on the CPU and trains channels_last there, saying so in its records") {
  check_bad_input(run_dnntune(train_arguments({"--device", "cpu", "--precision", "bf16"})), "--device cuda");
  check_bad_input(run_dnntune(train_arguments({"--precision", "fp8"})), "--precision must be");
  check_bad_input(run_dnntune(train_arguments({"--memory-format", "nhwc"})), "--memory-format must be");
  if (!std::filesystem::exists("/dev/nvidia0")) {
    // --device auto without a GPU: the CPU; a GPU precision is refused there too.
    check_bad_input(run_dnntune(train_arguments({"--precision", "tf32"})), "sees none");
  }
  const std::string records = dnntune::test::make_temporary_directory() + "/train.jsonl";
  const json report = parsed_report(
      run_dnntune(train_arguments({"--device", "cpu", "--memory-format", "channels_last", "--record", records})));
  CHECK(report["precision"] == "fp32");
  CHECK(report["memory_format"] == "channels_last");
  const auto losses = report["losses"].get<std::vector<double>>();
  CHECK(losses.back() < losses.front());
  const auto file = dnntune::records::read_measurements(records);
  REQUIRE(file);
  REQUIRE_FALSE(file->records.empty());
  for (const auto& record : file->records) {
    CHECK(record.precision == "fp32");
    CHECK(record.memory_format == "channels_last");
    CHECK(record.command.find("--memory-format channels_last") != std::string::npos);
  }
}

TEST_CASE("train --allocator runs every variant installed here, and checks the preload took") {
  // The set-up installs jemalloc and tcmalloc (setup/debian-packages.txt); the command itself
  // fails (exit 1) when LD_PRELOAD did not map the library.
  for (const std::string allocator : {"glibc-tuned", "jemalloc", "tcmalloc"}) {
    const auto result = run_dnntune(train_arguments({"--allocator", allocator, "--iters", "2"}));
    INFO(allocator << ": " << result.err);
    CHECK(result.exit_code == 0);
    CHECK(json::parse(result.out)["images_per_second"].get<double>() > 0);
  }
  const auto unknown = run_dnntune(train_arguments({"--allocator", "hoard"}));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("installed here: default, glibc-tuned") != std::string::npos);
}

TEST_CASE("train counts the page faults of each pass: glibc's defaults fault its large blocks in every step") {
  // Batch 4096 makes the tiny network's activations 32 MiB each, past the largest mmap threshold
  // glibc's defaults adapt to (32 MiB on 64-bit): they are mapped and unmapped every step and
  // faulted in again, whatever the heap did before. glibc-tuned keeps them once its heap has
  // grown, which the warm-up and the median of five steps leave behind (with two timed steps, a
  // heap still settling on another VM's kernels read too many). Counts, not timings.
  double faults[2] = {0, 0};
  int index = 0;
  for (const std::string allocator : {"default", "glibc-tuned"}) {
    const json report = parsed_report(
        run_dnntune(train_arguments({"--allocator", allocator, "--batch", "4096", "--iters", "5", "--warmup", "2"})));
    INFO(allocator << ": " << report.dump());
    REQUIRE(report.contains("page_faults"));
    const double forward = report["page_faults"]["forward"].get<double>();
    const double backward = report["page_faults"]["backward"].get<double>();
    CHECK(forward >= 0);
    CHECK(backward >= 0);
    faults[index++] = forward + backward;
  }
  CHECK(faults[0] > 0);
  CHECK(faults[0] > 4 * faults[1]);
  const auto text = run_dnntune({"train", "--model", tiny_network(), "--batch", "4", "--iters", "1", "--warmup", "0"});
  CHECK(text.out.find("page faults (median per step and worker") != std::string::npos);
}
