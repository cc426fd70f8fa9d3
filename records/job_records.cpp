// records/job_records.cpp — see job_records.hpp.
#include "records/job_records.hpp"

#include <sys/stat.h>

#include <set>
#include <utility>

namespace dnntune::records {

std::string job_file_path(const std::string& cache_directory, const std::string& fingerprint) {
  return cache_directory + "/jobs/" + fingerprint + ".jsonl";
}

Expected<JobFile> read_job_file(const std::string& path, const std::string& fingerprint) {
  JobFile file;
  if (struct stat status{}; ::lstat(path.c_str(), &status) != 0) return file;  // no job recorded yet
  auto read = read_measurements(path);
  if (!read) return read.error();
  file.not_taken = read->skipped_lines;
  if (read->truncated_lines > 0)
    file.not_taken.push_back(path + ": its last line was cut short (a writer killed mid-write) and is not read");
  std::set<std::pair<std::string, std::size_t>> seen;  // job id, ranks
  for (std::size_t index = 0; index < read->records.size(); ++index) {
    Measurement& record = read->records[index];
    const std::string where = path + ": record " + std::to_string(index + 1);
    if (record.kind != MeasurementKind::job) {
      file.not_taken.push_back(where + " is a " + to_string(record.kind) + " record, not a job");
    } else if (!fingerprint.empty() && record.machine_fingerprint != fingerprint) {
      file.not_taken.push_back(where + " (job " + record.job.id + ") is of machine " + record.machine_fingerprint +
                               ", not this one (" + fingerprint + ")");
    } else if (!seen.emplace(record.job.id, record.job.rank_median_seconds.size()).second) {
      file.not_taken.push_back(where + ": job " + record.job.id + " with " +
                               std::to_string(record.job.rank_median_seconds.size()) +
                               " rank(s) was recorded before; the first record counts");
    } else {
      file.jobs.push_back(std::move(record));
    }
  }
  return file;
}

}  // namespace dnntune::records
