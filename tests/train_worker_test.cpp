// tests/train_worker_test.cpp — the one builder of train command lines (train/train_worker.hpp)
// and the records a run writes: every typed field filled from the request, the command from the
// same builder. No training: the report is made up.
#include <catch2/catch.hpp>

#include "train/train_worker.hpp"
#include "train/training_report.hpp"

using namespace dnntune;

TEST_CASE("the train worker builder writes the request's options, train's defaults left out", "[worker]") {
  train::TrainWorkerRequest request;
  request.train.model = "resnet18";
  CHECK(train::train_worker_argv(request) == std::vector<std::string>{"dnntune", "train", "--model", "resnet18",
                                                                      "--batch", "32", "--iters", "10", "--warmup",
                                                                      "2"});
  request.executable = "/opt/dnntune";
  request.launch_processes_per_node = 2;
  request.train.model = "/data/my net.json";
  request.train.batch = 8;
  request.train.threads = 3;
  request.train.iterations = 4;
  request.train.warmup = 1;
  request.train.bucket_megabytes = 10;
  request.train.runner = records::kPythonTrainer;
  request.train.time_limit_seconds = 12;
  request.allocator = "jemalloc";
  request.record_path = "DIR/network.jsonl";
  request.json = true;
  request.output_path = "/dev/null";
  CHECK(train::train_worker_argv(request) == std::vector<std::string>{"/opt/dnntune",
                                                                      "train",
                                                                      "--launch",
                                                                      "--ppn",
                                                                      "2",
                                                                      "--model",
                                                                      "/data/my net.json",
                                                                      "--batch",
                                                                      "8",
                                                                      "--iters",
                                                                      "4",
                                                                      "--warmup",
                                                                      "1",
                                                                      "--threads",
                                                                      "3",
                                                                      "--bucket-mb",
                                                                      "10",
                                                                      "--runner",
                                                                      "python",
                                                                      "--time-limit",
                                                                      "12",
                                                                      "--record",
                                                                      "DIR/network.jsonl",
                                                                      "--json",
                                                                      "--output",
                                                                      "/dev/null",
                                                                      "--allocator",
                                                                      "jemalloc"});
  CHECK(train::train_worker_command(request).find("--model '/data/my net.json'") != std::string::npos);
}

TEST_CASE("a run's records carry its trainer, steps, warm-up, bucket and network source as fields", "[worker]") {
  train::TrainingReport report;
  report.network = "tiny_residual";
  report.backend = "torch";
  report.batch = 4;
  report.strategy = "single";
  report.warmup = 1;
  report.iterations = 2;  // a time limit ended them early
  report.requested_iterations = 5;
  report.iteration.median_seconds = report.forward.median_seconds = report.backward.median_seconds = 0.1;
  // Timed passes as the trainer reports them: a reader refuses an ok record of no repetition.
  report.iteration.repetitions = report.forward.repetitions = report.backward.repetitions = 2;
  train::TrainWorkerRequest request;
  request.train.model = "tests/fixtures/tiny_network.json";
  request.train.bucket_megabytes = 0.5;
  request.train.runner = records::kPythonTrainer;
  const std::string command = train::train_worker_command(request);
  const auto written = train::training_measurements(report, request.train, command);
  REQUIRE(written.size() == 3);
  for (const auto& record : written) {
    CHECK(record.trainer == "python");
    CHECK(record.warmup_steps == 1);
    CHECK(record.steps == 5);
    CHECK(record.bucket_megabytes == 0.5);
    CHECK(record.network_source == "tests/fixtures/tiny_network.json");
    CHECK(record.network == "tiny_residual");
    CHECK(record.precision == "fp32");
    CHECK(record.command == command);
    const auto back = records::measurement_from_json_line(records::to_json_line(record), "x");
    REQUIRE(back);
    CHECK(records::to_json_line(*back) == records::to_json_line(record));
  }
  // The records carry the precision the trainer ran: on a GPU it resolves `auto` to tf32 from
  // compute capability 8.0 on (fp32 convolutions on TF32 tensor cores, PyTorch's default).
  report.backend = "torch-cuda";
  report.precision = "tf32";
  CHECK(train::training_measurements(report, request.train, command).front().precision == "tf32");
}
