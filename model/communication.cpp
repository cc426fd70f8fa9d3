// model/communication.cpp — see communication.hpp.
#include "model/communication.hpp"
#include "records/record_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <Eigen/Dense>

namespace dnntune::model {
namespace {

struct FabricPreset {
  const char* name;
  double line_rate_gbits;
  double latency_microseconds;
};
constexpr FabricPreset fabric_presets[] = {
    {"edr", 100, 1.0}, {"hdr", 200, 1.0}, {"ndr", 400, 1.0},  {"opa", 100, 1.1},
    {"eth10", 10, 20}, {"eth25", 25, 10}, {"eth100", 100, 5},
};
constexpr double usable_fraction_of_line_rate = 0.9;

double ring_steps(int ranks) { return 2.0 * (ranks - 1); }
double ring_volume_factor(int ranks) { return ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0; }

}  // namespace

std::vector<std::string> fabric_names() {
  std::vector<std::string> names;
  for (const auto& preset : fabric_presets) names.push_back(preset.name);
  return names;
}

Expected<std::string> fabric_from_numbers(double line_rate_gbits, double latency_microseconds) {
  const records::PhysicalRange& rates = records::link_line_rate_gbits_range;
  if (!rates.holds(line_rate_gbits)) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "link bandwidth must be %g to %g Gb/s (1 Gb/s Ethernet to the fastest ports), not %g", rates.low,
                  rates.high, line_rate_gbits);
    return bad_input(text);
  }
  if (!std::isfinite(latency_microseconds) || latency_microseconds < 0 || latency_microseconds > 1e6)
    return bad_input("link latency must be a number of microseconds from 0 to 1e6, not " +
                     std::to_string(latency_microseconds));
  char name[64];
  std::snprintf(name, sizeof name, "%.6ggbps-%.6gus", line_rate_gbits, latency_microseconds);
  return std::string(name);
}

bool is_fabric_from_numbers(const std::string& name) {
  double gbits = 0, microseconds = 0;
  int consumed = 0;
  return std::sscanf(name.c_str(), "%lfgbps-%lfus%n", &gbits, &microseconds, &consumed) == 2 &&
         consumed == static_cast<int>(name.size());
}

Expected<LinkModel> fabric_preset(const std::string& name) {
  if (is_fabric_from_numbers(name)) {
    double gbits = 0, microseconds = 0;
    std::sscanf(name.c_str(), "%lfgbps-%lfus", &gbits, &microseconds);
    auto checked = fabric_from_numbers(gbits, microseconds);
    if (!checked) return checked.error();
    return LinkModel{microseconds * 1e-6, gbits / 8 * usable_fraction_of_line_rate, false, "given " + name};
  }
  for (const auto& preset : fabric_presets)
    if (name == preset.name)
      return LinkModel{preset.latency_microseconds * 1e-6, preset.line_rate_gbits / 8 * usable_fraction_of_line_rate,
                       false, "preset " + name};
  std::string known;
  for (const auto& known_name : fabric_names()) known += (known.empty() ? "" : ", ") + known_name;
  return bad_input("unknown network \"" + name + "\" (known: " + known + ", or numbers such as 25gbps-10us)");
}

Expected<double> fabric_line_rate_gbs(const std::string& name) {
  auto preset = fabric_preset(name);
  if (!preset) return preset.error();
  return preset->bandwidth_gbs / usable_fraction_of_line_rate;
}

LinkModel default_intra_node_link() {
  return LinkModel{1e-6, 10.0, false, "default shared-memory MPI (no communication records)"};
}

Expected<LinkModel> fit_allreduce_link(const std::vector<records::Measurement>& records, bool inter_node) {
  std::vector<const records::Measurement*> usable;
  std::set<std::int64_t> sizes;
  for (const auto& record : records)
    if (record.kind == records::MeasurementKind::communication && record.descriptor == "allreduce" &&
        record.status == records::MeasurementStatus::ok && record.processes > 1 && (record.nodes > 1) == inter_node &&
        // Across nodes only the one-rank-per-node sweep: a whole job's (ranks > nodes) also
        // crosses shared memory, which this link does not describe.
        (!inter_node || record.processes == record.nodes)) {
      usable.push_back(&record);
      sizes.insert(record.message_bytes);
    }
  if (sizes.size() < 2)
    return bad_input(std::string("need allreduce records of at least 2 message sizes ") +
                     (inter_node ? "across nodes" : "within a node") + " to fit latency and bandwidth");
  // T = alpha * 2(p-1) + (1/beta) * 2(p-1)/p * bytes, weighted by 1/T so that small and large
  // messages count alike (relative error). Gradients move in buckets of megabytes, and there the
  // link is not what small messages see: the bandwidth is lower than in cache, and each ring
  // step of a large message pays more than a small message's latency (over TCP, milliseconds
  // against a fraction of one: the transfer's ramp-up and handshake after each step's wait;
  // docs/results.md, "The emulated cluster"). So
  // with two or more messages of gradient size (>= 1 MiB) the bandwidth comes from them, and
  // across nodes the latency too (within a node, shared memory has no such handshake and the
  // large messages' intercept is cache effects: its latency comes from all sizes, as it does
  // when the large messages leave it negative).
  auto solve = [&](std::int64_t smallest) -> std::pair<double, double> {
    std::vector<const records::Measurement*> rows;
    for (const auto* record : usable)
      if (record->message_bytes >= smallest) rows.push_back(record);
    Eigen::MatrixXd design(rows.size(), 2);
    Eigen::VectorXd target = Eigen::VectorXd::Ones(rows.size());
    for (std::size_t row = 0; row < rows.size(); ++row) {
      const auto& record = *rows[row];
      const int ranks = inter_node ? record.nodes : record.processes;
      const double weight = 1 / record.median_seconds;
      design(row, 0) = ring_steps(ranks) * weight;
      design(row, 1) = ring_volume_factor(ranks) * static_cast<double>(record.message_bytes) * weight;
    }
    const Eigen::VectorXd solution = design.colPivHouseholderQr().solve(target);
    return {solution(0), solution(1)};
  };
  constexpr std::int64_t gradient_sized = std::int64_t{1} << 20;
  const auto all_sizes = solve(0);
  const std::size_t large_sizes =
      std::count_if(sizes.begin(), sizes.end(), [](std::int64_t size) { return size >= gradient_sized; });
  const auto gradient_sizes = large_sizes >= 2 ? solve(gradient_sized) : all_sizes;
  const double seconds_per_byte = gradient_sizes.second;
  if (!(seconds_per_byte > 0))
    return failure("allreduce records do not grow with message size: cannot fit a bandwidth");
  LinkModel link;
  const bool latency_of_gradient_sizes = inter_node && large_sizes >= 2 && gradient_sizes.first >= 0;
  link.latency_seconds = std::max(0.0, latency_of_gradient_sizes ? gradient_sizes.first : all_sizes.first);
  link.bandwidth_gbs = 1 / seconds_per_byte / 1e9;
  link.measured = true;
  const std::string sized = large_sizes >= 2 ? "messages of >= 1 MiB" : "all sizes";
  link.source = "fitted from " + std::to_string(usable.size()) + " allreduce records (bandwidth from " + sized +
                ", latency from " + (latency_of_gradient_sizes ? sized : std::string("all sizes")) + ")";
  return link;
}

double allreduce_seconds(double bytes, int ranks_per_node, int nodes, const CommunicationLinks& links) {
  if (bytes <= 0 || ranks_per_node * nodes <= 1) return 0;
  double seconds = 0;
  if (ranks_per_node > 1)
    seconds += ring_steps(ranks_per_node) * links.intra_node.latency_seconds +
               ring_volume_factor(ranks_per_node) * bytes / (links.intra_node.bandwidth_gbs * 1e9);
  if (nodes > 1)
    seconds += ring_steps(nodes) * links.inter_node.latency_seconds +
               ring_volume_factor(nodes) * bytes / (links.inter_node.bandwidth_gbs * 1e9);
  return seconds;
}

double parameter_server_seconds(double bytes, int workers, int servers, int nodes, const CommunicationLinks& links) {
  if (bytes <= 0 || workers < 1 || servers < 1) return 0;
  // Across nodes when the job spans nodes, else through shared memory.
  const LinkModel& link = nodes > 1 ? links.inter_node : links.intra_node;
  // Each server receives bytes/servers from every worker and sends as much back.
  const double per_server_bytes = 2.0 * workers * bytes / servers;
  // A worker's own link also carries its full push and pull: whichever is busier bounds it.
  const double per_worker_bytes = 2.0 * bytes;
  const double busiest_bytes = std::max(per_server_bytes, per_worker_bytes);
  return 2 * workers * link.latency_seconds / servers + busiest_bytes / (link.bandwidth_gbs * 1e9);
}

}  // namespace dnntune::model
