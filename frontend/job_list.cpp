// frontend/job_list.cpp — see job_list.hpp.
#include "frontend/job_list.hpp"

#include <sys/stat.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "pipeline/default_calibration.hpp"
#include "probe/topology.hpp"
#include "records/job_records.hpp"
#include "model/job_fabric_fit.hpp"
#include "model/measured_setups.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::frontend {
namespace {

bool exists(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0;
}

// The current model, never made here: the source the user named, else this machine's cached
// calibration when a first run left one. `basis` says which, or why there is none.
std::optional<model::Predictor> current_model(const ModelSource& source, std::string& basis) {
  ModelSource chosen = source;
  if (source.calibration_path.empty() && source.machine.empty()) {
    const auto entry = pipeline::default_calibration_entry(source.backend);
    if (!entry || !exists(*entry + "/calibration.json")) {
      basis = "no calibration of this machine yet (dnntune recommend makes one; or give --calibration)";
      return std::nullopt;
    }
    chosen.calibration_path = *entry + "/calibration.json";
  }
  auto loaded = load_predictor(chosen, {}, nullptr);
  if (!loaded) {
    basis = "the current model could not be loaded: " + loaded.error().message;
    return std::nullopt;
  }
  basis = chosen.calibration_path.empty() ? "machine " + chosen.machine : chosen.calibration_path;
  return std::move(*loaded);
}

JobRow row_of(records::Measurement record, const model::Predictor* predictor) {
  JobRow row;
  row.observed_images_per_second =
      static_cast<double>(record.processes) * record.nodes * static_cast<double>(record.batch) / record.median_seconds;
  if (record.job.predicted_images_per_second > 0) row.predicted_before = record.job.predicted_images_per_second;
  if (record.job.device != "cpu") {
    row.not_predicted_now = "a GPU job (dnntune jobs predicts CPU jobs)";
  } else if (predictor == nullptr) {
    row.not_predicted_now = "no current model";
  } else if (auto network = workloads::load_network(record.network); !network) {
    row.not_predicted_now = network.error().message;
  } else {
    model::TrainingConfiguration configuration;
    configuration.batch_per_process = record.batch;
    configuration.processes_per_node = record.processes;
    configuration.threads_per_process = record.threads;
    configuration.smt = record.smt;
    configuration.nodes = record.nodes;
    if (!record.job.fabric.empty()) configuration.fabric = record.job.fabric;  // its fitted terms, when fitted
    if (auto prediction = predictor->predict(*network, configuration, false); prediction)
      row.predicted_now = prediction->images_per_second;
    else
      row.not_predicted_now = prediction.error().message;
  }
  row.record = std::move(record);
  return row;
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json error_of(const std::optional<double>& predicted, double observed) {
  return predicted ? nlohmann::json(prediction_error(*predicted, observed)) : nlohmann::json(nullptr);
}

}  // namespace

double prediction_error(double predicted, double observed) { return (predicted - observed) / observed; }

std::string job_file_of(const std::string& fingerprint) {
  const char* named = std::getenv("DNNTUNE_JOB_RECORD");  // where the hook records, when set
  return named != nullptr && *named != 0 ? std::string(named)
                                         : records::job_file_path(pipeline::cache_directory(), fingerprint);
}

Expected<std::vector<records::Measurement>> recorded_jobs(const records::MachineProfile& machine) {
  const std::string fingerprint = records::fingerprint(machine);
  auto read = records::read_job_file(job_file_of(fingerprint), fingerprint);
  if (!read) return read.error();
  return std::move(read->jobs);
}

void add_recorded_jobs(model::AllocationModel& allocation, const std::vector<records::Measurement>& jobs,
                       const records::MachineProfile& machine, const std::string& backend) {
  allocation.pytorch_setups = model::with_recorded_jobs(allocation.pytorch_setups, jobs, machine, backend);
}

Expected<JobList> list_jobs(const std::string& file, const ModelSource& source) {
  auto machine = probe::describe_this_machine();
  if (!machine) return machine.error();
  JobList list;
  list.fingerprint = records::fingerprint(*machine);
  list.file = file.empty() ? job_file_of(list.fingerprint) : file;
  auto read = records::read_job_file(list.file, list.fingerprint);
  if (!read) return read.error();
  list.not_taken = std::move(read->not_taken);
  auto predictor = read->jobs.empty() ? std::nullopt : current_model(source, list.model_basis);
  if (predictor) {
    const model::FabricFits fits = model::fit_fabrics_from_jobs(*predictor, read->jobs);
    for (const model::FabricFit& fit : fits.fits) list.fabrics_fitted.push_back(fit.fabric + ": " + fit.terms.source);
    list.not_fitted = fits.not_fitted;
    predictor = model::with_fabric_fits(std::move(*predictor), fits);
  }
  for (auto& record : read->jobs) list.rows.push_back(row_of(std::move(record), predictor ? &*predictor : nullptr));
  return list;
}

nlohmann::json job_list_json(const JobList& list) {
  nlohmann::json out = schema_head("dnntune.jobs", 1);
  out["file"] = list.file;
  out["machine_fingerprint"] = list.fingerprint;
  out["model_basis"] = list.model_basis;
  out["jobs"] = nlohmann::json::array();
  for (const JobRow& row : list.rows) {
    const records::Measurement& r = row.record;
    out["jobs"].push_back({
        {"id", r.job.id},
        {"recorded", r.timestamp},
        {"network", r.network},
        {"batch_per_process", r.batch},
        {"processes_per_node", r.processes},
        {"threads_per_process", r.threads},
        {"smt", r.smt},
        {"nodes", r.nodes},
        {"allocator", r.allocator},
        {"device", r.job.device},
        {"launcher", r.job.launcher},
        {"timed_steps", r.repetitions},
        {"step_seconds",
         {{"median", r.median_seconds},
          {"min", r.min_seconds},
          {"max", r.max_seconds},
          {"coefficient_of_variation", r.coefficient_of_variation}}},
        {"rank_median_seconds", r.job.rank_median_seconds},
        {"observed_images_per_second", row.observed_images_per_second},
        {"predicted_before", optional_number(row.predicted_before)},
        {"error_before", error_of(row.predicted_before, row.observed_images_per_second)},
        {"predicted_now", optional_number(row.predicted_now)},
        {"error_now", error_of(row.predicted_now, row.observed_images_per_second)},
        {"not_predicted_now", row.not_predicted_now},
    });
  }
  out["not_taken"] = list.not_taken;
  out["fabrics_fitted"] = list.fabrics_fitted;
  out["not_fitted"] = list.not_fitted;
  return out;
}

}  // namespace dnntune::frontend
