// model/measured_setups.cpp — see measured_setups.hpp.
#include "model/measured_setups.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "common/statistics.hpp"
#include "model/allocation.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::model {

using nlohmann::json;

double MeasuredSetup::median_iteration_seconds() const { return median(iteration_seconds); }

double MeasuredSetup::images_per_second() const {
  return static_cast<double>(processes) * static_cast<double>(batch) / median_iteration_seconds();
}

std::vector<MeasuredSetup> measured_setups_from_records(const std::vector<records::Measurement>& records,
                                                        const records::MachineProfile& machine,
                                                        const std::string& backend) {
  const std::string fingerprint = records::fingerprint(machine);
  using Key = std::tuple<std::string, std::int64_t, int, int, bool, std::string>;
  std::map<Key, MeasuredSetup> setups;
  for (const records::Measurement& record : records)
    if (record.kind == records::MeasurementKind::network && record.pass == "iteration" &&
        record.status == records::MeasurementStatus::ok && record.backend == backend &&
        record.machine_fingerprint == fingerprint && record.nodes == 1 && record.median_seconds > 0 &&
        std::isfinite(record.median_seconds) && records::training_runner(record) == records::kPythonTrainer) {
      MeasuredSetup& setup =
          setups[{record.network, record.batch, record.processes, record.threads, record.smt, record.allocator}];
      setup = {record.network,
               record.batch,
               record.processes,
               record.threads,
               record.smt,
               record.allocator,
               std::move(setup.iteration_seconds),
               ""};
      setup.iteration_seconds.push_back(record.median_seconds);
    }
  std::vector<MeasuredSetup> out;
  for (auto& [key, setup] : setups) out.push_back(std::move(setup));
  return out;
}

std::vector<MeasuredSetup> with_recorded_jobs(const std::vector<MeasuredSetup>& setups,
                                              const std::vector<records::Measurement>& jobs,
                                              const records::MachineProfile& machine, const std::string& backend) {
  const std::string fingerprint = records::fingerprint(machine);
  std::vector<MeasuredSetup> result;
  for (const records::Measurement& job : jobs) {
    if (job.kind != records::MeasurementKind::job || job.machine_fingerprint != fingerprint || job.backend != backend ||
        job.nodes != 1 || !(job.median_seconds > 0) || !std::isfinite(job.median_seconds))
      continue;
    const std::string day = job.timestamp.substr(0, 10);
    MeasuredSetup ran{job.network, job.batch, job.processes, job.threads, job.smt, job.allocator, {}, ""};
    auto same = std::find_if(result.begin(), result.end(), [&](const MeasuredSetup& other) {
      return find_setup({ran}, other.network, other.batch, other.processes, other.threads, other.smt, other.allocator);
    });
    MeasuredSetup* setup = same != result.end() ? &*same : &result.emplace_back(std::move(ran));
    setup->iteration_seconds.push_back(job.median_seconds);
    setup->from_jobs = setup->iteration_seconds.size() == 1
                           ? "a job of yours, " + day
                           : std::to_string(setup->iteration_seconds.size()) + " jobs of yours, the last " + day;
  }
  for (const MeasuredSetup& setup : setups)
    if (!find_setup(result, setup.network, setup.batch, setup.processes, setup.threads, setup.smt, setup.allocator))
      result.push_back(setup);
  return result;
}

const MeasuredSetup* find_setup(const std::vector<MeasuredSetup>& setups, const std::string& network,
                                std::int64_t batch, int processes, int threads, bool smt,
                                const std::string& allocator) {
  for (const MeasuredSetup& setup : setups)
    if (setup.network == network && setup.batch == batch && setup.processes == processes && setup.threads == threads &&
        setup.smt == smt && setup.allocator == allocator)
      return &setup;
  return nullptr;
}

json measured_setups_to_json(const std::vector<MeasuredSetup>& setups) {
  json out = json::array();
  for (const MeasuredSetup& setup : setups)
    out.push_back({{"network", setup.network},
                   {"batch", setup.batch},
                   {"processes_per_node", setup.processes},
                   {"threads_per_process", setup.threads},
                   {"smt", setup.smt},
                   {"allocator", setup.allocator},
                   {"iteration_seconds", setup.iteration_seconds}});
  return out;
}

Expected<std::vector<MeasuredSetup>> measured_setups_from_json(const json& in, const std::string& origin) {
  const std::string where = origin + ": pytorch_setups";
  if (!in.is_array()) return bad_input(where + " must be an array");
  std::vector<MeasuredSetup> setups;
  std::set<std::tuple<std::string, std::int64_t, int, int, bool, std::string>> seen;
  const auto whole = [](const json& value, long long low, long long high) {
    return value.is_number_integer() && value.get<long long>() >= low && value.get<long long>() <= high;
  };
  try {
    for (const json& item : in) {
      if (!whole(item.at("batch"), 1, 1 << 20) || !whole(item.at("processes_per_node"), 1, 4096) ||
          !whole(item.at("threads_per_process"), 1, 4096))
        return bad_input(where + ": batch, processes_per_node and threads_per_process must be whole numbers >= 1");
      MeasuredSetup setup{item.at("network").get<std::string>(),
                          item.at("batch").get<std::int64_t>(),
                          item.at("processes_per_node").get<int>(),
                          item.at("threads_per_process").get<int>(),
                          item.at("smt").get<bool>(),
                          item.at("allocator").get<std::string>(),
                          item.at("iteration_seconds").get<std::vector<double>>(),
                          ""};
      if (setup.network.empty()) return bad_input(where + ": a setup's network is empty");
      if (!valid_allocator_name(setup.allocator))
        return bad_input(where + ": " + setup.network + ": the allocator must be lower-case letters, digits and '-'");
      if (setup.iteration_seconds.empty()) return bad_input(where + ": " + setup.network + ": no iteration_seconds");
      for (const double seconds : setup.iteration_seconds)
        if (!(seconds > 0) || !(seconds < 1e7))
          return bad_input(where + ": " + setup.network + ": iteration_seconds must be positive, finite seconds");
      if (!seen.insert({setup.network, setup.batch, setup.processes, setup.threads, setup.smt, setup.allocator}).second)
        return bad_input(where + ": " + setup.network + " at batch " + std::to_string(setup.batch) + ", " +
                         std::to_string(setup.processes) + "x" + std::to_string(setup.threads) + " under " +
                         setup.allocator + " is listed twice");
      setups.push_back(std::move(setup));
    }
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin);
  }
  return setups;
}

}  // namespace dnntune::model
