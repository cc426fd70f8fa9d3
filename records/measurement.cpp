// records/measurement.cpp — see measurement.hpp.
#include "records/measurement.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "common/json_file.hpp"

namespace dnntune::records {

using nlohmann::json;

namespace {

constexpr std::pair<MeasurementKind, const char*> kind_words[] = {
    {MeasurementKind::layer, "layer"}, {MeasurementKind::network, "network"},
    {MeasurementKind::communication, "communication"},
    {MeasurementKind::module, "module"}};
constexpr std::pair<MeasurementStatus, const char*> status_words[] = {
    {MeasurementStatus::ok, "ok"}, {MeasurementStatus::skipped, "skipped"},
    {MeasurementStatus::unimplemented, "unimplemented"}, {MeasurementStatus::failed, "failed"}};

}  // namespace

std::string command_option(const Measurement& measurement, const std::string& option) {
  std::istringstream words(measurement.command);
  for (std::string word; words >> word;)
    if (word == option) return words >> word ? word : "";
  return "";
}

std::string training_runner(const Measurement& measurement) {
  const std::string runner = command_option(measurement, "--runner");
  return runner.empty() ? kCppTrainer : runner;
}

bool trained_by_cpp_trainer(const Measurement& measurement) { return training_runner(measurement) == kCppTrainer; }

std::string to_string(MeasurementKind kind) { return enum_word(kind, kind_words); }
std::string to_string(MeasurementStatus status) { return enum_word(status, status_words); }

bool is_module_name(const std::string& name) {
  // As a network file's layer names (workloads/network_json.cpp): anything but control characters.
  return !name.empty() && name.size() <= max_module_name_bytes &&
         std::none_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

std::string measurement_key(const Measurement& m) {
  return to_string(m.kind) + "|" + m.backend + "|" + m.machine_fingerprint + "|" + m.network + "|" +
         m.descriptor + "|" + m.pass + "|mb" + std::to_string(m.batch) + "|bytes" + std::to_string(m.message_bytes) +
         "|t" + std::to_string(m.threads) + (m.smt ? "|smt" : "|nosmt") + "|p" + std::to_string(m.processes) + "|n" +
         std::to_string(m.nodes) + (m.allocator == "default" ? "" : "|alloc=" + m.allocator) +
         (m.kind == MeasurementKind::module ? "|module=" + m.module : "") +
         (m.precision == "fp32" ? "" : "|precision=" + m.precision) +
         (m.memory_format == "contiguous" ? "" : "|format=" + m.memory_format);
}

std::string to_json_line(const Measurement& m) {
  json out = {{"schema", measurement_schema},
              {"schema_version", measurement_schema_version},
              {"kind", to_string(m.kind)},
              {"backend", m.backend},
              {"backend_version", m.backend_version},
              {"machine_fingerprint", m.machine_fingerprint},
              {"network", m.network},
              {"descriptor", m.descriptor},
              {"pass", m.pass},
              {"batch", m.batch},
              {"message_bytes", m.message_bytes},
              {"threads", m.threads},
              {"smt", m.smt},
              {"processes", m.processes},
              {"nodes", m.nodes},
              {"cpu_sets", m.cpu_sets},
              {"status", to_string(m.status)},
              {"reason", m.reason},
              {"median_seconds", m.median_seconds},
              {"coefficient_of_variation", m.coefficient_of_variation},
              {"min_seconds", m.min_seconds},
              {"max_seconds", m.max_seconds},
              {"repetitions", m.repetitions},
              {"command", m.command},
              {"timestamp", m.timestamp}};
  if (m.allocator != "default") out["allocator"] = m.allocator;  // absent: the default, as before the member
  if (m.kind == MeasurementKind::module) out["module"] = m.module;
  if (m.precision != "fp32") out["precision"] = m.precision;
  if (m.memory_format != "contiguous") out["memory_format"] = m.memory_format;
  return out.dump();
}

Expected<Measurement> measurement_from_json_line(const std::string& line, const std::string& origin) {
  auto document = parse_json(line, origin);
  if (!document) return document.error();
  if (auto valid = check_schema(*document, measurement_schema, measurement_schema_version, origin); !valid)
    return valid.error();
  Measurement m;
  try {
    const json& in = *document;
    m.kind = enum_from_word(in.at("kind"), kind_words);
    m.backend = in.at("backend").get<std::string>();
    m.backend_version = in.at("backend_version").get<std::string>();
    m.machine_fingerprint = in.at("machine_fingerprint").get<std::string>();
    m.network = in.at("network").get<std::string>();
    m.descriptor = in.at("descriptor").get<std::string>();
    m.pass = in.at("pass").get<std::string>();
    m.batch = in.at("batch").get<std::int64_t>();
    m.message_bytes = in.at("message_bytes").get<std::int64_t>();
    m.threads = in.at("threads").get<int>();
    m.smt = in.at("smt").get<bool>();
    m.processes = in.at("processes").get<int>();
    m.nodes = in.at("nodes").get<int>();
    m.cpu_sets = in.at("cpu_sets").get<std::vector<std::vector<int>>>();
    m.status = enum_from_word(in.at("status"), status_words);
    m.reason = in.at("reason").get<std::string>();
    m.median_seconds = in.at("median_seconds").get<double>();
    m.coefficient_of_variation = in.at("coefficient_of_variation").get<double>();
    m.min_seconds = in.at("min_seconds").get<double>();
    m.max_seconds = in.at("max_seconds").get<double>();
    m.repetitions = in.at("repetitions").get<int>();
    m.command = in.at("command").get<std::string>();
    m.timestamp = in.at("timestamp").get<std::string>();
    if (in.contains("allocator")) m.allocator = in.at("allocator").get<std::string>();
    if (m.kind == MeasurementKind::module) m.module = in.at("module").get<std::string>();
    if (in.contains("precision")) m.precision = in.at("precision").get<std::string>();
    // torch-cuda records from before the field ran PyTorch's defaults: TF32 convolutions.
    else if (m.backend == "torch-cuda") m.precision = "tf32";
    if (in.contains("memory_format")) m.memory_format = in.at("memory_format").get<std::string>();
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin);
  }
  if (m.precision != "fp32" && m.precision != "tf32" && m.precision != "bf16" && m.precision != "fp16")
    return bad_input(origin + ": (/precision) must be fp32, tf32, bf16 or fp16");
  if (m.memory_format != "contiguous" && m.memory_format != "channels_last")
    return bad_input(origin + ": (/memory_format) must be contiguous or channels_last");
  if (m.status == MeasurementStatus::ok && !(m.median_seconds > 0))
    return bad_input(origin + ": an ok record needs median_seconds > 0");
  if (m.allocator.empty() || m.allocator.size() > 32 ||
      m.allocator.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
    return bad_input(origin + ": allocator must be a name of lower-case letters, digits and '-'");
  if (m.kind == MeasurementKind::module) {
    if (m.pass != "forward" && m.pass != "backward")
      return bad_input(origin + ": a module record's pass must be forward or backward, not '" + m.pass + "'");
    if (!is_module_name(m.module))
      return bad_input(origin + ": a module record needs a module name of 1 to " + std::to_string(max_module_name_bytes) +
                       " bytes without control characters");
    if (m.network.empty()) return bad_input(origin + ": a module record needs the network it was timed in");
  }
  if (m.threads < 1 || m.processes < 1 || m.nodes < 1)
    return bad_input(origin + ": threads, processes and nodes must be at least 1");
  return m;
}

Expected<void> append_measurement(const std::string& path, const Measurement& measurement) {
  const std::string line = to_json_line(measurement) + "\n";
  // O_APPEND with one write() per record: records from co-running writers never interleave, and
  // fsync makes a record durable before the next measurement starts.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return failure(path + ": cannot append (" + std::strerror(errno) + ")");
  const off_t size_before = ::lseek(fd, 0, SEEK_END);
  errno = 0;
  const ssize_t written = ::write(fd, line.data(), line.size());
  int saved_errno = errno;
  if (written == static_cast<ssize_t>(line.size()) && ::fsync(fd) != 0) saved_errno = errno;
  const bool complete = written == static_cast<ssize_t>(line.size()) && saved_errno == 0;
  if (!complete && size_before >= 0) (void)::ftruncate(fd, size_before);  // no half record left behind
  ::close(fd);
  if (!complete) return failure(path + ": write failed (" + write_error_reason(saved_errno) + ")");
  return {};
}

Expected<void> drop_unterminated_last_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (content.empty() || content.back() == '\n') return {};
  const std::size_t keep = content.rfind('\n') == std::string::npos ? 0 : content.rfind('\n') + 1;
  if (truncate(path.c_str(), static_cast<off_t>(keep)) != 0) return failure(path + ": cannot drop its cut-short last line");
  return {};
}

Expected<MeasurementFile> read_measurements(const std::string& path) {
  auto text = read_input_file(path);
  if (!text) return text.error();
  const std::string& content = *text;
  MeasurementFile file;
  std::size_t start = 0;
  int line_number = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    const bool last_without_newline = end == std::string::npos;
    if (last_without_newline) end = content.size();
    ++line_number;
    const std::string line = content.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto record = measurement_from_json_line(line, path + ":" + std::to_string(line_number));
    if (!record) {
      // Only an unterminated last line can be a write cut short by a kill; anything else is corrupt.
      if (last_without_newline) {
        ++file.truncated_lines;
        break;
      }
      return record.error();
    }
    file.records.push_back(std::move(*record));
  }
  return file;
}

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace dnntune::records
