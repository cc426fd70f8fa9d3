// train/training_report.cpp — see training_report.hpp.
#include "train/training_report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace dnntune::train {

using nlohmann::json;

namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string plural(int count, const std::string& word) {
  return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string text;
  for (const int cpu : cpus) text += (text.empty() ? "" : ",") + std::to_string(cpu);
  return text;
}

std::string size_text(std::int64_t bytes) {
  if (bytes >= (std::int64_t{1} << 20)) return format("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= 1024) return format("%.1f KiB", static_cast<double>(bytes) / 1024);
  return std::to_string(bytes) + " B";
}

std::string strategy_text(const TrainingReport& report) {
  if (report.strategy == "single") return "one process, no communication";
  if (report.strategy == "allreduce" && report.buckets == 0)  // --runner python
    return "all-reduce by PyTorch's DistributedDataParallel over gloo (ranks started by " + report.mpi_version + ")";
  if (report.strategy == "allreduce")
    return "all-reduce over " + report.mpi_version + " in " + plural(report.buckets, "bucket") + " (largest " +
           size_text(report.largest_bucket_bytes) + ")";
  return std::string(report.strategy == "ps-async" ? "asynchronous" : "synchronous") + " parameter servers (" +
         plural(report.servers, "server") + ", " + plural(report.workers, "worker") + ") over " + report.mpi_version;
}

std::string timing_row(const std::string& name, const probe::TimingSummary& timing) {
  char row[160];
  std::snprintf(row, sizeof row, "  %-24s %10.3f %7.1f%% %10.3f %10.3f\n", name.c_str(), 1e3 * timing.median_seconds,
                100 * timing.coefficient_of_variation, 1e3 * timing.min_seconds, 1e3 * timing.max_seconds);
  return row;
}

json timing_json(const probe::TimingSummary& timing) {
  return {{"median_seconds", timing.median_seconds},
          {"mean_seconds", timing.mean_seconds},
          {"min_seconds", timing.min_seconds},
          {"max_seconds", timing.max_seconds},
          {"coefficient_of_variation", timing.coefficient_of_variation},
          {"repetitions", timing.repetitions}};
}

// The passes a training record is made for, with the timing each one reports.
std::vector<std::pair<std::string, const probe::TimingSummary*>> passes(const TrainingReport& report) {
  return {{"iteration", &report.iteration},
          {"forward", &report.forward},
          {"backward", &report.backward},
          {"exposed_communication", &report.exposed_communication},
          {"optimizer", &report.optimizer}};
}

}  // namespace

std::string training_report_text(const TrainingReport& report) {
  std::string text = "dnntune train: " + report.network + " (" + std::to_string(report.parameters) +
                     " parameters), batch " + std::to_string(report.batch) + " per worker, " + report.backend_version +
                     " on " + report.device + "\n";
  text += "job: " + std::to_string(report.processes) + (report.processes == 1 ? " process" : " processes") + " x " +
          plural(report.threads, "thread") + " on " + plural(report.nodes, "node") + ", " + strategy_text(report) +
          "\n";
  for (const RankReport& rank : report.ranks)
    text += "  rank " + std::to_string(rank.rank) + " (node " + std::to_string(rank.node) + ", " + rank.role +
            "): CPUs " + cpu_list(rank.cpus) + " (" + plural(rank.allowed_cores, "core") + "), OpenMP " +
            plural(rank.openmp_threads, "thread") + ", torch " + plural(rank.torch_threads, "thread") +
            (rank.weights_checksum.empty() ? "" : ", weights " + rank.weights_checksum) + "\n";
  const double images_per_step = report.images_per_second * report.iteration.median_seconds;
  text += "throughput: " + format("%.2f", report.images_per_second) + " images/s";
  if (report.strategy != "ps-async" && report.iteration.min_seconds > 0)
    text += " (" + format("%.2f", images_per_step / report.iteration.max_seconds) + " .. " +
            format("%.2f", images_per_step / report.iteration.min_seconds) + " over the slowest .. fastest step)";
  text += "\n\n";
  char header[160];
  std::snprintf(header, sizeof header, "  %-24s %10s %8s %10s %10s\n", "per step (ms)", "median", "cv", "min", "max");
  text += header;
  text += timing_row("forward", report.forward);
  text += timing_row("backward", report.backward);
  text += timing_row("exposed communication", report.exposed_communication);
  text += timing_row("optimizer update", report.optimizer);
  text += timing_row(report.strategy == "ps-async" ? "iteration (per worker)" : "iteration (job)", report.iteration);
  text += "  " + std::to_string(report.iteration.repetitions) + " measured samples after " +
          plural(report.warmup, "warm-up step") + "; phases pooled over workers" +
          (report.iterations < report.requested_iterations
               ? " (" + std::to_string(report.iterations) + " of " + std::to_string(report.requested_iterations) +
                     " timed steps: the --time-limit ended them)"
               : std::string()) +
          "\n";
  text += "page faults (median per step and worker, fresh pages first touched): forward " +
          format("%.0f", report.forward_page_faults) + ", backward " + format("%.0f", report.backward_page_faults) +
          "\n";
  if (report.strategy == "allreduce" && report.backward.median_seconds > 0)
    text += "all-reduce: " + format("%.3f", 1e3 * report.communication.median_seconds) +
            " ms per step in all (overlapped and exposed); exposed communication / backward = " +
            format("%.3f", report.exposed_communication.median_seconds / report.backward.median_seconds) + "\n";
  if (!report.modules.empty()) {
    // The glue: what the steps spent outside the layers' ops (the loop, the loss's sum, autograd's
    // start), from the per-step sums, so that it is the same steps' difference.
    const auto glue = [](const probe::TimingSummary& pass, const probe::TimingSummary& modules) {
      return format("%.3f", 1e3 * modules.median_seconds) + " ms, untimed glue " +
             format("%.3f", 1e3 * (pass.median_seconds - modules.median_seconds)) + " ms (" +
             format("%.1f", pass.median_seconds > 0 ? 100 * (1 - modules.median_seconds / pass.median_seconds) : 0) +
             "%)";
    };
    text += "modules (" + std::to_string(report.modules.size()) + " layers, median per step): forward " +
            glue(report.forward, report.modules_forward) + "; backward " +
            glue(report.backward, report.modules_backward) + "\n";
  }
  if (!report.losses.empty())
    text += "loss (rank 0): " + format("%.4f", report.losses.front()) + " at the first step, " +
            format("%.4f", report.losses.back()) + " at the last\n";
  if (report.strategy == "ps-async") {
    text += "staleness (updates applied k versions late):";
    for (std::size_t k = 0; k < report.staleness_counts.size(); ++k)
      if (report.staleness_counts[k] > 0)
        text += " " + std::to_string(k) + ": " + std::to_string(report.staleness_counts[k]);
    text += "\n";
  }
  return text;
}

std::string training_report_json(const TrainingReport& report) {
  json ranks = json::array();
  for (const RankReport& rank : report.ranks)
    ranks.push_back({{"rank", rank.rank},
                     {"node", rank.node},
                     {"role", rank.role},
                     {"cpus", rank.cpus},
                     {"allowed_cores", rank.allowed_cores},
                     {"openmp_threads", rank.openmp_threads},
                     {"torch_threads", rank.torch_threads},
                     {"weights_checksum", rank.weights_checksum},
                     {"warnings", rank.warnings}});
  json timings = json::object();
  for (const auto& [pass, timing] : passes(report)) timings[pass] = timing_json(*timing);
  timings["communication"] = timing_json(report.communication);
  json document = {
      {"schema", training_report_schema},
      {"schema_version", training_report_schema_version},
      {"network", report.network},
      {"parameters", report.parameters},
      {"batch", report.batch},
      {"processes", report.processes},
      {"workers", report.workers},
      {"servers", report.servers},
      {"nodes", report.nodes},
      {"threads", report.threads},
      {"strategy", report.strategy},
      {"device", report.device},
      {"backend", report.backend},
      {"backend_version", report.backend_version},
      {"precision", report.precision},
      {"memory_format", report.memory_format},
      {"skipped_steps", report.skipped_steps},
      {"mpi_version", report.mpi_version},
      {"machine_fingerprint", report.machine_fingerprint},
      {"buckets", report.buckets},
      {"largest_bucket_bytes", report.largest_bucket_bytes},
      {"iterations", report.iterations},
      {"warmup", report.warmup},
      {"images_per_second", report.images_per_second},
      {"timings", timings},
      {"page_faults", {{"forward", report.forward_page_faults}, {"backward", report.backward_page_faults}}},
      {"losses", report.losses},
      {"staleness_counts", report.staleness_counts},
      {"ranks", ranks}};
  if (!report.modules.empty()) {
    json modules = json::array();
    for (const ModuleTime& module : report.modules)
      modules.push_back({{"module", module.name},
                         {"descriptor", module.descriptor},
                         {"forward", timing_json(module.forward)},
                         {"backward", timing_json(module.backward)}});
    document["module_times"] = {{"forward_sum", timing_json(report.modules_forward)},
                                {"backward_sum", timing_json(report.modules_backward)},
                                {"modules", modules}};
  }
  return document.dump(2) + "\n";
}

std::vector<std::string> training_warnings(const TrainingReport& report) {
  std::vector<std::string> warnings;
  for (const RankReport& rank : report.ranks)
    warnings.insert(warnings.end(), rank.warnings.begin(), rank.warnings.end());
  if (report.skipped_steps > 0)
    warnings.push_back("fp16: the loss scaler skipped " + std::to_string(report.skipped_steps) + " of " +
                       std::to_string(report.iterations) +
                       " timed steps (inf or NaN gradients): more --warmup lets the scale settle");
  return warnings;
}

namespace {

// A record's timing fields from the steps' summary.
void with_timing(records::Measurement& record, const probe::TimingSummary& timing) {
  record.median_seconds = timing.median_seconds;
  record.coefficient_of_variation = timing.coefficient_of_variation;
  record.min_seconds = timing.min_seconds;
  record.max_seconds = timing.max_seconds;
  record.repetitions = timing.repetitions;
}

}  // namespace

std::vector<records::Measurement> training_measurements(const TrainingReport& report, const TrainOptions& options,
                                                        const std::string& command) {
  std::vector<records::Measurement> records;
  std::vector<std::vector<int>> cpu_sets;
  for (const RankReport& rank : report.ranks) cpu_sets.push_back(rank.cpus);
  const std::string timestamp = records::utc_timestamp_now();
  for (const auto& [pass, timing] : passes(report)) {
    records::Measurement record;
    record.kind = records::MeasurementKind::network;
    record.backend = report.backend;
    record.backend_version = report.backend_version;
    record.machine_fingerprint = report.machine_fingerprint;
    record.network = report.network;
    record.descriptor = report.strategy;
    record.pass = pass;
    record.batch = report.batch;
    record.threads = report.threads;
    record.smt = report.smt;
    record.processes = report.processes;
    record.nodes = report.nodes;
    record.cpu_sets = cpu_sets;
    record.precision = report.precision;
    record.memory_format = report.memory_format;
    record.network_source = options.model;
    record.trainer = options.runner;
    record.warmup_steps = report.warmup;
    record.steps = report.requested_iterations;
    record.bucket_megabytes = options.bucket_megabytes;
    with_timing(record, *timing);
    record.command = command;
    record.timestamp = timestamp;
    // A pass this trainer does not measure apart (--runner python: DDP's all-reduce ends inside
    // backward) reads 0 at every step: no record, rather than one no reader can use.
    if (!(record.median_seconds > 0)) continue;
    records.push_back(std::move(record));
  }
  // --module-times: per step the sum over the layers of each pass (kind network, passes
  // "forward_modules" and "backward_modules": the pass less its untimed glue, from the same steps)...
  const records::Measurement setting = records.empty() ? records::Measurement{} : records.front();
  if (!report.modules.empty())
    for (const auto& [pass, timing] : {std::pair{"forward_modules", &report.modules_forward},
                                       std::pair{"backward_modules", &report.modules_backward}}) {
      records::Measurement record = setting;
      record.pass = pass;
      with_timing(record, *timing);
      if (record.median_seconds > 0) records.push_back(std::move(record));
    }
  // ...and one record per layer and pass it ran (kind module), the same setting.
  for (const ModuleTime& module : report.modules)
    for (const auto& [pass, timing] :
         {std::pair{"forward", &module.forward}, std::pair{"backward", &module.backward}}) {
      // (A layer name too long for a record is left out rather than written unreadable.)
      if (timing->repetitions == 0 || !(timing->median_seconds > 0) || !records::is_module_name(module.name)) continue;
      records::Measurement record = setting;
      record.kind = records::MeasurementKind::module;
      record.module = module.name;
      record.descriptor = module.descriptor;
      record.pass = pass;
      with_timing(record, *timing);
      records.push_back(std::move(record));
    }
  return records;
}

}  // namespace dnntune::train
