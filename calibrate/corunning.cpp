// calibrate/corunning.cpp — see corunning.hpp.
#include "calibrate/corunning.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "calibrate/worker.hpp"
#include "probe/timing.hpp"

namespace dnntune::calibrate {

using nlohmann::json;

namespace {

std::string cpu_list(const std::vector<int>& cpus) {
  std::string text;
  for (const int cpu : cpus) text += (text.empty() ? "" : ",") + std::to_string(cpu);
  return text;
}

// Forks a worker pinned to `cpus`, its file descriptor 3 one end of a socket pair whose other
// end is the returned channel (a socket, so that writing to a worker that died fails instead of
// raising SIGPIPE). Its standard output goes to standard error: libraries print there (oneDNN's
// verbose mode) and must not garble the messages. Between fork and exec the child calls only
// async-signal-safe functions.
Expected<std::pair<pid_t, LineChannel>> spawn(const std::vector<std::string>& arguments, const std::vector<int>& cpus) {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    return failure(std::string("socketpair: ") + std::strerror(errno));
  std::vector<char*> argv;
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int cpu : cpus) CPU_SET(cpu, &set);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(ends[0]), close(ends[1]);
    return failure(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    dup2(ends[1], worker_channel_fd);  // dup2 clears close-on-exec on the copy
    dup2(STDERR_FILENO, STDOUT_FILENO);
    // Pinned before exec, so every thread the worker starts inherits the CPU set.
    if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(126);
    // Its own process group, so a Ctrl-C at the terminal stops only the parent (which then
    // takes its workers down: none outlives it).
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(ends[1]);
  return std::pair<pid_t, LineChannel>(pid, LineChannel(ends[0], ends[0]));
}

records::MeasurementStatus status_from_word(const std::string& word) {
  if (word == "ok") return records::MeasurementStatus::ok;
  if (word == "unimplemented") return records::MeasurementStatus::unimplemented;
  return records::MeasurementStatus::failed;
}

}  // namespace

Expected<std::vector<std::vector<int>>> cpu_sets_for(const Setting& setting,
                                                     const std::vector<std::vector<int>>& cores) {
  int smt_ways = 1;
  for (const auto& pus : cores) smt_ways = std::max(smt_ways, static_cast<int>(pus.size()));
  const int per_process = setting.cores_per_process(smt_ways);
  if (setting.threads < 1 || setting.processes < 1 || per_process < 1 || (setting.smt && smt_ways < 2) ||
      (setting.smt && setting.threads % smt_ways != 0))
    return bad_input("setting " + to_string(setting) + " does not fit cores of " + std::to_string(smt_ways) +
                     " hardware thread(s)");
  if (per_process * setting.processes > static_cast<int>(cores.size()))
    return bad_input("setting " + to_string(setting) + " needs " + std::to_string(per_process * setting.processes) +
                     " cores; this process may use " + std::to_string(cores.size()));
  std::vector<std::vector<int>> sets(static_cast<std::size_t>(setting.processes));
  for (int process = 0; process < setting.processes; ++process)
    for (int core = process * per_process; core < (process + 1) * per_process; ++core) {
      const auto& pus = cores[static_cast<std::size_t>(core)];
      if (setting.smt)
        sets[process].insert(sets[process].end(), pus.begin(), pus.end());
      else
        sets[process].push_back(pus.front());
    }
  return sets;
}

Expected<std::unique_ptr<WorkerGroup>> WorkerGroup::start(const Options& options) {
  std::unique_ptr<WorkerGroup> group(new WorkerGroup());
  for (const auto& cpus : options.cpu_sets) {
    WorkerOptions worker_options;
    worker_options.backend = options.backend;
    worker_options.threads = options.setting.threads;
    worker_options.keep_loading = options.setting.processes > 1;
    auto spawned = spawn(calibrate_worker_argv(options.executable, worker_options), cpus);
    if (!spawned) return spawned.error();
    Worker worker;
    worker.pid = spawned->first;
    worker.channel = std::move(spawned->second);
    group->workers_.push_back(std::move(worker));
  }
  // Loading libtorch and oneDNN takes a moment; a worker that cannot start says why on stderr.
  constexpr double start_timeout_seconds = 60;
  for (std::size_t rank = 0; rank < group->workers_.size(); ++rank) {
    const auto line = group->workers_[rank].channel.read_line(start_timeout_seconds);
    const json hello = line ? json::parse(*line, nullptr, false) : json();
    if (!line || hello.is_discarded() || hello.value("event", "") != "hello") {
      const std::string why = hello.is_object() && hello.contains("reason")
                                  ? hello["reason"].get<std::string>()
                                  : group->describe_loss(static_cast<int>(rank));
      return failure("worker " + std::to_string(rank) + " for " + options.backend + " did not start: " + why);
    }
    group->backend_version_ = hello.value("backend_version", "");
    group->reported_cpu_sets_.push_back(hello.value("cpus", std::vector<int>{}));
  }
  return group;
}

WorkerGroup::~WorkerGroup() { kill_all(); }

std::vector<pid_t> WorkerGroup::pids() const {
  std::vector<pid_t> pids;
  for (const auto& worker : workers_) pids.push_back(worker.pid);
  return pids;
}

void WorkerGroup::kill_all() {
  for (auto& worker : workers_) {
    if (worker.reaped || worker.pid <= 0) continue;
    kill(worker.pid, SIGKILL);
    waitpid(worker.pid, nullptr, 0);
    worker.reaped = true;
  }
}

std::string WorkerGroup::describe_loss(int rank) {
  Worker& worker = workers_[static_cast<std::size_t>(rank)];
  if (!worker.reaped) {
    int status = 0;
    // The worker closed its output: it is exiting or gone; give it a moment to be reaped.
    for (int attempt = 0; attempt < 100 && waitpid(worker.pid, &status, WNOHANG) == 0; ++attempt) usleep(10000);
    if (waitpid(worker.pid, &status, WNOHANG) == 0) {
      kill(worker.pid, SIGKILL);
      waitpid(worker.pid, &status, 0);
    }
    worker.reaped = true;
    if (WIFSIGNALED(status))
      worker.exit_description =
          "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    else
      worker.exit_description = "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  const std::string cpus = rank < static_cast<int>(reported_cpu_sets_.size())
                               ? " (CPUs " + cpu_list(reported_cpu_sets_[static_cast<std::size_t>(rank)]) + ")"
                               : "";
  return "worker process " + std::to_string(rank) + cpus + " " + worker.exit_description;
}

Expected<std::vector<CheckResult>> WorkerGroup::check(double timeout_seconds) {
  Worker& worker = workers_.front();
  worker.channel.write_line(json{{"op", "check"}}.dump());
  const auto line = worker.channel.read_line(timeout_seconds);
  const json reply = line ? json::parse(*line, nullptr, false) : json();
  if (!line || reply.is_discarded() || !reply.contains("results")) {
    const std::string why = worker.channel.closed() ? describe_loss(0)
                            : line                  ? "unexpected answer: " + line->substr(0, 80)
                                                    : "no answer in time";
    kill_all();
    return failure("numerical check: " + why);
  }
  std::vector<CheckResult> results;
  for (const json& entry : reply["results"]) {
    CheckResult result;
    result.descriptor = entry.value("descriptor", "");
    for (const auto pass : workloads::all_passes)
      if (workloads::pass_name(pass) == entry.value("pass", "")) result.pass = pass;
    if (auto spec = workloads::parse_descriptor(result.descriptor)) result.kind = spec->kind;
    result.implemented = entry.value("implemented", false);
    result.passed = entry.value("passed", false);
    result.relative_error = entry.value("relative_error", 0.0);
    result.reason = entry.value("reason", "");
    results.push_back(result);
  }
  return results;
}

GroupOutcome WorkerGroup::measure(const WorkItem& item, double timeout_seconds) {
  GroupOutcome outcome;
  outcome.processes.resize(workers_.size());
  const double deadline = probe::now_seconds() + timeout_seconds;
  const auto lost = [&](int rank, const std::string& while_doing) {
    const bool timed_out = !workers_[static_cast<std::size_t>(rank)].channel.closed();
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.1f", timeout_seconds);
    const std::string why = timed_out ? std::string("took longer than ") + limit + " s " + while_doing + " (killed)"
                                      : describe_loss(rank) + " " + while_doing;
    kill_all();
    outcome.status = records::MeasurementStatus::failed;
    outcome.reason = why;
    outcome.workers_lost = true;
    outcome.timed_out = timed_out;
  };
  // Sends `message` (unless null) to every worker, then reads each one's answer with `event`.
  const auto exchange = [&](const json& message, const std::string& event, const std::string& while_doing,
                            std::vector<json>& answers) {
    if (!message.is_null())
      for (auto& worker : workers_) worker.channel.write_line(message.dump());
    answers.assign(workers_.size(), json());
    for (std::size_t rank = 0; rank < workers_.size(); ++rank) {
      const auto line = workers_[rank].channel.read_line(std::max(0.0, deadline - probe::now_seconds()));
      answers[rank] = line ? json::parse(*line, nullptr, false) : json();
      if (!line || answers[rank].is_discarded() || answers[rank].value("event", "") != event) {
        lost(static_cast<int>(rank), while_doing);
        return false;
      }
    }
    return true;
  };

  json prepare{{"op", "prepare"}, {"batch", item.batch}};
  if (item.precision != "fp32" || item.memory_format != "contiguous")
    prepare.update({{"precision", item.precision}, {"memory_format", item.memory_format}});
  if (item.network.empty())
    prepare.update({{"descriptor", item.descriptor},
                    {"pass", workloads::pass_name(item.pass)},
                    {"operand_sets", item.operand_sets}});
  else
    prepare["network"] = item.network;
  std::vector<json> answers;
  if (!exchange(prepare, "prepared", "while setting up", answers)) return outcome;
  for (const json& answer : answers)
    if (answer.value("status", "") != "ok") {
      for (auto& worker : workers_) worker.channel.write_line(json{{"op", "drop"}}.dump());
      outcome.status = status_from_word(answer.value("status", ""));
      outcome.reason = answer.value("reason", "");
      return outcome;
    }
  // Released together; each times until all have started (worker.hpp).
  std::vector<json> started;
  if (!exchange(json{{"op", "go"}}, "started", "while warming up", started)) return outcome;
  if (!exchange(json{{"op", "all_started"}}, "timed", "while timing", answers)) return outcome;
  std::vector<json> stopped;
  if (!exchange(json{{"op", "stop"}}, "stopped", "while stopping", stopped)) return outcome;
  for (std::size_t rank = 0; rank < workers_.size(); ++rank) {
    const json& answer = answers[rank];
    if (answer.value("status", "") != "ok") {
      outcome.status = records::MeasurementStatus::failed;
      outcome.reason = answer.value("reason", "");
      if (workers_.size() > 1) outcome.reason = "process " + std::to_string(rank) + ": " + outcome.reason;
      return outcome;
    }
    ProcessOutcome& process = outcome.processes[rank];
    process.cpus = reported_cpu_sets_[rank];
    process.samples = answer.value("samples", std::vector<double>{});
    process.start = answer.value("start", 0.0);
    process.end = answer.value("end", 0.0);
  }
  return outcome;
}

}  // namespace dnntune::calibrate
