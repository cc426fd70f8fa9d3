// frontend/job_list.hpp — the recorded jobs (records/job_records.hpp) beside dnntune's predictions
// for their setups: the one made before the job (carried in its record) and the one the current
// model makes now, with their errors against what the job ran. What `dnntune jobs` shows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/expected.hpp"
#include "frontend/model_source.hpp"
#include "model/allocation.hpp"
#include "records/measurement.hpp"

namespace dnntune::frontend {

struct JobRow {
  records::Measurement record;
  double observed_images_per_second = 0;   // ranks x batch per median step of the slowest rank
  std::optional<double> predicted_before;  // the record's prediction (none: the job was not
  std::optional<double> predicted_now;     //   launched by a recommended line); the current model's
  std::string not_predicted_now;           // why predicted_now is absent
};

struct JobList {
  std::string file;         // the jobs file read
  std::string fingerprint;  // whose jobs are listed
  std::string model_basis;  // what the current predictions come from ("" : none could be made)
  std::vector<JobRow> rows;
  std::vector<std::string> not_taken;  // records of the file not listed, each with why
  // The communication terms the multi-node jobs fit, one line per fabric ("eth10: ..."; the current
  // model's "now" takes them), and the jobs or fabrics not fitted, each with why.
  std::vector<std::string> fabrics_fitted, not_fitted;
};

// The signed error of a prediction against what ran: (predicted - observed) / observed.
double prediction_error(double predicted, double observed);

// This machine's jobs: `file` ("" : $DNNTUNE_JOB_RECORD, where the hook records when it is set,
// else CACHE/jobs/FINGERPRINT.jsonl), predicted now by `source` when it
// names a calibration or machine, else by this machine's cached calibration when there is one.
// Never starts a first run: without a model, predicted_now stays empty and model_basis says why.
Expected<JobList> list_jobs(const std::string& file, const ModelSource& source);

// The jobs file of the machine `fingerprint`: $DNNTUNE_JOB_RECORD when set, else CACHE/jobs/FINGERPRINT.jsonl.
std::string job_file_of(const std::string& fingerprint);
// The jobs of `machine` recorded in its jobs file (none when there is none yet).
Expected<std::vector<records::Measurement>> recorded_jobs(const records::MachineProfile& machine);

// The allocation model with the setups this machine's recorded jobs ran competing as PyTorch's
// first-run runs do (model::with_recorded_jobs, read by tuner::recommend_allocator): a job that ran
// a passed-over setup faster than the pick turns it, and the answer names the job.
void add_recorded_jobs(model::AllocationModel& allocation, const std::vector<records::Measurement>& jobs,
                       const records::MachineProfile& machine, const std::string& backend);

// The `dnntune jobs --json` document (schema dnntune.jobs v1, schemas/jobs.schema.json).
nlohmann::json job_list_json(const JobList& list);

}  // namespace dnntune::frontend
