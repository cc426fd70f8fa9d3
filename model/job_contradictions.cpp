// model/job_contradictions.cpp — see job_contradictions.hpp.
#include "model/job_contradictions.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/text_format.hpp"

namespace dnntune::model {
namespace {

bool ran_setup(const records::Measurement& job, const std::vector<std::string>& network_names,
               const TrainingConfiguration& c) {
  if (std::find(network_names.begin(), network_names.end(), job.network) == network_names.end()) return false;
  // Over nodes the fabric is part of the setup; a job that did not name its own may have run any.
  const bool same_fabric = c.nodes == 1 || job.job.fabric == c.fabric;
  return job.batch == c.batch_per_process && job.processes == c.processes_per_node &&
         job.threads == c.threads_per_process && job.smt == c.smt && job.nodes == c.nodes && same_fabric;
}

std::string allocator_words(const std::string& allocator) {
  return allocator == "default" ? "under glibc's defaults" : "under " + allocator;
}

}  // namespace

std::vector<JobContradiction> contradicting_jobs(const std::vector<records::Measurement>& jobs,
                                                 const std::vector<std::string>& network_names,
                                                 const TrainingConfiguration& configuration,
                                                 const std::vector<SetupBand>& bands, const std::string& fingerprint,
                                                 const std::string& backend) {
  std::vector<JobContradiction> found;
  for (const records::Measurement& job : jobs) {
    if (job.kind != records::MeasurementKind::job || job.machine_fingerprint != fingerprint || job.backend != backend ||
        job.job.device != "cpu" || !(job.median_seconds > 0) || !ran_setup(job, network_names, configuration))
      continue;
    const auto band = std::find_if(bands.begin(), bands.end(),
                                   [&](const SetupBand& candidate) { return candidate.allocator == job.allocator; });
    if (band == bands.end() || !(band->low > 0) || !(band->high >= band->low)) continue;
    const double images_per_second =
        static_cast<double>(job.processes) * job.nodes * static_cast<double>(job.batch) / job.median_seconds;
    if (images_per_second >= band->low && images_per_second <= band->high) continue;
    JobContradiction contradiction{job.job.id, job.timestamp, job.allocator, images_per_second, band->low, band->high,
                                   ""};
    contradiction.text = "a job of yours, " + job.timestamp.substr(0, 10) + ", ran " +
                         format_fixed(images_per_second, 1) + " images/s, outside this answer's band " +
                         format_fixed(band->low, 1) + "-" + format_fixed(band->high, 1) + " (job " + job.job.id + ", " +
                         allocator_words(job.allocator) + ")";
    found.push_back(std::move(contradiction));
  }
  return found;
}

std::string contradictions_text(const std::vector<JobContradiction>& contradictions) {
  std::string text;
  for (const JobContradiction& contradiction : contradictions) text += "  contradicted: " + contradiction.text + "\n";
  return text;
}

nlohmann::json contradictions_json(const std::vector<JobContradiction>& contradictions) {
  nlohmann::json out = nlohmann::json::array();
  for (const JobContradiction& c : contradictions)
    out.push_back({{"id", c.job_id},
                   {"recorded", c.recorded},
                   {"allocator", c.allocator},
                   {"images_per_second", c.images_per_second},
                   {"band", {c.band_low, c.band_high}},
                   {"text", c.text}});
  return out;
}

}  // namespace dnntune::model
