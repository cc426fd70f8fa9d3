// tests/records_job_test.cpp — job records (kind job, written by python/dnntune/observe.py): the JSON
// round trip, the reader refusing a wrong one by name, and the jobs file keeping another machine's
// records and a second record of one job out, each named.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "records/job_records.hpp"
#include "records/measurement.hpp"
#include "tests/cli_support.hpp"

using namespace dnntune;

namespace {

records::Measurement sample_job(const std::string& id = "1234.0", const std::string& fingerprint = "00112233445566aa") {
  records::Measurement m;
  m.kind = records::MeasurementKind::job;
  m.backend = "torch";
  m.backend_version = "PyTorch 1.13.1";
  m.machine_fingerprint = fingerprint;
  m.network = "resnet18";
  m.descriptor = "allreduce";
  m.pass = "iteration";
  m.batch = 8;
  m.threads = 14;
  m.processes = 2;
  m.nodes = 2;
  m.median_seconds = 0.5;
  m.min_seconds = 0.45;
  m.max_seconds = 0.6;
  m.repetitions = 20;
  m.trainer = records::kPythonTrainer;
  m.warmup_steps = 5;
  m.steps = 20;
  m.bucket_megabytes = 25;
  m.job = {id, "slurm", "cpu", {0.49, 0.5, 0.48, 0.5}, 70.0, ""};
  m.timestamp = "2026-12-07T10:00:00Z";
  return m;
}

std::string refusal(records::Measurement m) {
  const auto read = records::measurement_from_json_line(records::to_json_line(m), "jobs.jsonl:3");
  REQUIRE_FALSE(read);
  return read.error().message;
}

}  // namespace

TEST_CASE("a job record prints back identically") {
  const auto m = sample_job();
  const auto read = records::measurement_from_json_line(records::to_json_line(m), "test");
  REQUIRE(read);
  CHECK(read->kind == records::MeasurementKind::job);
  CHECK(read->job.id == "1234.0");
  CHECK(read->job.launcher == "slurm");
  CHECK(read->job.rank_median_seconds == m.job.rank_median_seconds);
  CHECK(read->job.predicted_images_per_second == 70.0);
  CHECK(records::to_json_line(*read) == records::to_json_line(m));
  CHECK(read->job.fabric.empty());  // not said: not written
  CHECK(records::to_json_line(m).find("fabric") == std::string::npos);
  auto over_hdr = sample_job();
  over_hdr.job.fabric = "hdr";
  const auto with_fabric = records::measurement_from_json_line(records::to_json_line(over_hdr), "test");
  REQUIRE(with_fabric);
  CHECK(with_fabric->job.fabric == "hdr");
}

TEST_CASE("a wrong job record is refused by name") {
  auto died = sample_job();
  died.job.rank_median_seconds.pop_back();
  CHECK(refusal(died).find("jobs.jsonl:3: job 1234.0 has the times of 3 rank(s) of its 4") != std::string::npos);
  CHECK(refusal(died).find("a rank died") != std::string::npos);
  auto zero = sample_job();
  zero.job.rank_median_seconds[2] = 0;
  CHECK(refusal(zero).find("rank 2's median step 0") != std::string::npos);
  auto no_machine = sample_job();
  no_machine.machine_fingerprint.clear();
  CHECK(refusal(no_machine).find("has no machine fingerprint") != std::string::npos);
  auto launcher = sample_job();
  launcher.job.launcher = "pbs";
  CHECK(refusal(launcher).find("unknown job launcher 'pbs'") != std::string::npos);
  auto spaced_fabric = sample_job();
  spaced_fabric.job.fabric = "edr ib";
  CHECK(refusal(spaced_fabric).find("job 1234.0: a fabric is a name of at most 64 printable characters") !=
        std::string::npos);
  auto no_id = sample_job("");
  CHECK(refusal(no_id).find("needs an id") != std::string::npos);
  auto no_prediction = sample_job();
  no_prediction.job.predicted_images_per_second = -1;
  CHECK(refusal(no_prediction).find("predicted_images_per_second") != std::string::npos);
}

TEST_CASE("the jobs file: this machine's jobs once each, the others named") {
  const std::string path = test::make_temporary_directory() + "/jobs.jsonl";
  CHECK(records::read_job_file(path, "00112233445566aa")->jobs.empty());  // none recorded yet
  for (const auto& m : {sample_job("1"), sample_job("2", "ffeeddccbbaa9988"), sample_job("1"), sample_job("3")})
    REQUIRE(records::append_measurement(path, m));
  const auto file = records::read_job_file(path, "00112233445566aa");
  REQUIRE(file);
  REQUIRE(file->jobs.size() == 2);
  CHECK(file->jobs[0].job.id == "1");
  CHECK(file->jobs[1].job.id == "3");
  REQUIRE(file->not_taken.size() == 2);
  CHECK(file->not_taken[0].find("is of machine ffeeddccbbaa9988, not this one") != std::string::npos);
  CHECK(file->not_taken[1].find("job 1 with 4 rank(s) was recorded before") != std::string::npos);
  CHECK(records::job_file_path("/cache", "00112233445566aa") == "/cache/jobs/00112233445566aa.jsonl");
}
