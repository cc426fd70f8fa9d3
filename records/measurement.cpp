// records/measurement.cpp — see measurement.hpp.
#include "records/measurement.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "common/json_file.hpp"
#include "records/measurement_v1.hpp"
#include "records/record_bounds.hpp"

namespace dnntune::records {

using nlohmann::json;

namespace {

constexpr std::pair<MeasurementKind, const char*> measurement_kind_words[] = {
    {MeasurementKind::layer, "layer"},
    {MeasurementKind::network, "network"},
    {MeasurementKind::communication, "communication"},
    {MeasurementKind::module, "module"},
    {MeasurementKind::job, "job"}};
constexpr std::pair<MeasurementStatus, const char*> status_words[] = {
    {MeasurementStatus::ok, "ok"},
    {MeasurementStatus::skipped, "skipped"},
    {MeasurementStatus::unimplemented, "unimplemented"},
    {MeasurementStatus::failed, "failed"}};

constexpr const char* trainer_words[] = {kCppTrainer, kPythonTrainer};

template <std::size_t N>
bool is_one_of(const std::string& word, const char* const (&words)[N]) {
  return std::find(std::begin(words), std::end(words), word) != std::end(words);
}

template <std::size_t N>
std::string listed(const char* const (&words)[N]) {
  std::string text;
  for (const char* word : words) text += (text.empty() ? "" : ", ") + std::string(word);
  return text;
}

// The typed fields' words and counts; one line naming `origin` when one is wrong.
Expected<void> check_typed_fields(const Measurement& m, const std::string& origin) {
  if (!is_precision_name(m.precision))
    return bad_input(origin + ": unknown precision '" + m.precision + "' (known: " + names_text(precision_names()) +
                     ")");
  if (!is_memory_format_name(m.memory_format))
    return bad_input(origin + ": unknown memory_format '" + m.memory_format +
                     "' (known: " + names_text(memory_format_names()) + ")");
  if (!m.trainer.empty() && !is_one_of(m.trainer, trainer_words))
    return bad_input(origin + ": unknown trainer '" + m.trainer + "' (known: " + listed(trainer_words) + ")");
  if (m.warmup_steps < 0 || m.steps < 0 || !(m.bucket_megabytes >= 0))
    return bad_input(origin + ": warmup_steps, steps and bucket_megabytes must not be negative");
  return {};
}

// A job record: what the hook must have written, each wrong part named.
Expected<void> check_job_fields(const Measurement& m, const std::string& origin) {
  const JobRun& job = m.job;
  if (job.id.empty() || job.id.size() > max_job_id_bytes ||
      std::any_of(job.id.begin(), job.id.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    return bad_input(origin + ": a job record needs an id of 1 to " + std::to_string(max_job_id_bytes) +
                     " bytes without control characters");
  if (!is_one_of(job.launcher, kJobLaunchers))
    return bad_input(origin + ": unknown job launcher '" + job.launcher + "' (known: " + listed(kJobLaunchers) + ")");
  if (!is_one_of(job.device, kJobDevices))
    return bad_input(origin + ": unknown job device '" + job.device + "' (known: " + listed(kJobDevices) + ")");
  if (m.network.empty()) return bad_input(origin + ": job " + job.id + " names no network");
  if (m.pass != "iteration") return bad_input(origin + ": a job record's pass must be iteration, not '" + m.pass + "'");
  if (m.machine_fingerprint.empty()) return bad_input(origin + ": job " + job.id + " has no machine fingerprint");
  if (m.status != MeasurementStatus::ok) return bad_input(origin + ": job " + job.id + " is not an ok record");
  const std::size_t ranks = static_cast<std::size_t>(m.processes) * static_cast<std::size_t>(m.nodes);
  if (job.rank_median_seconds.size() != ranks)
    return bad_input(origin + ": job " + job.id + " has the times of " +
                     std::to_string(job.rank_median_seconds.size()) + " rank(s) of its " + std::to_string(ranks) +
                     " (" + std::to_string(m.processes) + " per node x " + std::to_string(m.nodes) +
                     " node(s)): a rank died or its times were lost");
  for (std::size_t rank = 0; rank < ranks; ++rank)
    if (!(job.rank_median_seconds[rank] > 0) || !(job.rank_median_seconds[rank] <= max_record_seconds))
      return bad_input(origin + ": job " + job.id + ": rank " + std::to_string(rank) + "'s median step " +
                       json(job.rank_median_seconds[rank]).dump() + " s is not a time a machine gives (0 < s <= 1e6)");
  if (!(job.predicted_images_per_second >= 0) || !std::isfinite(job.predicted_images_per_second))
    return bad_input(origin + ": job " + job.id + ": predicted_images_per_second must be a finite number >= 0");
  if (job.fabric.size() > 64 ||
      std::any_of(job.fabric.begin(), job.fabric.end(), [](unsigned char c) { return c <= 0x20 || c >= 0x7f; }))
    return bad_input(origin + ": job " + job.id + ": a fabric is a name of at most 64 printable characters");
  if (m.trainer != kPythonTrainer || m.steps < 1 || m.repetitions < 1)
    return bad_input(origin + ": job " + job.id + " needs trainer python and at least one timed step");
  return {};
}

}  // namespace

std::string training_runner(const Measurement& measurement) { return measurement.trainer; }

bool trained_by_cpp_trainer(const Measurement& measurement) { return measurement.trainer == kCppTrainer; }

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names{"fp32", "tf32", "bf16", "fp16"};
  return names;
}
const std::vector<std::string>& memory_format_names() {
  static const std::vector<std::string> names{"contiguous", "channels_last"};
  return names;
}
bool is_precision_name(const std::string& word) {
  return std::find(precision_names().begin(), precision_names().end(), word) != precision_names().end();
}
bool is_memory_format_name(const std::string& word) {
  return std::find(memory_format_names().begin(), memory_format_names().end(), word) != memory_format_names().end();
}
std::string names_text(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t index = 0; index < names.size(); ++index)
    text += (index == 0 ? "" : index + 1 == names.size() ? " or " : ", ") + names[index];
  return text;
}

std::string default_precision(const std::string& backend) { return backend == "torch-cuda" ? "tf32" : "fp32"; }

std::string to_string(MeasurementKind kind) { return enum_word(kind, measurement_kind_words); }
std::string to_string(MeasurementStatus status) { return enum_word(status, status_words); }

bool is_module_name(const std::string& name) {
  // As a network file's layer names (workloads/network_json.cpp): anything but control characters.
  return !name.empty() && name.size() <= max_module_name_bytes &&
         std::none_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

std::string measurement_key(const Measurement& m) {
  return to_string(m.kind) + "|" + m.backend + "|" + m.machine_fingerprint + "|" + m.network + "|" + m.descriptor +
         "|" + m.pass + "|mb" + std::to_string(m.batch) + "|bytes" + std::to_string(m.message_bytes) + "|t" +
         std::to_string(m.threads) + (m.smt ? "|smt" : "|nosmt") + "|p" + std::to_string(m.processes) + "|n" +
         std::to_string(m.nodes) + (m.allocator == "default" ? "" : "|alloc=" + m.allocator) +
         (m.kind == MeasurementKind::module ? "|module=" + m.module : "") +
         (m.precision == "fp32" ? "" : "|precision=" + m.precision) +
         (m.memory_format == "contiguous" ? "" : "|format=" + m.memory_format) +
         // A training run's warm-up and bucket change what its steps measure; how many were timed does not.
         (m.trainer.empty() ? ""
                            : "|trainer=" + m.trainer + "|warmup" + std::to_string(m.warmup_steps) + "|bucket" +
                                  json(m.bucket_megabytes).dump());
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
  if (!m.network_source.empty()) out["network_source"] = m.network_source;
  if (m.kind == MeasurementKind::job)
    out["job"] = {{"id", m.job.id},
                  {"launcher", m.job.launcher},
                  {"device", m.job.device},
                  {"rank_median_seconds", m.job.rank_median_seconds},
                  {"predicted_images_per_second", m.job.predicted_images_per_second}};
  if (m.kind == MeasurementKind::job && !m.job.fabric.empty()) out["job"]["fabric"] = m.job.fabric;
  if (!m.trainer.empty()) {
    out["trainer"] = m.trainer;
    out["warmup_steps"] = m.warmup_steps;
    out["steps"] = m.steps;
    out["bucket_megabytes"] = m.bucket_megabytes;
  }
  return out.dump();
}

Expected<Measurement> measurement_from_json_line(const std::string& line, const std::string& origin) {
  auto document = parse_json(line, origin);
  if (!document) return document.error();
  // Version 1 is read as it was written, then migrated; anything else must be this version.
  const auto written_version = document->find("schema_version");
  const bool version_1 = document->is_object() && written_version != document->end() &&
                         written_version->is_number_integer() && *written_version == 1;
  if (auto valid = check_schema(*document, measurement_schema, version_1 ? 1 : measurement_schema_version, origin);
      !valid)
    return valid.error();
  Measurement m;
  try {
    const json& in = *document;
    m.kind = enum_from_word(in.at("kind"), measurement_kind_words);
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
    if (m.kind == MeasurementKind::job) {
      const json& job = in.at("job");
      m.job.id = job.at("id").get<std::string>();
      m.job.launcher = job.at("launcher").get<std::string>();
      m.job.device = job.at("device").get<std::string>();
      m.job.rank_median_seconds = job.at("rank_median_seconds").get<std::vector<double>>();
      m.job.predicted_images_per_second = job.at("predicted_images_per_second").get<double>();
      m.job.fabric = job.value("fabric", std::string());
    }
    if (version_1) {
      migrate_v1_record(m);
    } else {
      m.precision = in.value("precision", std::string("fp32"));
      m.memory_format = in.value("memory_format", std::string("contiguous"));
      m.network_source = in.value("network_source", std::string());
      m.trainer = in.value("trainer", std::string());
      if (!m.trainer.empty()) {
        m.warmup_steps = in.at("warmup_steps").get<int>();
        m.steps = in.at("steps").get<int>();
        m.bucket_megabytes = in.at("bucket_megabytes").get<double>();
      }
    }
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin);
  }
  if (!is_precision_name(m.precision))
    return bad_input(origin + ": (/precision) must be " + names_text(precision_names()));
  if (!is_memory_format_name(m.memory_format))
    return bad_input(origin + ": (/memory_format) must be " + names_text(memory_format_names()));
  if (m.status == MeasurementStatus::ok && !(m.median_seconds > 0))
    return bad_input(origin + ": an ok record needs median_seconds > 0");
  if (m.allocator.empty() || m.allocator.size() > 32 ||
      m.allocator.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
    return bad_input(origin + ": allocator must be a name of lower-case letters, digits and '-'");
  if (m.kind == MeasurementKind::module) {
    if (m.pass != "forward" && m.pass != "backward")
      return bad_input(origin + ": a module record's pass must be forward or backward, not '" + m.pass + "'");
    if (!is_module_name(m.module))
      return bad_input(origin + ": a module record needs a module name of 1 to " +
                       std::to_string(max_module_name_bytes) + " bytes without control characters");
    if (m.network.empty()) return bad_input(origin + ": a module record needs the network it was timed in");
  }
  if (m.threads < 1 || m.processes < 1 || m.nodes < 1)
    return bad_input(origin + ": threads, processes and nodes must be at least 1");
  if (auto typed = check_typed_fields(m, origin); !typed) return typed.error();
  if (m.kind == MeasurementKind::job)
    if (auto job = check_job_fields(m, origin); !job) return job.error();
  if (auto bounded = check_measurement_bounds(m, origin); !bounded) return bounded.error();
  return m;
}

Expected<void> append_measurement(const std::string& path, const Measurement& measurement) {
  const std::string line = to_json_line(measurement) + "\n";
  // O_APPEND with one write() per record: records from co-running writers never interleave, and
  // fsync makes a record durable before the next measurement starts.
  // Never through a link, never blocking on a FIFO: records go only into a regular file.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ELOOP)
    return bad_input(path + ": is a symbolic link; records are appended to a regular file only");
  if (fd < 0) return failure(path + ": cannot append (" + std::strerror(errno) + ")");
  if (struct stat status{}; ::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    return bad_input(path + ": not a regular file; records are appended to a regular file only");
  }
  const off_t size_before = ::lseek(fd, 0, SEEK_END);
  // After a last line without its newline (a record cut short, a file edited by hand), the record
  // starts a line of its own: glued to that line, it would be lost with it (hence O_RDWR).
  char last = '\n';
  if (size_before > 0 && ::pread(fd, &last, 1, size_before - 1) != 1) last = '\n';
  const std::string text = last == '\n' ? line : "\n" + line;
  errno = 0;
  const ssize_t written = ::write(fd, text.data(), text.size());
  int saved_errno = errno;
  if (written == static_cast<ssize_t>(text.size()) && ::fsync(fd) != 0) saved_errno = errno;
  const bool complete = written == static_cast<ssize_t>(text.size()) && saved_errno == 0;
  if (!complete && size_before >= 0) (void)::ftruncate(fd, size_before);  // no half record left behind
  ::close(fd);
  if (!complete) return failure(path + ": write failed (" + write_error_reason(saved_errno) + ")");
  return {};
}

namespace {

// What a file records are to be appended to holds, read whole; nullopt when there is no file yet.
Expected<std::optional<MeasurementFile>> appended_file(const std::string& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0) return std::optional<MeasurementFile>{};
  if (S_ISLNK(status.st_mode))
    return bad_input(path + ": is a symbolic link; records are appended to a regular file only");
  if (!S_ISREG(status.st_mode))
    return bad_input(path + ": not a regular file; records are appended to a regular file only");
  auto file = read_measurements(path);
  if (!file) return bad_input(file.error().message + " (records are appended only to a file of measurement records)");
  return std::optional<MeasurementFile>(std::move(*file));
}

}  // namespace

Expected<void> check_record_file(const std::string& path) {
  if (auto file = appended_file(path); !file) return file.error();
  return {};
}

Expected<void> drop_unterminated_last_line(const std::string& path) {
  // The whole file is read first: a file that is not one of records (a user's notes named by
  // mistake) is refused before a byte of it changes, and only a record cut short is cut.
  auto file = appended_file(path);
  if (!file) return file.error();
  if (!*file || (*file)->truncated_lines == 0) return {};
  // As append_measurement: never through a link, never blocking on a FIFO.
  const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return {};
  if (fd < 0 && errno == ELOOP)
    return bad_input(path + ": is a symbolic link; records are appended to a regular file only");
  if (fd < 0) return failure(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    return bad_input(path + ": not a regular file; records are appended to a regular file only");
  }
  // Only the tail matters: the last newline before the end.
  off_t end = status.st_size, keep = 0;
  char last = '\n';
  if (end > 0 && ::pread(fd, &last, 1, end - 1) != 1) last = '\n';
  if (last != '\n') {
    char buffer[4096];
    for (off_t position = end; position > 0 && keep == 0;) {
      const off_t start =
          position > static_cast<off_t>(sizeof buffer) ? position - static_cast<off_t>(sizeof buffer) : 0;
      const ssize_t got = ::pread(fd, buffer, static_cast<std::size_t>(position - start), start);
      if (got <= 0) break;
      for (ssize_t index = got - 1; index >= 0; --index)
        if (buffer[index] == '\n') {
          keep = start + index + 1;
          break;
        }
      position = start;
    }
  }
  const bool cut = last == '\n' || ::ftruncate(fd, keep) == 0;
  ::close(fd);
  if (!cut) return failure(path + ": cannot drop its cut-short last line");
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
      // Only an unterminated last line that begins as a record does ("{") can be a write cut short
      // by a kill; any other bad line is skipped and said, and the records around it are kept.
      if (last_without_newline && line.find_first_not_of(" \t\r") == line.find('{')) {
        ++file.truncated_lines;
        break;
      }
      file.skipped_lines.push_back(record.error().message);
      continue;
    }
    file.records.push_back(std::move(*record));
  }
  // Not one good record: not a measurement file at all.
  if (file.records.empty() && !file.skipped_lines.empty()) return bad_input(file.skipped_lines.front());
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
