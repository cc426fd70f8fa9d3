// frontend/partition_calibration.cpp — see partition_calibration.hpp.
#include "frontend/partition_calibration.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

#include <sys/wait.h>

#include "common/json_file.hpp"
#include "common/shell_words.hpp"
#include "common/text_format.hpp"
#include "model/calibration.hpp"
#include "pipeline/default_calibration.hpp"
#include "tuner/sbatch_header.hpp"

namespace dnntune::frontend {
namespace {

namespace fs = std::filesystem;

constexpr const char* node_record_schema = "dnntune.slurm-node";
constexpr int node_record_version = 1;

std::string node_record_path(const std::string& node) { return slurm_directory() + "/nodes/" + node + ".json"; }

// sinfo waits for an unreachable controller: the answer is "SLURM cannot say" after this long.
constexpr const char* sinfo_timeout_seconds = "5";

}  // namespace

std::string slurm_directory() { return pipeline::cache_directory() + "/slurm"; }

Expected<std::string> run_command(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) line += (line.empty() ? "" : " ") + shell_quote(word);
  FILE* pipe = popen((line + " 2>&1").c_str(), "r");
  if (!pipe) return failure(words.front() + ": cannot start");
  std::string output;
  char buffer[4096];
  while (const std::size_t read = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, read);
  const int status = pclose(pipe);
  if (status != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const std::string first_line = output.substr(0, output.find('\n'));
    if (code == 127) return failure(words.front() + " is not installed here: --slurm needs the SLURM client commands");
    return failure(line + " failed (exit " + std::to_string(code) + "): " + first_line);
  }
  return output;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

Expected<std::vector<std::string>> partition_nodes(const std::string& partition) {
  auto output = run_command({"sinfo", "-h", "-N", "-p", partition, "-o", "%N"});
  if (!output) return output.error();
  auto nodes = lines_of(*output);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::optional<double> partition_time_limit_seconds(const std::string& partition) {
  // "%P %l": the partition (the default one marked with '*') and its time limit.
  std::vector<std::string> words = {"timeout", sinfo_timeout_seconds, "sinfo", "-h", "-o", "%P %l"};
  if (!partition.empty()) words.insert(words.end(), {"-p", partition});
  auto output = run_command(words);
  if (!output) return std::nullopt;
  for (const auto& line : lines_of(*output)) {
    std::istringstream in(line);
    std::string name, limit;
    if (!(in >> name >> limit)) continue;
    const bool is_default = !name.empty() && name.back() == '*';
    if (is_default) name.pop_back();
    if (partition.empty() ? !is_default : name != partition) continue;
    if (limit == "infinite" || limit == "UNLIMITED") return std::numeric_limits<double>::infinity();
    return tuner::slurm_time_seconds(limit);
  }
  return std::nullopt;
}

Expected<NodeRecord> read_node_record(const std::string& path) {
  auto document = read_json_file(path);
  if (!document) return document.error();
  if (auto head = check_schema(*document, node_record_schema, node_record_version, path); !head) return head.error();
  try {
    NodeRecord record;
    record.node = document->at("node").get<std::string>();
    record.partition = document->at("partition").get<std::string>();
    record.fingerprint = document->at("fingerprint").get<std::string>();
    record.calibration = document->at("calibration").get<std::string>();
    record.measurements = document->at("measurements").get<std::string>();
    record.job = document->at("job").get<std::string>();
    record.written = document->at("written").get<double>();
    return record;
  } catch (const nlohmann::json::exception& exception) {
    return json_conversion_error(exception, path);
  }
}

Expected<void> write_node_record(const NodeRecord& record) {
  nlohmann::json document = schema_head(node_record_schema, node_record_version);
  document["node"] = record.node;
  document["partition"] = record.partition;
  document["fingerprint"] = record.fingerprint;
  document["calibration"] = record.calibration;
  document["measurements"] = record.measurements;
  document["job"] = record.job;
  document["written"] = record.written;
  std::error_code error;
  fs::create_directories(slurm_directory() + "/nodes", error);
  if (error) return failure(slurm_directory() + "/nodes: cannot create (" + error.message() + ")");
  return write_json_file(node_record_path(record.node), document, WrittenFile::owned);
}

Expected<std::vector<NodeRecord>> node_records_of(const std::string& partition) {
  std::vector<NodeRecord> records;
  const std::string folder = slurm_directory() + "/nodes";
  std::error_code error;
  if (!fs::is_directory(folder, error)) return records;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.path().extension() != ".json") continue;
    auto record = read_node_record(entry.path().string());
    if (!record) return record.error();
    if (record->partition == partition) records.push_back(*record);
  }
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.written > b.written; });
  return records;
}

Expected<std::optional<PartitionCalibration>> find_partition_calibration(const std::string& partition,
                                                                         const std::string& backend) {
  auto records = node_records_of(partition);
  if (!records) return records.error();
  // Only nodes that are still in the partition, when sinfo can say which.
  if (auto nodes = partition_nodes(partition); nodes && !nodes->empty())
    records->erase(std::remove_if(records->begin(), records->end(),
                                  [&](const auto& r) { return !std::binary_search(nodes->begin(), nodes->end(), r.node); }),
                   records->end());
  for (const NodeRecord& record : *records) {
    auto calibration = model::read_calibration(record.calibration);
    if (!calibration) return calibration.error();
    if (calibration->backend != backend) continue;
    // Node names, jobs and fingerprints are read from files: escaped (common/text_format.hpp) as printed.
    std::string basis = "measured on node " + printable(record.node) + " of partition " + partition + " by SLURM job " +
                        printable(record.job) + " (fingerprint " + printable(record.fingerprint) + ")";
    const auto other = std::find_if(records->begin(), records->end(),
                                    [&](const auto& r) { return r.fingerprint != record.fingerprint; });
    if (other != records->end())
      basis += "; the partition also holds other hardware (" + printable(other->node) + ", fingerprint " +
               printable(other->fingerprint) + "): this answer is for " + printable(record.node) + "'s kind";
    return std::optional<PartitionCalibration>(PartitionCalibration{record.calibration, basis});
  }
  return std::optional<PartitionCalibration>();
}

}  // namespace dnntune::frontend
