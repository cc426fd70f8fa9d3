// records/job_records.hpp — the jobs file: users' own training jobs (kind job records, one per line,
// appended by the Python hook python/dnntune/observe.py), kept apart from the first run's
// measurements so that no fit reads them as its own. One file per machine, named by its
// fingerprint (CACHE/jobs/FINGERPRINT.jsonl), or the file DNNTUNE_JOB_RECORD names.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "records/measurement.hpp"

namespace dnntune::records {

// CACHE/jobs/FINGERPRINT.jsonl: where the hook appends a job of that machine.
std::string job_file_path(const std::string& cache_directory, const std::string& fingerprint);

// A jobs file as read for one machine: its jobs in the order they were recorded, and one line
// per record not taken ("FILE:LINE: why"): another machine's (named by its fingerprint), a second
// record of a job already read (same id and ranks), a line cut short, a record of another kind
// or a damaged one. Nothing not taken is dropped silently.
struct JobFile {
  std::vector<Measurement> jobs;
  std::vector<std::string> not_taken;
};

// The jobs of the machine `fingerprint` in `path` (every machine's when it is empty). A missing
// file is no jobs; a file holding no record at all that parses is an error, as read_measurements.
Expected<JobFile> read_job_file(const std::string& path, const std::string& fingerprint);

}  // namespace dnntune::records
