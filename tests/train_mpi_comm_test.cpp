// tests/train_mpi_comm_test.cpp — communication calibration through the library, run by ctest
// under `mpirun -np 2` (every rank runs this test; rank 0 checks what it reports). Small
// messages and a short budget keep it to a few seconds. MPI starts once per process, so this
// file holds one test case.
#include <catch2/catch.hpp>

#include "train/comm/comm_sweep.hpp"
#include "train/comm/mpi_session.hpp"

using namespace dnntune::train;
using dnntune::records::Measurement;

TEST_CASE("all-reduce and exchange between the ranks of one node are timed and fitted") {
  REQUIRE(comm::started_by_mpi_launcher());
  auto session = comm::MpiSession::start();
  REQUIRE(session);
  REQUIRE((*session)->size() == 2);

  comm::CommSweepOptions options;
  options.max_message_bytes = 64 * 1024;
  options.time_budget_seconds = 4;
  options.command = "mpirun -np 2 train_mpi_comm_tests";
  const auto calibration = comm::calibrate_communication(**session, options);
  REQUIRE(calibration);
  if ((*session)->rank() != 0) {
    CHECK(calibration->records.empty());
    return;
  }
  CHECK(calibration->ranks == 2);
  CHECK(calibration->nodes == 1);
  CHECK(calibration->mpi_version.find("MPI") != std::string::npos);
  const auto sizes = comm::sweep_message_sizes(options.max_message_bytes);
  REQUIRE(calibration->records.size() == 2 * sizes.size());  // allreduce and sendrecv, intra-node only
  for (const Measurement& record : calibration->records) {
    INFO(to_json_line(record));
    CHECK(record.kind == dnntune::records::MeasurementKind::communication);
    CHECK(record.backend == "mpi");
    CHECK((record.descriptor == "allreduce" || record.descriptor == "sendrecv"));
    CHECK(record.processes == 2);
    CHECK(record.nodes == 1);
    CHECK(record.cpu_sets.size() == 2);
    CHECK(record.command == options.command);
    if (record.status == dnntune::records::MeasurementStatus::ok) {
      CHECK(record.median_seconds > 0);
      CHECK(record.repetitions >= 5);
    }
  }
  REQUIRE(calibration->fits.size() == 2);
  for (const comm::CommFit& fit : calibration->fits) {
    CHECK(fit.scope == "intra-node");
    CHECK(fit.fit.latency_seconds >= 0);
    CHECK(fit.fit.bandwidth_bytes_per_s > 0);
    CHECK(fit.link_bandwidth_bytes_per_s > 0);
  }
  const std::string text = comm::comm_calibration_text(*calibration);
  CHECK(text.find("intra-node") != std::string::npos);
  CHECK(text.find("no inter-node sweep") != std::string::npos);
}
