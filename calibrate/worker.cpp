// calibrate/worker.cpp — see worker.hpp.
#include "calibrate/worker.hpp"

#include <malloc.h>
#include <omp.h>
#include <sched.h>

#include <nlohmann/json.hpp>

#include "calibrate/layer_backend.hpp"
#include "calibrate/line_channel.hpp"
#include "calibrate/naive_reference.hpp"
#include "calibrate/plan.hpp"
#include "probe/allocators.hpp"
#include "probe/timing.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::calibrate {

using nlohmann::json;

namespace {

std::vector<int> affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Messages carry libraries' error texts: bytes that are not UTF-8 are replaced, not fatal.
void send(LineChannel& channel, const json& message) {
  channel.write_line(message.dump(-1, ' ', false, json::error_handler_t::replace));
}

Expected<workloads::Pass> pass_from_name(const std::string& name) {
  for (const auto pass : workloads::all_passes)
    if (workloads::pass_name(pass) == name) return pass;
  return bad_input("unknown pass " + name);
}

Expected<std::unique_ptr<PreparedRun>> prepare(LayerBackend& backend, const json& message) {
  const std::int64_t batch = message.at("batch").get<std::int64_t>();
  // Absent: fp32 contiguous (the message of a CPU backend, and of every calibration before precisions).
  if (auto set =
          backend.set_precision(message.value("precision", "fp32"), message.value("memory_format", "contiguous"));
      !set)
    return set.error();
  if (message.contains("network")) {
    auto network = workloads::load_network(message.at("network").get<std::string>());
    if (!network) return network.error();
    return backend.prepare_network(*network, batch);
  }
  auto spec = workloads::parse_descriptor(message.at("descriptor").get<std::string>());
  if (!spec) return spec.error();
  auto pass = pass_from_name(message.at("pass").get<std::string>());
  if (!pass) return pass.error();
  auto layer = backend.prepare(*spec, batch, *pass, message.at("operand_sets").get<int>());
  if (!layer) return layer.error();
  return std::unique_ptr<PreparedRun>(std::move(*layer));
}

// Times `run` under `options` and answers "timed": the samples are the timed repetitions
// (warm-up left out), start and end bound the timed region. Right after the warm-up it tells the parent it
// has "started", and it goes on timing, past the options if need be, until the parent says
// "all_started": every co-running worker is then inside its timed region, so the regions of
// all of them intersect.
json time_prepared(PreparedRun& run, const probe::TimingOptions& options, LineChannel& channel) {
  std::vector<double> samples;
  double start = 0, end = 0, total = 0;
  bool all_started = false;
  std::string failure;
  try {
    for (int warmup = 0; warmup < options.warmup_runs; ++warmup) run.run();
  } catch (const std::exception& error) {
    failure = first_line(error.what());
  }
  // The timed region starts before "started" is sent: a co-running worker can only end after
  // "all_started", which follows every worker's "started", so every region contains every
  // start (taking the first sample's start instead raced with a descheduled worker).
  start = probe::now_seconds();
  send(channel, {{"event", "started"}});
  while (failure.empty()) {
    if (!all_started && channel.line_ready()) {
      const json message = json::parse(channel.read_line(0).value_or(""), nullptr, false);
      all_started = message.is_object() && message.value("op", "") == "all_started";
    }
    const int count = static_cast<int>(samples.size());
    const bool enough =
        (count >= options.min_repetitions && total >= options.min_total_seconds) || count >= options.max_repetitions;
    if ((enough && all_started) || channel.closed()) break;
    try {
      const double before = probe::now_seconds();
      run.run();
      end = probe::now_seconds();
      const double seconds = run.last_device_seconds().value_or(end - before);
      samples.push_back(seconds);
      total += seconds;
    } catch (const std::exception& error) {
      failure = first_line(error.what());
    }
  }
  if (!failure.empty()) return {{"event", "timed"}, {"status", "failed"}, {"reason", failure}};
  return {{"event", "timed"}, {"status", "ok"}, {"samples", samples}, {"start", start}, {"end", end}};
}

json check_results(LayerBackend& backend) {
  json results = json::array();
  for (const CheckResult& result : check_backend(backend))
    results.push_back({{"descriptor", result.descriptor},
                       {"pass", workloads::pass_name(result.pass)},
                       {"implemented", result.implemented},
                       {"passed", result.passed},
                       {"relative_error", result.relative_error},
                       {"reason", first_line(result.reason)}});
  return {{"event", "checked"}, {"results", results}};
}

// Puts glibc's malloc where a training process's is after its first step. glibc serves a block
// above M_MMAP_THRESHOLD with a fresh mmap, whose pages fault in on first touch, and raises the
// threshold to the size of each mmapped block freed, up to 32 MiB on 64-bit
// (DEFAULT_MMAP_THRESHOLD_MAX), the trim threshold to twice that. A training loop frees its
// activations every step, so after one step it serves blocks up to 32 MiB from its heap; a
// micro-run of a few repetitions never gets there, and would time page faults a trained loop
// does not pay (a large layer's output faults in every call from fresh mmaps, never from the
// heap; docs/results.md). The end state is set at once; what training still faults (the heap
// top trimmed past 64 MiB free; blocks above 32 MiB) is the network's, seen
// by the anchor (train/anchor.hpp), not by a layer.
void settle_malloc_as_training_does() {
  // Under an allocator chosen for the calibration (`calibrate --allocator`) the micro-runs time
  // what that allocator does: mallopt here would override glibc-tuned's thresholds.
  if (probe::allocator_of_this_process() != "default") return;
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(settled_mmap_threshold_bytes));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * settled_mmap_threshold_bytes));
}

}  // namespace

std::vector<std::string> calibrate_worker_argv(const std::string& executable, const WorkerOptions& options) {
  std::vector<std::string> argv{
      executable, "calibrate", "--worker", "--backend", options.backend, "--threads", std::to_string(options.threads)};
  if (options.keep_loading) argv.push_back("--keep-loading");
  return argv;
}

int run_worker(const WorkerOptions& options) {
  settle_malloc_as_training_does();
  LineChannel channel(worker_channel_fd, worker_channel_fd);
  auto backend = make_backend(options.backend);
  if (!backend) {
    send(channel, {{"event", "error"}, {"reason", backend.error().message}});
    return 2;
  }
  (*backend)->set_threads(options.threads);
  send(channel, {{"event", "hello"},
                 {"cpus", affinity()},
                 {"threads", omp_get_max_threads()},
                 {"backend_version", (*backend)->version()}});
  std::unique_ptr<PreparedRun> prepared;
  bool whole_network = false;
  int operand_sets = 1;
  while (auto line = channel.read_line(-1)) {
    const json message = json::parse(*line, nullptr, false);
    if (message.is_discarded() || !message.contains("op")) continue;
    const std::string op = message.at("op").get<std::string>();
    if (op == "check") {
      (void)(*backend)->set_precision("fp32", "contiguous");  // the naive reference's: strict fp32
      send(channel, check_results(**backend));
    } else if (op == "prepare") {
      prepared.reset();
      whole_network = message.contains("network");
      operand_sets = message.value("operand_sets", 1);
      json reply{{"event", "prepared"}, {"status", "ok"}, {"reason", ""}};
      try {
        auto made = prepare(**backend, message);
        if (made) {
          prepared = std::move(*made);
        } else {
          reply["status"] = made.error().kind == ErrorKind::bad_input ? "unimplemented" : "failed";
          reply["reason"] = first_line(made.error().message);
        }
      } catch (const std::exception& error) {
        reply["status"] = "failed";
        reply["reason"] = first_line(error.what());
      }
      send(channel, reply);
    } else if (op == "go" && prepared) {
      send(channel, time_prepared(*prepared, whole_network ? network_timing() : layer_timing(operand_sets), channel));
      try {
        while (options.keep_loading && !channel.line_ready() && !channel.closed()) prepared->run();
      } catch (const std::exception&) {
        // A kernel that breaks now broke in its timed runs too and was reported; the load ends.
      }
    } else if (op == "stop") {
      prepared.reset();
      send(channel, {{"event", "stopped"}});
    } else if (op == "drop") {
      prepared.reset();
    }
  }
  return 0;
}

}  // namespace dnntune::calibrate
