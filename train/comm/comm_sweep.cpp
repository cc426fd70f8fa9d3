// train/comm/comm_sweep.cpp — see comm_sweep.hpp.
// Every decision inside a sweep (how many repetitions, whether the next size still fits the
// budget) is taken identically by all ranks of the sweep's communicator: a repetition's time is
// the slowest rank's (an all-reduce of the times), and the budget check is broadcast from the
// communicator's rank 0. Otherwise ranks would disagree on how many collectives follow.
#include "train/comm/comm_sweep.hpp"

#include <mpi.h>

#include <cstdio>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "probe/timing.hpp"
#include "probe/topology.hpp"

namespace dnntune::train::comm {

using nlohmann::json;

namespace {

struct Sweep {
  std::string operation;  // "allreduce" or "sendrecv"
  std::string scope;
  MPI_Comm communicator = MPI_COMM_NULL;
  int processes = 0;
  int nodes = 0;
  std::vector<std::vector<int>> cpu_sets;  // of the communicator's ranks (filled on world rank 0)
};

struct Buffers {
  std::vector<float> send, receive;
};

// One repetition: every rank starts together, the slowest rank's time counts.
double time_once(const Sweep& sweep, std::int64_t bytes, Buffers& buffers) {
  int rank = 0;
  MPI_Comm_rank(sweep.communicator, &rank);
  MPI_Barrier(sweep.communicator);
  const double start = MPI_Wtime();
  if (sweep.operation == "allreduce") {
    MPI_Allreduce(MPI_IN_PLACE, buffers.send.data(), static_cast<int>(bytes / 4), MPI_FLOAT, MPI_SUM,
                  sweep.communicator);
  } else if (rank < 2) {
    const int peer = 1 - rank;
    MPI_Sendrecv(buffers.send.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, buffers.receive.data(),
                 static_cast<int>(bytes), MPI_BYTE, peer, 0, sweep.communicator, MPI_STATUS_IGNORE);
  }
  const double mine = MPI_Wtime() - start;
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, sweep.communicator);
  return slowest;
}

// Runs one sweep until `seconds_allowed` would be exceeded; returns its records on the
// communicator's rank 0 (empty elsewhere).
std::vector<records::Measurement> run_sweep(const Sweep& sweep, const std::vector<std::int64_t>& sizes,
                                            Buffers& buffers, double seconds_allowed,
                                            const records::Measurement& template_record) {
  int rank = 0;
  MPI_Comm_rank(sweep.communicator, &rank);
  const probe::TimingOptions timing{1, 5, 200, 0.02};
  const double deadline = probe::now_seconds() + seconds_allowed;
  double last_repetition_seconds = 0;
  std::vector<records::Measurement> records;
  for (const std::int64_t bytes : sizes) {
    // A size four times larger takes at most about four times longer; warm-up and minimum
    // repetitions included, it must fit before the deadline.
    int fits =
        probe::now_seconds() + 4 * last_repetition_seconds * (timing.warmup_runs + timing.min_repetitions) < deadline;
    MPI_Bcast(&fits, 1, MPI_INT, 0, sweep.communicator);
    records::Measurement record = template_record;
    record.descriptor = sweep.operation;
    record.message_bytes = bytes;
    record.processes = sweep.processes;
    record.nodes = sweep.nodes;
    record.cpu_sets = sweep.cpu_sets;
    record.timestamp = records::utc_timestamp_now();
    if (!fits) {
      record.status = records::MeasurementStatus::skipped;
      record.reason = "over the time budget of the sweep";
    } else {
      const probe::TimingSummary summary =
          probe::time_repeatedly([&] { return time_once(sweep, bytes, buffers); }, timing);
      last_repetition_seconds = summary.median_seconds;
      record.median_seconds = summary.median_seconds;
      record.coefficient_of_variation = summary.coefficient_of_variation;
      record.min_seconds = summary.min_seconds;
      record.max_seconds = summary.max_seconds;
      record.repetitions = summary.repetitions;
    }
    if (rank == 0) records.push_back(std::move(record));
  }
  return records;
}

std::optional<CommFit> fit_sweep(const Sweep& sweep, const std::vector<records::Measurement>& records,
                                 std::vector<std::string>& notes) {
  std::vector<TimedMessage> points;
  for (const records::Measurement& record : records)
    if (record.status == records::MeasurementStatus::ok && record.descriptor == sweep.operation &&
        record.processes == sweep.processes && record.nodes == sweep.nodes)
      points.push_back({record.message_bytes, record.median_seconds});
  auto fitted = fit_latency_bandwidth(points);
  if (!fitted) {
    notes.push_back(sweep.operation + " " + sweep.scope + ": no fit (" + fitted.error().message + ")");
    return std::nullopt;
  }
  CommFit fit;
  fit.operation = sweep.operation;
  fit.scope = sweep.scope;
  fit.processes = sweep.processes;
  fit.nodes = sweep.nodes;
  fit.fit = *fitted;
  if (auto regimes = fit_two_regimes(points)) fit.regimes = *regimes;
  fit.link_bandwidth_bytes_per_s =
      fitted->bandwidth_bytes_per_s * link_bandwidth_factor(sweep.operation, sweep.processes);
  return fit;
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string size_text(std::int64_t bytes) {
  if (bytes >= (std::int64_t{1} << 20)) return format("%.0f MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= 1024) return format("%.0f KiB", static_cast<double>(bytes) / 1024);
  return std::to_string(bytes) + " B";
}

}  // namespace

double link_bandwidth_factor(const std::string& operation, int processes) {
  return operation == "allreduce" ? 2.0 * (processes - 1) / processes : 1.0;
}

std::vector<std::int64_t> sweep_message_sizes(std::int64_t max_message_bytes) {
  const std::int64_t largest = max_message_bytes / 4 * 4;  // whole floats, for the all-reduce
  std::vector<std::int64_t> sizes;
  for (std::int64_t bytes = 4; bytes <= largest; bytes *= 4) sizes.push_back(bytes);
  if (!sizes.empty() && sizes.back() != largest) sizes.push_back(largest);
  return sizes;
}

Expected<CommCalibration> calibrate_communication(const MpiSession& session, const CommSweepOptions& options) {
  if (session.size() < 2)
    return bad_input("communication calibration needs at least 2 ranks (e.g. `mpirun -np 2 dnntune calibrate --comm`)");
  if (options.max_message_bytes < 16) return bad_input("the largest message must be at least 16 bytes");
  if (!(options.time_budget_seconds > 0)) return bad_input("the time budget must be positive");
  auto machine = probe::describe_this_machine();
  if (!machine) return machine.error();

  CommCalibration calibration;
  calibration.ranks = session.size();
  calibration.nodes = session.node_count();
  calibration.mpi_version = session.library_version();
  const int rank = session.rank(), nodes = session.node_count();

  // Every rank's CPUs and place, for the records' cpu_sets.
  const auto places = session.gather_to_rank0(json{
      {"cpus", machine->binding->allowed_pus},
      {"node", session.node_index()},
      {"local_rank", session.local_rank()}}.dump());
  std::vector<json> place_of_rank;
  for (const std::string& text : places) place_of_rank.push_back(json::parse(text));
  const auto cpu_sets_where = [&](const std::function<bool(const json&)>& member) {
    std::vector<std::vector<int>> sets;
    for (const json& place : place_of_rank)
      if (member(place)) sets.push_back(place["cpus"].get<std::vector<int>>());
    return sets;
  };

  MPI_Comm node_communicator, leader_communicator;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_communicator);
  MPI_Comm_split(MPI_COMM_WORLD, session.local_rank() == 0 ? 0 : MPI_UNDEFINED, rank, &leader_communicator);

  records::Measurement template_record;
  template_record.kind = records::MeasurementKind::communication;
  template_record.backend = "mpi";
  template_record.backend_version = calibration.mpi_version;
  template_record.machine_fingerprint = records::fingerprint(*machine);
  template_record.command = options.command;

  const bool any_node_shared = session.size() > nodes;
  const bool spans_nodes = nodes > 1;
  const int sweep_count = (any_node_shared ? 2 : 0) + (spans_nodes ? 2 : 0) + (spans_nodes && any_node_shared ? 1 : 0);
  const double seconds_per_sweep = options.time_budget_seconds / sweep_count;
  const std::vector<std::int64_t> sizes = sweep_message_sizes(options.max_message_bytes);
  Buffers buffers{std::vector<float>(static_cast<std::size_t>(sizes.back() / 4), 1.0f),
                  std::vector<float>(static_cast<std::size_t>(sizes.back() / 4), 0.0f)};

  std::vector<Sweep> reported;  // the sweeps rank 0 led, to fit
  const auto sweep_both = [&](MPI_Comm communicator, const std::string& scope, int processes, int sweep_nodes,
                              const std::vector<std::vector<int>>& cpu_sets, bool with_exchange) {
    for (const std::string operation : {"allreduce", "sendrecv"}) {
      if (operation == "sendrecv" && !with_exchange) continue;
      const Sweep sweep{operation, scope, communicator, processes, sweep_nodes, cpu_sets};
      if (rank == 0 && options.progress)
        options.progress(operation + " " + scope + ", " + std::to_string(processes) + " ranks");
      auto records = run_sweep(sweep, sizes, buffers, seconds_per_sweep, template_record);
      calibration.records.insert(calibration.records.end(), records.begin(), records.end());
      if (rank == 0) reported.push_back(sweep);
    }
  };

  if (session.local_size() >= 2)
    sweep_both(node_communicator, "intra-node", session.local_size(), 1,
               cpu_sets_where([&](const json& place) { return place["node"] == 0; }), true);
  else if (rank == 0)
    calibration.notes.push_back("node 0 runs one rank: no intra-node (shared memory) sweep");
  MPI_Barrier(MPI_COMM_WORLD);
  if (spans_nodes) {
    if (leader_communicator != MPI_COMM_NULL)
      sweep_both(leader_communicator, "inter-node", nodes, nodes,
                 cpu_sets_where([](const json& place) { return place["local_rank"] == 0; }), true);
    MPI_Barrier(MPI_COMM_WORLD);
    if (any_node_shared)
      sweep_both(MPI_COMM_WORLD, "job", session.size(), nodes, cpu_sets_where([](const json&) { return true; }), false);
  } else if (rank == 0) {
    calibration.notes.push_back("the job runs on one node: no inter-node sweep (launch it over 2 nodes or more)");
  }
  if (leader_communicator != MPI_COMM_NULL) MPI_Comm_free(&leader_communicator);
  MPI_Comm_free(&node_communicator);

  for (const Sweep& sweep : reported)
    if (auto fit = fit_sweep(sweep, calibration.records, calibration.notes)) calibration.fits.push_back(*fit);
  return calibration;
}

std::string comm_calibration_text(const CommCalibration& calibration) {
  std::string text = "dnntune communication calibration: " + std::to_string(calibration.ranks) + " ranks on " +
                     std::to_string(calibration.nodes) + " node" + (calibration.nodes == 1 ? "" : "s") + ", " +
                     calibration.mpi_version + "\n\nfitted time = latency + bytes / bandwidth:\n";
  char line[200];
  std::snprintf(line, sizeof line, "  %-10s %-11s %5s %5s %-16s %10s %14s %10s %9s %9s\n", "operation", "scope",
                "ranks", "nodes", "messages", "latency us", "bandwidth GB/s", "link GB/s", "med err", "max err");
  text += line;
  const auto fit_row = [&](const CommFit& fit, const std::string& sizes, const LatencyBandwidthFit& line_fit) {
    std::snprintf(line, sizeof line, "  %-10s %-11s %5d %5d %-16s %10.2f %14.3f %10.3f %8.1f%% %8.1f%%\n",
                  fit.operation.c_str(), fit.scope.c_str(), fit.processes, fit.nodes, sizes.c_str(),
                  line_fit.latency_seconds * 1e6, line_fit.bandwidth_bytes_per_s / 1e9,
                  line_fit.bandwidth_bytes_per_s * link_bandwidth_factor(fit.operation, fit.processes) / 1e9,
                  100 * line_fit.median_relative_error, 100 * line_fit.max_relative_error);
    text += line;
  };
  for (const CommFit& fit : calibration.fits) {
    fit_row(fit, "all sizes", fit.fit);
    if (!fit.regimes) continue;
    fit_row(fit, "< " + size_text(fit.regimes->breakpoint_bytes), fit.regimes->small);
    fit_row(fit, ">= " + size_text(fit.regimes->breakpoint_bytes), fit.regimes->large);
  }
  text += "  (link: all-reduce x 2(p-1)/p, the ring's bus bandwidth; exchange: each direction)\n\nmeasured:\n";
  std::snprintf(line, sizeof line, "  %-10s %5s %5s %10s %12s %7s %10s\n", "operation", "ranks", "nodes", "bytes",
                "median us", "cv", "GB/s");
  text += line;
  for (const records::Measurement& record : calibration.records) {
    if (record.status != records::MeasurementStatus::ok) {
      std::snprintf(line, sizeof line, "  %-10s %5d %5d %10s   %s: %s\n", record.descriptor.c_str(), record.processes,
                    record.nodes, size_text(record.message_bytes).c_str(), to_string(record.status).c_str(),
                    record.reason.c_str());
    } else {
      std::snprintf(line, sizeof line, "  %-10s %5d %5d %10s %12.2f %6.1f%% %10.3f\n", record.descriptor.c_str(),
                    record.processes, record.nodes, size_text(record.message_bytes).c_str(),
                    record.median_seconds * 1e6, 100 * record.coefficient_of_variation,
                    static_cast<double>(record.message_bytes) / record.median_seconds / 1e9);
    }
    text += line;
  }
  for (const std::string& note : calibration.notes) text += "note: " + note + "\n";
  return text;
}

std::string comm_calibration_json(const CommCalibration& calibration) {
  const auto line_json = [](const CommFit& fit, const LatencyBandwidthFit& line_fit) {
    return json{{"latency_seconds", line_fit.latency_seconds},
                {"bandwidth_bytes_per_s", line_fit.bandwidth_bytes_per_s},
                {"link_bandwidth_bytes_per_s",
                 line_fit.bandwidth_bytes_per_s * link_bandwidth_factor(fit.operation, fit.processes)},
                {"median_relative_error", line_fit.median_relative_error},
                {"max_relative_error", line_fit.max_relative_error},
                {"points", line_fit.points}};
  };
  json fits = json::array();
  for (const CommFit& fit : calibration.fits) {
    json entry = {{"operation", fit.operation},
                  {"scope", fit.scope},
                  {"processes", fit.processes},
                  {"nodes", fit.nodes},
                  {"fit", line_json(fit, fit.fit)}};
    if (fit.regimes)
      entry["regimes"] = {{"breakpoint_bytes", fit.regimes->breakpoint_bytes},
                          {"small", line_json(fit, fit.regimes->small)},
                          {"large", line_json(fit, fit.regimes->large)}};
    fits.push_back(entry);
  }
  json records = json::array();
  for (const records::Measurement& record : calibration.records)
    records.push_back(json::parse(records::to_json_line(record)));
  const json document = {{"schema", "dnntune.comm_calibration"},
                         {"schema_version", 1},
                         {"ranks", calibration.ranks},
                         {"nodes", calibration.nodes},
                         {"mpi_version", calibration.mpi_version},
                         {"fits", fits},
                         {"records", records},
                         {"notes", calibration.notes}};
  return document.dump(2) + "\n";
}

}  // namespace dnntune::train::comm
