// calibrate/module_report.cpp — see module_report.hpp.
#include "calibrate/module_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "calibrate/layer_operands.hpp"

#include "records/measurement.hpp"
#include "train/anchor.hpp"
#include "workloads/costs.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::calibrate {

namespace {

using workloads::Pass;

// One backend, batch, setting and allocator: what a micro-run and an anchor run are compared
// within (micro-runs under glibc-tuned, `calibrate --allocator`, against steps under it).
using RecordSetting = std::tuple<std::string, std::int64_t, int, bool, int, std::string>;
RecordSetting setting_of(const records::Measurement& record) {
  return {record.backend, record.batch, record.threads, record.smt, record.processes, record.allocator};
}

// The newest record of each measurement (a later line replaces an earlier one).
std::vector<records::Measurement> newest_of_each(std::vector<records::Measurement> all) {
  std::map<std::string, std::size_t> latest;
  for (std::size_t position = 0; position < all.size(); ++position)
    latest[records::measurement_key(all[position])] = position;
  std::vector<records::Measurement> kept;
  for (const auto& [key, position] : latest) kept.push_back(std::move(all[position]));
  return kept;
}

const char* context_pass(Pass pass) { return pass == Pass::forward ? "forward" : "backward"; }

// A layer's isolated time of one context pass: the sum of its micro-runs of the passes it runs in
// the network; counts measured and missing passes. An unimplemented pass is inside another one.
double isolated_layer_seconds(const workloads::Layer& layer, const std::string& pass_name,
                              const std::map<std::pair<std::string, std::string>, const records::Measurement*>& micro,
                              int& measured, int& missing) {
  double seconds = 0;
  for (const Pass pass : workloads::all_passes) {
    if (context_pass(pass) != pass_name || !has_pass(layer.spec, pass)) continue;
    if (pass == Pass::backward_data && !layer.computes_data_gradient) continue;
    if (pass != Pass::forward && !layer.runs_backward) continue;
    const auto found = micro.find({layer.descriptor, workloads::pass_name(pass)});
    if (found != micro.end() && found->second->status == records::MeasurementStatus::ok) {
      seconds += found->second->median_seconds;
      ++measured;
    } else if (found == micro.end() || found->second->status != records::MeasurementStatus::unimplemented) {
      ++missing;
    }
  }
  return seconds;
}

}  // namespace

Expected<ModuleReport> make_module_report(const std::string& directory, int worst_count) {
  const std::string anchors_path = directory + "/" + train::anchor_records_file;
  if (!std::filesystem::exists(anchors_path))
    return bad_input(directory + " has no " + train::anchor_records_file +
                     ": no network was trained for real there (calibrate with --anchor, or `dnntune train "
                     "--module-times --record " +
                     anchors_path + "`)");
  auto anchors = records::read_measurements(anchors_path);
  if (!anchors) return anchors.error();
  std::vector<records::Measurement> layer_records;
  if (std::filesystem::exists(directory + "/layers.jsonl")) {
    auto layers = records::read_measurements(directory + "/layers.jsonl");
    if (!layers) return layers.error();
    layer_records = newest_of_each(std::move(layers->records));
  }
  const std::vector<records::Measurement> anchor_records = newest_of_each(std::move(anchors->records));

  std::map<RecordSetting, std::map<std::pair<std::string, std::string>, const records::Measurement*>> micro;
  for (const records::Measurement& record : layer_records)
    if (record.kind == records::MeasurementKind::layer)
      micro[setting_of(record)][{record.descriptor, record.pass}] = &record;
  using Run = std::tuple<std::string, RecordSetting>;  // network, setting
  std::map<Run, std::map<std::pair<std::string, std::string>, const records::Measurement*>> modules;
  std::map<Run, std::map<std::string, const records::Measurement*>> steps;
  for (const records::Measurement& record : anchor_records) {
    if (record.status != records::MeasurementStatus::ok || record.nodes != 1) continue;
    if (record.kind == records::MeasurementKind::module)
      modules[{record.network, setting_of(record)}][{record.module, record.pass}] = &record;
    else if (record.kind == records::MeasurementKind::network)
      steps[{record.network, setting_of(record)}][record.pass] = &record;
  }
  if (modules.empty())
    return bad_input(anchors_path +
                     " holds no module times: its runs did not time their layers "
                     "(`dnntune train --module-times`; anchors of this dnntune do)");

  ModuleReport report;
  report.directory = directory;
  const std::map<std::pair<std::string, std::string>, const records::Measurement*> none;
  for (const auto& [run, timed] : modules) {
    const auto& [name, setting] = run;
    const auto& [backend, batch, threads, smt, processes, allocator] = setting;
    // The network the run trained: a built-in by name, else the source it was built from.
    auto network = workloads::load_network(name);
    if (!network) network = workloads::load_network(timed.begin()->second->network_source);
    if (!network) continue;
    const auto micro_found = micro.find(setting);
    const auto& micro_here = micro_found == micro.end() ? none : micro_found->second;
    for (const char* pass : {"forward", "backward"}) {
      ModulePassSums sums{name, backend, allocator, batch, threads, processes, smt, pass};
      for (const workloads::Layer& layer : network->layers) {
        int measured = 0, missing = 0;
        const double isolated = isolated_layer_seconds(layer, pass, micro_here, measured, missing);
        sums.isolated_seconds += isolated;
        sums.measured_passes += measured;
        sums.missing_passes += missing;
        const auto module = timed.find({layer.name, pass});
        if (module == timed.end()) continue;
        sums.in_network_seconds += module->second->median_seconds;
        ++sums.modules;
        if (measured > 0 && missing == 0)
          report.worst.push_back({name, layer.name, layer.descriptor, pass, allocator, batch, threads, processes,
                                  isolated, module->second->median_seconds});
      }
      const auto step = steps.find(run);
      if (step != steps.end() && step->second.count(pass)) sums.step_seconds = step->second.at(pass)->median_seconds;
      // The median over steps of the per-step sum, when recorded: the sum of the modules' own
      // medians drops each module's slow steps and reads low on a busy machine.
      if (step != steps.end() && step->second.count(std::string(pass) + "_modules"))
        sums.in_network_seconds = step->second.at(std::string(pass) + "_modules")->median_seconds;
      report.passes.push_back(sums);
    }
  }
  std::stable_sort(report.worst.begin(), report.worst.end(), [](const auto& left, const auto& right) {
    return std::abs(left.isolated_seconds - left.in_network_seconds) >
           std::abs(right.isolated_seconds - right.in_network_seconds);
  });
  if (static_cast<int>(report.worst.size()) > worst_count) report.worst.resize(static_cast<std::size_t>(worst_count));
  return report;
}

namespace {

std::string ratio_text(double numerator, double denominator) {
  if (!(denominator > 0) || !(numerator > 0)) return "    -";
  char text[32];
  std::snprintf(text, sizeof text, "%5.2f", numerator / denominator);
  return text;
}

double ratio_or_null(double numerator, double denominator) {
  return denominator > 0 && numerator > 0 ? numerator / denominator : 0;
}

}  // namespace

std::string module_report_text(const ModuleReport& report) {
  std::ostringstream out;
  char line[400];
  out << "Layers in isolation, inside the step, and the step (" << report.directory << ")\n";
  out << "  isolated: the sum of the raw micro-runs (layers.jsonl) of every layer pass the network runs;\n"
         "  in-network: each layer's own time inside the trained step (network.jsonl, --module-times)\n";
  std::snprintf(line, sizeof line, "  %-14s %-6s %-11s %5s %-7s %-8s %11s %11s %11s %7s %7s %7s  %s\n", "network",
                "backend", "allocator", "batch", "setting", "pass", "isolated ms", "in-net ms", "step ms", "iso/st",
                "net/st", "iso/net", "micro-runs");
  out << line;
  for (const ModulePassSums& row : report.passes) {
    const std::string setting =
        std::to_string(row.processes) + "x" + std::to_string(row.threads) + (row.smt ? "s" : "");
    std::snprintf(line, sizeof line,
                  "  %-14s %-6s %-11s %5lld %-7s %-8s %11.2f %11.2f %11.2f %7s %7s %7s  %d measured, %d missing\n",
                  row.network.c_str(), row.backend.c_str(), row.allocator.c_str(), static_cast<long long>(row.batch),
                  setting.c_str(), row.pass.c_str(), row.isolated_seconds * 1e3, row.in_network_seconds * 1e3,
                  row.step_seconds * 1e3, ratio_text(row.isolated_seconds, row.step_seconds).c_str(),
                  ratio_text(row.in_network_seconds, row.step_seconds).c_str(),
                  ratio_text(row.isolated_seconds, row.in_network_seconds).c_str(), row.measured_passes,
                  row.missing_passes);
    out << line;
  }
  out << "  (step - in-network = untimed glue; missing micro-runs are left out of the isolated sum)\n";
  out << "\nModules whose isolated and in-network times disagree most (every pass of the module measured)\n";
  for (const ModuleDisagreement& row : report.worst) {
    std::snprintf(line, sizeof line,
                  "  %-14s b%-4lld %dx%d %-11s %-22s %-8s isolated %9.2f ms  in-network %9.2f ms  ratio %s  %s\n",
                  row.network.c_str(), static_cast<long long>(row.batch), row.processes, row.threads,
                  row.allocator.c_str(), row.module.c_str(), row.pass.c_str(), row.isolated_seconds * 1e3,
                  row.in_network_seconds * 1e3, ratio_text(row.isolated_seconds, row.in_network_seconds).c_str(),
                  row.descriptor.c_str());
    out << line;
  }
  return out.str();
}

std::string module_report_json_text(const ModuleReport& report) {
  using nlohmann::json;
  json passes = json::array();
  for (const ModulePassSums& row : report.passes)
    passes.push_back({{"network", row.network},
                      {"backend", row.backend},
                      {"allocator", row.allocator},
                      {"batch", row.batch},
                      {"threads", row.threads},
                      {"smt", row.smt},
                      {"processes", row.processes},
                      {"pass", row.pass},
                      {"isolated_seconds", row.isolated_seconds},
                      {"measured_passes", row.measured_passes},
                      {"missing_passes", row.missing_passes},
                      {"in_network_seconds", row.in_network_seconds},
                      {"modules", row.modules},
                      {"step_seconds", row.step_seconds},
                      {"isolated_over_step", ratio_or_null(row.isolated_seconds, row.step_seconds)},
                      {"in_network_over_step", ratio_or_null(row.in_network_seconds, row.step_seconds)},
                      {"isolated_over_in_network", ratio_or_null(row.isolated_seconds, row.in_network_seconds)}});
  json worst = json::array();
  for (const ModuleDisagreement& row : report.worst)
    worst.push_back({{"network", row.network},
                     {"module", row.module},
                     {"descriptor", row.descriptor},
                     {"pass", row.pass},
                     {"allocator", row.allocator},
                     {"batch", row.batch},
                     {"threads", row.threads},
                     {"processes", row.processes},
                     {"isolated_seconds", row.isolated_seconds},
                     {"in_network_seconds", row.in_network_seconds}});
  const json out{{"schema", "dnntune.module-report"},
                 {"schema_version", 1},
                 {"directory", report.directory},
                 {"passes", passes},
                 {"worst_modules", worst}};
  return out.dump(2) + "\n";
}

}  // namespace dnntune::calibrate
