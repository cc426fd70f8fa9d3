// calibrate/calibration_report.cpp — see calibration_report.hpp.
#include "calibrate/calibration_report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "calibrate/layer_operands.hpp"
#include "calibrate/plan.hpp"
#include "calibrate/runner.hpp"
#include "records/machine_profile.hpp"
#include "records/measurement.hpp"
#include "train/anchor.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::calibrate {

using workloads::Pass;

namespace {

// Which records are comparable: one backend and batch at one setting.
struct Group {
  std::string backend;
  std::int64_t batch;
  int threads;
  bool smt;
  int processes;
  bool operator<(const Group& other) const {
    return std::tie(backend, batch, threads, smt, processes) <
           std::tie(other.backend, other.batch, other.threads, other.smt, other.processes);
  }
};

Group group_of(const records::Measurement& record) {
  return {record.backend, record.batch, record.threads, record.smt, record.processes};
}

// Layer records by group, then by (descriptor, pass).
using LayerTimes = std::map<Group, std::map<std::pair<std::string, std::string>, const records::Measurement*>>;

struct Index {
  std::vector<records::Measurement> records;  // the counting ones
  LayerTimes layers;
  std::vector<const records::Measurement*> networks;
};

Index index_records(std::vector<records::Measurement> all) {
  std::map<std::string, std::size_t> latest;
  for (std::size_t position = 0; position < all.size(); ++position) {
    const auto key = records::measurement_key(all[position]);
    const auto found = latest.find(key);
    if (found == latest.end() || all[position].status != records::MeasurementStatus::skipped ||
        all[found->second].status == records::MeasurementStatus::skipped)
      latest[key] = position;
  }
  Index index;
  for (const auto& [key, position] : latest) index.records.push_back(all[position]);
  for (const records::Measurement& record : index.records) {
    if (record.kind == records::MeasurementKind::network && record.status == records::MeasurementStatus::ok)
      index.networks.push_back(&record);
    if (record.kind == records::MeasurementKind::layer)
      index.layers[group_of(record)][{record.descriptor, record.pass}] = &record;
  }
  return index;
}

Pass pass_of(const std::string& name) {
  for (const Pass pass : workloads::all_passes)
    if (workloads::pass_name(pass) == name) return pass;
  return Pass::forward;
}

std::int64_t flops_of(const records::Measurement& record) {
  const auto spec = workloads::parse_descriptor(record.descriptor);
  return spec ? workloads::layer_cost(*spec, record.batch).pass(pass_of(record.pass)).flops : 0;
}

std::string class_of(const std::string& descriptor) {
  const auto spec = workloads::parse_descriptor(descriptor);
  return spec ? layer_class(*spec) : "?";
}

// Per class: summed seconds of the (descriptor, pass) entries both groups measured ok.
std::map<std::string, std::tuple<double, double, int>> compare_by_class(const LayerTimes& layers, const Group& base,
                                                                        const Group& other) {
  std::map<std::string, std::tuple<double, double, int>> sums;
  const auto base_found = layers.find(base), other_found = layers.find(other);
  if (base_found == layers.end() || other_found == layers.end()) return sums;
  std::map<std::string, std::set<std::string>> descriptors;
  for (const auto& [entry, record] : base_found->second) {
    const auto match = other_found->second.find(entry);
    if (record->status != records::MeasurementStatus::ok || match == other_found->second.end() ||
        match->second->status != records::MeasurementStatus::ok)
      continue;
    auto& [base_seconds, other_seconds, layer_count] = sums[class_of(entry.first)];
    base_seconds += record->median_seconds;
    other_seconds += match->second->median_seconds;
    if (descriptors[class_of(entry.first)].insert(entry.first).second) ++layer_count;
  }
  return sums;
}

void add_throughput(const Index& index, const Group& base, double peak, CalibrationReport& report) {
  std::map<std::string, std::tuple<double, double, std::set<std::string>>> classes;
  std::vector<const records::Measurement*> convolutions;
  for (const auto& [entry, record] : index.layers.at(base)) {
    if (record->status != records::MeasurementStatus::ok) continue;
    auto& [flops, seconds, descriptors] = classes[class_of(entry.first)];
    flops += static_cast<double>(flops_of(*record));
    seconds += record->median_seconds;
    descriptors.insert(entry.first);
    if (entry.first.rfind("conv:", 0) == 0) convolutions.push_back(record);
  }
  const double base_peak = peak * base.threads;
  for (const auto& [name, sums] : classes) {
    const auto& [flops, seconds, descriptors] = sums;
    if (flops <= 0) continue;  // classes that move data rather than compute
    const double gflops = flops / seconds / 1e9;
    report.throughput.push_back({base.backend, name, base.batch, base.threads, gflops,
                                 base_peak > 0 ? gflops / base_peak : 0, static_cast<int>(descriptors.size())});
  }
  // The three largest convolutions by FLOPs (each pass).
  std::stable_sort(convolutions.begin(), convolutions.end(), [](const auto* left, const auto* right) {
    const auto left_spec = workloads::parse_descriptor(left->descriptor);
    const auto right_spec = workloads::parse_descriptor(right->descriptor);
    return workloads::layer_cost(*left_spec, 1).forward.flops > workloads::layer_cost(*right_spec, 1).forward.flops;
  });
  std::set<std::string> largest;
  for (const records::Measurement* record : convolutions) {
    if (!largest.count(record->descriptor) && largest.size() == 3) continue;
    largest.insert(record->descriptor);
    const double gflops = static_cast<double>(flops_of(*record)) / record->median_seconds / 1e9;
    report.largest_convolutions.push_back({base.backend, record->descriptor, record->pass, base.batch, base.threads,
                                           gflops, base_peak > 0 ? gflops / base_peak : 0});
  }
}

// The sum of a network's layer passes (every occurrence, the passes it runs) in one group,
// forward and backward apart.
struct LayerSums {
  double forward = 0, backward = 0;
  int missing_passes = 0;  // without a measurement: left out of the sums
};

LayerSums layer_sums(const Index& index, const workloads::Network& network, const Group& group) {
  LayerSums sums;
  const auto found = index.layers.find(group);
  for (const workloads::Layer& layer : network.layers)
    for (const Pass pass : workloads::all_passes) {
      if (!has_pass(layer.spec, pass)) continue;
      if (pass == Pass::backward_data && !layer.computes_data_gradient) continue;
      if (pass != Pass::forward && !layer.runs_backward) continue;
      const records::Measurement* measured = nullptr;
      if (found != index.layers.end()) {
        const auto entry = found->second.find({layer.descriptor, workloads::pass_name(pass)});
        if (entry != found->second.end()) measured = entry->second;
      }
      // An unimplemented pass is done inside another one (oneDNN's batch-norm weights).
      if (measured && measured->status == records::MeasurementStatus::ok)
        (pass == Pass::forward ? sums.forward : sums.backward) += measured->median_seconds;
      else if (!measured || measured->status != records::MeasurementStatus::unimplemented)
        ++sums.missing_passes;
    }
  return sums;
}

const workloads::Network* network_named(std::map<std::string, workloads::Network>& networks, const std::string& name) {
  if (!networks.count(name)) {
    auto network = workloads::load_network(name);
    if (!network) return nullptr;
    networks.emplace(name, std::move(*network));
  }
  return &networks.at(name);
}

void add_additivity(const Index& index, CalibrationReport& report) {
  std::map<std::string, workloads::Network> networks;
  for (const records::Measurement* record : index.networks) {
    const workloads::Network* network = network_named(networks, record->network);
    if (!network) continue;
    const LayerSums sums = layer_sums(index, *network, group_of(*record));
    report.additivity.push_back({record->network, record->backend, record->batch, record->threads,
                                 sums.forward + sums.backward, record->median_seconds, sums.missing_passes});
  }
}

// Each anchor's forward and backward (the newest run of each network, batch and setting)
// against the layers' sums in the same setting.
void add_anchor_additivity(const Index& index, const std::vector<records::Measurement>& anchors,
                           CalibrationReport& report) {
  std::map<std::tuple<std::string, Group>, std::map<std::string, const records::Measurement*>> newest;
  for (const records::Measurement& record : anchors)
    if (record.kind == records::MeasurementKind::network && record.status == records::MeasurementStatus::ok &&
        record.nodes == 1 && record.allocator == "default" && (record.pass == "forward" || record.pass == "backward"))
      newest[{record.network, group_of(record)}][record.pass] = &record;
  std::map<std::string, workloads::Network> networks;
  for (const auto& [key, passes] : newest) {
    const auto& [name, group] = key;
    const workloads::Network* network = network_named(networks, name);
    if (!network || passes.size() != 2) continue;
    const LayerSums sums = layer_sums(index, *network, group);
    const double forward = passes.at("forward")->median_seconds, backward = passes.at("backward")->median_seconds;
    for (const auto& [pass, layers, anchor] :
         {std::tuple{"forward", sums.forward, forward}, std::tuple{"backward", sums.backward, backward},
          std::tuple{"forward+backward", sums.forward + sums.backward, forward + backward}})
      report.anchor_additivity.push_back({name, group.backend, group.batch, group.threads, group.processes, pass,
                                          layers, anchor, sums.missing_passes});
  }
}

}  // namespace

Expected<CalibrationReport> make_calibration_report(const std::string& directory) {
  auto records = records::read_measurements(directory + "/layers.jsonl");
  if (!records) return records.error();
  CalibrationReport report;
  report.directory = directory;
  if (auto machine = records::read_machine_profile(directory + "/machine.json")) {
    report.machine = machine->name;
    report.fingerprint = records::fingerprint(*machine);
    if (machine->performance.peak_fp32_gflops_per_core)
      report.peak_gflops_per_core = machine->performance.peak_fp32_gflops_per_core->value;
  }
  const Index index = index_records(std::move(records->records));
  for (const records::Measurement& record : index.records) {
    switch (record.status) {
      case records::MeasurementStatus::ok:
        ++report.ok;
        break;
      case records::MeasurementStatus::unimplemented:
        ++report.unimplemented;
        break;
      case records::MeasurementStatus::skipped:
        ++report.skipped;
        break;
      case records::MeasurementStatus::failed:
        ++report.failed;
        if (report.failures.size() < 10)
          report.failures.push_back(record.backend + " " +
                                    (record.descriptor.empty() ? record.network : record.descriptor) + " " +
                                    record.pass + ": " + record.reason);
        break;
    }
  }
  // The base setting of each backend and batch: one process on the most cores without SMT.
  std::map<std::pair<std::string, std::int64_t>, Group> bases;
  for (const auto& [group, entries] : index.layers) {
    if (group.processes != 1 || group.smt) continue;
    auto& base = bases.try_emplace({group.backend, group.batch}, group).first->second;
    if (group.threads > base.threads) base = group;
  }
  for (const auto& [key, base] : bases) {
    add_throughput(index, base, report.peak_gflops_per_core, report);
    for (const auto& [group, entries] : index.layers) {
      if (group.backend != base.backend || group.batch != base.batch) continue;
      if (group.processes == 1) {
        const Group one_thread{base.backend, base.batch, 1, false, 1};
        if (group.threads == 1 && !group.smt) continue;  // the reference itself
        for (const auto& [name, sums] : compare_by_class(index.layers, one_thread, group))
          report.scaling.push_back({base.backend, name, base.batch, group.threads, group.smt,
                                    std::get<0>(sums) / std::get<1>(sums), std::get<2>(sums)});
      } else {
        const Group alone{base.backend, base.batch, group.threads, group.smt, 1};
        for (const auto& [name, sums] : compare_by_class(index.layers, alone, group))
          report.contention.push_back({base.backend, name, base.batch, group.threads, group.processes,
                                       std::get<1>(sums) / std::get<0>(sums), std::get<2>(sums)});
      }
    }
  }
  add_additivity(index, report);
  if (std::filesystem::exists(directory + "/" + train::anchor_records_file)) {
    auto anchors = records::read_measurements(directory + "/" + train::anchor_records_file);
    if (!anchors) return anchors.error();
    add_anchor_additivity(index, anchors->records, report);
  }
  return report;
}

std::string report_text(const CalibrationReport& report) {
  std::ostringstream out;
  char line[400];
  out << "Calibration " << report.directory << " — machine " << report.machine << " (fingerprint " << report.fingerprint
      << ")\n";
  std::snprintf(line, sizeof line,
                "Records: %d ok, %d unimplemented, %d failed, %d skipped; FMA peak %.1f GFLOP/s per core\n", report.ok,
                report.unimplemented, report.failed, report.skipped, report.peak_gflops_per_core);
  out << line;
  for (const auto& failure : report.failures) out << "  failed: " << failure << "\n";

  out << "\nThroughput at the base setting (all passes; share of the FMA peak of the cores used)\n";
  std::snprintf(line, sizeof line, "  %-8s %5s %7s  %-18s %9s %6s %6s\n", "backend", "batch", "threads", "class",
                "GFLOP/s", "peak", "layers");
  out << line;
  for (const auto& row : report.throughput) {
    std::snprintf(line, sizeof line, "  %-8s %5lld %7d  %-18s %9.1f %5.0f%% %6d\n", row.backend.c_str(),
                  static_cast<long long>(row.batch), row.threads, row.layer_class.c_str(), row.gflops,
                  row.fraction_of_peak * 100, row.layers);
    out << line;
  }
  out << "\nLargest convolutions at the base setting\n";
  for (const auto& row : report.largest_convolutions) {
    std::snprintf(line, sizeof line, "  %-8s mb%-4lld %-42s %-16s %9.1f GFLOP/s %5.0f%% of peak\n", row.backend.c_str(),
                  static_cast<long long>(row.batch), row.descriptor.c_str(), row.pass.c_str(), row.gflops,
                  row.fraction_of_peak * 100);
    out << line;
  }
  // One line per backend, batch and class: the figure at each setting, with its layer count.
  const auto print_by_class = [&](const auto& rows, const auto& setting_text, const auto& figure_text) {
    std::map<std::tuple<std::string, std::int64_t, std::string>, std::string> lines;
    for (const auto& row : rows)
      lines[{row.backend, row.batch, row.layer_class}] +=
          "  " + setting_text(row) + " " + figure_text(row) + " (" + std::to_string(row.layers) + ")";
    for (const auto& [key, text] : lines) {
      std::snprintf(line, sizeof line, "  %-8s mb%-4lld %-18s", std::get<0>(key).c_str(),
                    static_cast<long long>(std::get<1>(key)), std::get<2>(key).c_str());
      out << line << text << "\n";
    }
  };
  const auto times = [](double value) {
    char text[32];
    std::snprintf(text, sizeof text, "x%.2f", value);
    return std::string(text);
  };
  out << "\nThread scaling (speed-up over 1 thread, one process; in brackets: layers measured at both)\n";
  print_by_class(
      report.scaling,
      [](const ThreadScaling& row) { return std::to_string(row.threads) + (row.smt ? "t smt:" : "t:"); },
      [&](const ThreadScaling& row) { return times(row.speedup); });
  out << "\nContention (slow-down of co-running processes against one process alone at the same threads)\n";
  print_by_class(
      report.contention,
      [](const Contention& row) { return std::to_string(row.processes) + "x" + std::to_string(row.threads) + "t:"; },
      [&](const Contention& row) { return times(row.slowdown); });
  out << "\nAdditivity (sum of layer passes against a whole-network training step)\n";
  for (const auto& row : report.additivity) {
    std::snprintf(
        line, sizeof line, "  %-14s %-8s mb%-4lld %2d threads  layers %8.1f ms  network %8.1f ms  ratio %.2f%s\n",
        row.network.c_str(), row.backend.c_str(), static_cast<long long>(row.batch), row.threads,
        row.layers_seconds * 1e3, row.network_seconds * 1e3, row.ratio(),
        row.missing_passes ? (" (" + std::to_string(row.missing_passes) + " layer passes not measured)").c_str() : "");
    out << line;
  }
  if (!report.anchor_additivity.empty())
    out << "\nAgainst real training (sum of layer passes / the trained step's pass, from network.jsonl)\n";
  for (const auto& row : report.anchor_additivity) {
    std::snprintf(
        line, sizeof line, "  %-14s %-8s mb%-4lld %dx%d  %-16s layers %8.1f ms  trained %8.1f ms  ratio %.2f%s\n",
        row.network.c_str(), row.backend.c_str(), static_cast<long long>(row.batch), row.processes, row.threads,
        row.pass.c_str(), row.layers_seconds * 1e3, row.anchor_seconds * 1e3, row.ratio(),
        row.missing_passes ? (" (" + std::to_string(row.missing_passes) + " layer passes not measured)").c_str() : "");
    out << line;
  }
  return out.str();
}

std::string report_json_text(const CalibrationReport& report) {
  using nlohmann::json;
  json out{{"schema", "dnntune.calibration-report"},
           {"schema_version", 1},
           {"directory", report.directory},
           {"machine", report.machine},
           {"fingerprint", report.fingerprint},
           {"peak_gflops_per_core", report.peak_gflops_per_core},
           {"records",
            {{"ok", report.ok},
             {"unimplemented", report.unimplemented},
             {"failed", report.failed},
             {"skipped", report.skipped}}},
           {"failures", report.failures}};
  for (const auto& row : report.throughput)
    out["throughput"].push_back({{"backend", row.backend},
                                 {"class", row.layer_class},
                                 {"batch", row.batch},
                                 {"threads", row.threads},
                                 {"gflops", row.gflops},
                                 {"fraction_of_peak", row.fraction_of_peak},
                                 {"layers", row.layers}});
  for (const auto& row : report.largest_convolutions)
    out["largest_convolutions"].push_back({{"backend", row.backend},
                                           {"descriptor", row.descriptor},
                                           {"pass", row.pass},
                                           {"batch", row.batch},
                                           {"threads", row.threads},
                                           {"gflops", row.gflops},
                                           {"fraction_of_peak", row.fraction_of_peak}});
  for (const auto& row : report.scaling)
    out["thread_scaling"].push_back({{"backend", row.backend},
                                     {"class", row.layer_class},
                                     {"batch", row.batch},
                                     {"threads", row.threads},
                                     {"smt", row.smt},
                                     {"speedup", row.speedup},
                                     {"layers", row.layers}});
  for (const auto& row : report.contention)
    out["contention"].push_back({{"backend", row.backend},
                                 {"class", row.layer_class},
                                 {"batch", row.batch},
                                 {"threads", row.threads},
                                 {"processes", row.processes},
                                 {"slowdown", row.slowdown},
                                 {"layers", row.layers}});
  for (const auto& row : report.additivity)
    out["additivity"].push_back({{"network", row.network},
                                 {"backend", row.backend},
                                 {"batch", row.batch},
                                 {"threads", row.threads},
                                 {"layers_seconds", row.layers_seconds},
                                 {"network_seconds", row.network_seconds},
                                 {"ratio", row.ratio()},
                                 {"missing_passes", row.missing_passes}});
  for (const auto& row : report.anchor_additivity)
    out["anchor_additivity"].push_back({{"network", row.network},
                                        {"backend", row.backend},
                                        {"batch", row.batch},
                                        {"threads", row.threads},
                                        {"processes", row.processes},
                                        {"pass", row.pass},
                                        {"layers_seconds", row.layers_seconds},
                                        {"anchor_seconds", row.anchor_seconds},
                                        {"ratio", row.ratio()},
                                        {"missing_passes", row.missing_passes}});
  for (const char* section :
       {"throughput", "largest_convolutions", "thread_scaling", "contention", "additivity", "anchor_additivity"})
    if (!out.contains(section)) out[section] = json::array();
  return out.dump(2) + "\n";
}

}  // namespace dnntune::calibrate
