// cli/slurm_calibration.cpp — see slurm_calibration.hpp.
#include "cli/slurm_calibration.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include <sys/wait.h>

#include "pipeline/default_calibration.hpp"
#include "pipeline/measurement_inputs.hpp"
#include "common/self_executable.hpp"
#include "common/files.hpp"
#include "common/json_file.hpp"
#include "common/shell_words.hpp"
#include "model/calibration.hpp"
#include "model/fit.hpp"
#include "records/machine_profile.hpp"
#include "frontend/partition_calibration.hpp"
#include "tuner/job_script.hpp"
#include "tuner/sbatch_header.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::cli {
namespace {

namespace fs = std::filesystem;
using frontend::lines_of;
using frontend::NodeRecord;
using frontend::node_records_of;
using frontend::partition_nodes;
using frontend::run_command;
using frontend::slurm_directory;
using frontend::write_node_record;

void progress(const std::string& line) { std::cerr << "dnntune calibrate --slurm: " << line << std::endl; }

std::string comm_directory_of(const std::string& partition) { return slurm_directory() + "/comm/" + partition; }

// A partition name goes into paths and job scripts: SLURM's own characters only.
Expected<void> check_partition(const std::string& partition) {
  if (partition.empty()) return bad_input("--slurm needs --partition NAME");
  return tuner::check_slurm_name("--partition", partition);
}

Expected<void> check_names(const SlurmCalibrationRequest& request) {
  // Everything below reaches a job script; it is quoted there too, but a name SLURM would not
  // take is refused here, with the option that carried it.
  if (auto partition = check_partition(request.partition); !partition) return partition.error();
  if (!request.account.empty())
    if (auto account = tuner::check_slurm_name("--account", request.account); !account) return account.error();
  if (auto time = tuner::check_slurm_time(request.time_limit); !time) return time.error();
  if (request.models.empty()) return bad_input("--slurm needs --model: the networks to calibrate the node for");
  for (const auto& model : request.models)
    if (auto network = workloads::load_network(model); !network) return network.error();
  const std::string cache = pipeline::cache_directory();
  if (cache.find_first_of(" \t\n\r'\"\\$`") != std::string::npos || cache.front() != '/')
    return bad_input("the cache directory \"" + cache + "\" goes into #SBATCH lines: give DNNTUNE_CACHE_DIR an "
                     "absolute path without spaces or quotes, on a file system the compute nodes share");
  return {};
}

// The #SBATCH head of a calibration job on `nodes` exclusive nodes (tuner/sbatch_header.hpp).
std::string job_head(const SlurmCalibrationRequest& request, const std::string& name, const std::string& log,
                     int nodes, int tasks_per_node) {
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

// The job scripts' dnntune lines, each from one typed builder (quoted by shell_command_line).
// The single-node job: `EXE calibrate --slurm-node-job ...` (run_slurm_node_job).
std::vector<std::string> node_job_argv(const std::string& executable, const SlurmCalibrationRequest& request) {
  std::vector<std::string> argv = {executable, "calibrate", "--slurm-node-job", "--partition", request.partition,
                                   "--backend", request.backend, "--budget",
                                   std::to_string(static_cast<long long>(request.budget_seconds))};
  for (const auto& model : request.models) argv.insert(argv.end(), {"--model", model});
  for (const auto batch : request.batches) argv.insert(argv.end(), {"--batch", std::to_string(batch)});
  return argv;
}

// The two-node job: the all-reduce sweep, one rank per node, into `comm`...
std::vector<std::string> fabric_sweep_argv(const std::string& executable, const std::string& comm) {
  return {"mpirun", "-np", "2", "--map-by", "ppr:1:node", executable, "calibrate", "--comm", "-o", comm};
}

// ...then the refit with the fabric it measured (refit_with_fabric).
std::vector<std::string> fabric_refit_argv(const std::string& executable, const SlurmCalibrationRequest& request,
                                           const std::string& comm) {
  return {executable, "calibrate", "--slurm-refit-fabric", "--partition", request.partition, "--backend",
          request.backend, "-o", comm};
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
Expected<void> wait_for(const std::string& job, const std::string& log, double poll_seconds) {
  std::string last_state;
  std::size_t log_lines_shown = 0;
  for (;;) {
    auto state = run_command({"squeue", "-h", "-j", job, "-o", "%T"});
    // squeue refuses a job id it no longer knows: the job has left the queue.
    const std::string now = state ? (lines_of(*state).empty() ? "" : lines_of(*state).front()) : "";
    if (now != last_state && !now.empty()) progress("job " + job + ": " + now);
    last_state = now;
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (; log_lines_shown < lines.size(); ++log_lines_shown)
      if (lines[log_lines_shown].rfind("dnntune", 0) == 0) progress("  " + lines[log_lines_shown]);
    if (now.empty()) return {};
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_seconds));
  }
}

}  // namespace

Expected<void> calibrate_through_slurm(const SlurmCalibrationRequest& request) {
  if (auto checked = check_names(request); !checked) return checked.error();
  auto nodes = partition_nodes(request.partition);
  if (!nodes) return nodes.error();
  if (nodes->empty()) return bad_input("partition " + request.partition + " has no nodes (sinfo -p " + request.partition + ")");
  const auto found = self_executable_path();
  if (!found) return found.error();
  const std::string& executable = *found;
  std::error_code error;
  fs::create_directories(slurm_directory() + "/jobs", error);
  if (error) return failure(slurm_directory() + "/jobs: cannot create (" + error.message() + ")");
  const std::string stamp = std::to_string(static_cast<long long>(now_seconds()));
  const std::string environment = "export DNNTUNE_CACHE_DIR=" + shell_quote(pipeline::cache_directory()) + "\n";

  // 1. One exclusive node: probe, layer micro-runs, anchors, fit.
  const std::string node_log = slurm_directory() + "/jobs/calibrate-" + request.partition + "-" + stamp + ".out";
  const std::string node_script = job_head(request, "dnntune-calibrate", node_log, 1, 0) + environment + "exec " +
                                  shell_command_line(node_job_argv(executable, request)) + "\n";
  auto node_job = submit(slurm_directory() + "/jobs/calibrate-" + request.partition + "-" + stamp + ".sbatch",
                         node_script, {});
  if (!node_job) return node_job.error();
  progress("submitted job " + *node_job + " (one exclusive node of " + request.partition + ", of " +
           std::to_string(nodes->size()) + "): probe, layer micro-runs and fit; log " + node_log);

  // 2. With two nodes or more: all-reduce over the real fabric, then the refit.
  std::string fabric_job, fabric_log;
  if (nodes->size() >= 2) {
    fabric_log = slurm_directory() + "/jobs/fabric-" + request.partition + "-" + stamp + ".out";
    const std::string comm = comm_directory_of(request.partition);
    const std::string script = job_head(request, "dnntune-fabric", fabric_log, 2, 1) + environment +
                               shell_command_line(fabric_sweep_argv(executable, comm)) + " || exit 1\nexec " +
                               shell_command_line(fabric_refit_argv(executable, request, comm)) + "\n";
    auto submitted = submit(slurm_directory() + "/jobs/fabric-" + request.partition + "-" + stamp + ".sbatch", script,
                            {"--dependency=afterok:" + *node_job});
    if (!submitted) return submitted.error();
    fabric_job = *submitted;
    progress("submitted job " + fabric_job + " (two nodes, after job " + *node_job +
             "): all-reduce sweep over the fabric and the refit; log " + fabric_log);
  } else {
    progress("partition " + request.partition + " has one node: no fabric to sweep (a fabric preset stands in: --network)");
  }

  const std::string use = "dnntune recommend --partition " + request.partition + " --model " + request.models.front();
  if (!request.wait) {
    std::cout << "Submitted SLURM job " << *node_job << (fabric_job.empty() ? "" : " and " + fabric_job) << " to calibrate a node of "
              << request.partition << ".\nFollow it: squeue -j " << *node_job << "; tail -f " << node_log
              << "\nWhen it has finished: " << use << "\n";
    return {};
  }
  if (auto waited = wait_for(*node_job, node_log, request.poll_seconds); !waited) return waited.error();
  auto records = node_records_of(request.partition);
  if (!records) return records.error();
  const auto made = std::find_if(records->begin(), records->end(), [&](const auto& r) { return r.job == *node_job; });
  if (made == records->end())
    return failure("SLURM job " + *node_job + " ended without a calibration of " + request.partition + ": see " + node_log);
  if (!fabric_job.empty()) {
    if (auto waited = wait_for(fabric_job, fabric_log, request.poll_seconds); !waited) return waited.error();
    if (!fs::exists(comm_directory_of(request.partition) + "/calibration.json"))
      return failure("SLURM job " + fabric_job + " ended without the fabric's refit: see " + fabric_log +
                     " (the node's calibration is there and usable: " + use + ")");
  }
  std::cout << "Calibrated " << made->node << " of partition " << request.partition << " (fingerprint "
            << made->fingerprint << ", SLURM job " << made->job << "): " << made->calibration << "\nUse it: " << use
            << "\n";
  return {};
}

Expected<void> run_slurm_node_job(const SlurmCalibrationRequest& request) {
  if (auto partition = check_partition(request.partition); !partition) return partition.error();
  pipeline::DefaultCalibrationRequest calibrate;
  calibrate.models = request.models;
  calibrate.batches = request.batches;
  calibrate.backend = request.backend;
  // The node's first run, planned within its whole time (pipeline/first_run_plan.hpp): the
  // default's, or the micro-run seconds asked for when those are more.
  calibrate.first_run_seconds = std::max(pipeline::default_first_run_seconds, request.budget_seconds);
  calibrate.progress = progress;
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
  std::cout << "Recorded " << record.node << " of partition " << record.partition << ": " << record.calibration << "\n";
  return {};
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
  auto machine = records::read_machine_profile(record.measurements + "/machine.json");
  if (!machine) return machine.error();
  auto calibration = model::fit_calibration(inputs->records, *machine, backend, inputs->files, model::FitOptions{});
  if (!calibration) return calibration.error();
  const std::string path = comm_directory + "/calibration.json";
  if (auto written = write_json_file(path, nlohmann::json::parse(model::to_json_text(*calibration)), WrittenFile::owned); !written)
    return written.error();
  record.calibration = path;
  record.written = now_seconds();
  return write_node_record(record);
}

}  // namespace dnntune::cli
