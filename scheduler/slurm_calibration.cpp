// scheduler/slurm_calibration.cpp — see slurm_calibration.hpp.
#include "scheduler/slurm_calibration.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "common/files.hpp"
#include "common/self_executable.hpp"
#include "common/shell_words.hpp"
#include "pipeline/measurement_inputs.hpp"
#include "records/machine_profile.hpp"
#include "tuner/job_script.hpp"
#include "tuner/sbatch_header.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::scheduler {
namespace {

namespace fs = std::filesystem;

std::string comm_directory_of(const std::string& partition) { return slurm_directory() + "/comm/" + partition; }

// A partition name goes into paths and job scripts: SLURM's own characters only.
Expected<void> check_partition(const std::string& partition) {
  if (partition.empty()) return bad_input("a SLURM calibration needs the partition whose nodes to calibrate");
  return tuner::check_slurm_name("--partition", partition);
}

Expected<void> check_names(const SlurmCalibrationRequest& request) {
  // Everything below reaches a job script; it is quoted there too, but a name SLURM would not
  // take is refused here, with the option that carried it.
  if (auto partition = check_partition(request.partition); !partition) return partition.error();
  if (!request.account.empty())
    if (auto account = tuner::check_slurm_name("--account", request.account); !account) return account.error();
  if (auto time = tuner::check_slurm_time(request.time_limit); !time) return time.error();
  if (request.models.empty()) return bad_input("a SLURM calibration needs the networks to calibrate the node for");
  for (const auto& model : request.models)
    if (auto network = workloads::load_network(model); !network) return network.error();
  return check_cache_directory_for_jobs(pipeline::cache_directory());
}

void report(const SlurmCalibrationRequest& request, const std::string& line) {
  if (request.progress) request.progress(line);
}

// The #SBATCH head of a calibration job on `nodes` exclusive nodes (tuner/sbatch_header.hpp).
std::string job_head(const SlurmCalibrationRequest& request, const std::string& name, const std::string& log, int nodes,
                     int tasks_per_node) {
  tuner::SbatchHeader header;
  header.job_name = name;
  header.nodes = nodes;
  header.tasks_per_node = tasks_per_node;
  header.time_limit = request.time_limit;
  header.partition = request.partition;
  header.account = request.account;
  header.output = log;
  return tuner::sbatch_header(header);
}

Expected<std::string> submit(const std::string& script_path, const std::string& script,
                             const std::vector<std::string>& extra) {
  if (auto written = write_file_atomically(script_path, script, WrittenFile::owned); !written) return written.error();
  std::vector<std::string> words = {"sbatch", "--parsable"};
  words.insert(words.end(), extra.begin(), extra.end());
  words.push_back(script_path);
  auto output = run_command(words);
  if (!output) return output.error();
  const auto lines = lines_of(*output);
  static const std::regex job_id(R"((\d+)(;.*)?)");
  std::smatch match;
  if (lines.empty() || !std::regex_match(lines.back(), match, job_id))
    return failure("sbatch answered \"" + *output + "\", not a job id");
  return match[1].str();
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Waits for `job` to leave the queue, printing its state changes and the progress lines of its
// log as they come.
Expected<void> wait_for(const SlurmCalibrationRequest& request, const std::string& job, const std::string& log) {
  std::string last_state;
  std::size_t log_lines_shown = 0;
  for (;;) {
    auto state = run_command({"squeue", "-h", "-j", job, "-o", "%T"});
    // squeue refuses a job id it no longer knows: the job has left the queue.
    const std::string now = state ? (lines_of(*state).empty() ? "" : lines_of(*state).front()) : "";
    if (now != last_state && !now.empty()) report(request, "job " + job + ": " + now);
    last_state = now;
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (; log_lines_shown < lines.size(); ++log_lines_shown)
      if (lines[log_lines_shown].rfind("dnntune", 0) == 0) report(request, "  " + lines[log_lines_shown]);
    if (now.empty()) return {};
    std::this_thread::sleep_for(std::chrono::duration<double>(request.poll_seconds));
  }
}

}  // namespace

Expected<void> check_cache_directory_for_jobs(const std::string& cache_directory) {
  if (cache_directory.empty() || cache_directory.front() != '/' ||
      cache_directory.find_first_of(" \t\n\r'\"\\$`") != std::string::npos)
    return bad_input("the cache directory \"" + cache_directory +
                     "\" goes into #SBATCH lines: give DNNTUNE_CACHE_DIR "
                     "an absolute path without spaces or quotes, on a file system the compute nodes share");
  // SLURM expands %j, %u, %N ... in #SBATCH --output: the job's log would land elsewhere than the
  // path this command then follows.
  if (cache_directory.find('%') != std::string::npos)
    return bad_input("the cache directory \"" + cache_directory +
                     "\" holds '%', which SLURM expands in the job's "
                     "#SBATCH --output (%j: the job id): give DNNTUNE_CACHE_DIR a path without '%'");
  return {};
}

Expected<SubmittedCalibration> calibrate_through_slurm(const SlurmCalibrationRequest& request,
                                                       const JobCommandLines& commands,
                                                       const std::string& answer_command) {
  if (auto checked = check_names(request); !checked) return checked.error();
  auto nodes = partition_nodes(request.partition);
  if (!nodes) return nodes.error();
  if (nodes->empty())
    return bad_input("partition " + request.partition + " has no nodes (sinfo -p " + request.partition + ")");
  const auto found = self_executable_path();
  if (!found) return found.error();
  const auto command_line = [&](std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), *found);
    return shell_command_line(arguments);
  };
  std::error_code error;
  fs::create_directories(slurm_directory() + "/jobs", error);
  if (error) return failure(slurm_directory() + "/jobs: cannot create (" + error.message() + ")");
  const std::string stamp = std::to_string(static_cast<long long>(now_seconds()));
  const std::string environment = "export DNNTUNE_CACHE_DIR=" + shell_quote(pipeline::cache_directory()) + "\n";
  SubmittedCalibration submitted;
  submitted.partition_nodes = nodes->size();

  // 1. One exclusive node: probe, layer micro-runs, anchors, fit.
  submitted.node_log = slurm_directory() + "/jobs/calibrate-" + request.partition + "-" + stamp + ".out";
  const std::string node_script = job_head(request, "dnntune-calibrate", submitted.node_log, 1, 0) + environment +
                                  "exec " + command_line(commands.node_job(request)) + "\n";
  auto node_job =
      submit(slurm_directory() + "/jobs/calibrate-" + request.partition + "-" + stamp + ".sbatch", node_script, {});
  if (!node_job) return node_job.error();
  submitted.node_job = *node_job;
  report(request, "submitted job " + *node_job + " (one exclusive node of " + request.partition + ", of " +
                      std::to_string(nodes->size()) + "): probe, layer micro-runs and fit; log " + submitted.node_log);

  // 2. With two nodes or more: all-reduce over the real fabric, then the refit.
  if (nodes->size() >= 2) {
    submitted.fabric_log = slurm_directory() + "/jobs/fabric-" + request.partition + "-" + stamp + ".out";
    const std::string comm = comm_directory_of(request.partition);
    const std::string sweep = shell_command_line({"mpirun", "-np", "2", "--map-by", "ppr:1:node"}) + " " +
                              command_line(commands.fabric_sweep(comm));
    const std::string script = job_head(request, "dnntune-fabric", submitted.fabric_log, 2, 1) + environment + sweep +
                               " || exit 1\nexec " + command_line(commands.fabric_refit(request, comm)) + "\n";
    auto fabric_job = submit(slurm_directory() + "/jobs/fabric-" + request.partition + "-" + stamp + ".sbatch", script,
                             {"--dependency=afterok:" + *node_job});
    if (!fabric_job) return fabric_job.error();
    submitted.fabric_job = *fabric_job;
    report(request, "submitted job " + submitted.fabric_job + " (two nodes, after job " + *node_job +
                        "): all-reduce sweep over the fabric and the refit; log " + submitted.fabric_log);
  } else {
    report(request, "partition " + request.partition +
                        " has one node: no fabric to sweep (a fabric preset stands in: --network)");
  }
  if (!request.wait) return submitted;

  if (auto waited = wait_for(request, *node_job, submitted.node_log); !waited) return waited.error();
  auto records = node_records_of(request.partition);
  if (!records) return records.error();
  const auto made = std::find_if(records->begin(), records->end(), [&](const auto& r) { return r.job == *node_job; });
  if (made == records->end())
    return failure("SLURM job " + *node_job + " ended without a calibration of " + request.partition + ": see " +
                   submitted.node_log);
  submitted.calibrated = *made;
  if (!submitted.fabric_job.empty()) {
    if (auto waited = wait_for(request, submitted.fabric_job, submitted.fabric_log); !waited) return waited.error();
    if (!fs::exists(comm_directory_of(request.partition) + "/calibration.json"))
      return failure("SLURM job " + submitted.fabric_job + " ended without the fabric's refit: see " +
                     submitted.fabric_log + " (the node's calibration is there and usable: " + answer_command + ")");
  }
  return submitted;
}

Expected<NodeRecord> run_slurm_node_job(const SlurmCalibrationRequest& request) {
  if (auto partition = check_partition(request.partition); !partition) return partition.error();
  pipeline::DefaultCalibrationRequest calibrate;
  calibrate.models = request.models;
  calibrate.batches = request.batches;
  calibrate.backend = request.backend;
  // The node's first run, planned within its whole time (pipeline/first_run_plan.hpp): the
  // default's, or the micro-run seconds asked for when those are more.
  calibrate.first_run_seconds = std::max(pipeline::default_first_run_seconds, request.budget_seconds);
  calibrate.progress = request.progress;
  auto made = pipeline::default_calibration(calibrate);
  if (!made) return made.error();
  if (made->calibration_path.empty()) return failure("nothing could be measured on this node: " + made->note);
  auto machine = records::read_machine_profile(made->machine_path);
  if (!machine) return machine.error();
  NodeRecord record;
  const char* slurm_node = std::getenv("SLURMD_NODENAME");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  record.node = slurm_node && *slurm_node ? slurm_node : host;
  record.partition = request.partition;
  record.fingerprint = records::fingerprint(*machine);
  record.calibration = made->calibration_path;
  record.measurements = fs::path(made->machine_path).parent_path().string();
  const char* job = std::getenv("SLURM_JOB_ID");
  record.job = job ? job : "";
  record.written = now_seconds();
  if (auto written = write_node_record(record); !written) return written.error();
  return record;
}

Expected<void> refit_with_fabric(const std::string& partition, const std::string& backend,
                                 const std::string& comm_directory) {
  if (auto checked = check_partition(partition); !checked) return checked.error();
  auto records = node_records_of(partition);
  if (!records) return records.error();
  if (records->empty()) return failure("no node of " + partition + " is calibrated yet: nothing to refit");
  NodeRecord record = records->front();
  auto inputs = pipeline::read_measurement_inputs({record.measurements, comm_directory});
  if (!inputs) return inputs.error();
  const std::string path = comm_directory + "/calibration.json";
  if (auto written = pipeline::fit_and_write_calibration(*inputs, record.measurements + "/machine.json", backend, path);
      !written)
    return written.error();
  record.calibration = path;
  record.written = now_seconds();
  return write_node_record(record);
}

}  // namespace dnntune::scheduler
