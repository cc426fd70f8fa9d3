// model/job_contradictions.hpp — when a job the user ran contradicts an answer: a recorded job
// (records kind job: python/dnntune/observe.py) of the answer's network, batch and setup (layout,
// nodes, the fabric over nodes, the allocator) that ran outside the answer's 90% band for that
// setup. An answer must not stay silent about a run that says it is wrong: recommend and predict
// name each such job, by its day and its images/s against the band.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/training_configuration.hpp"
#include "records/measurement.hpp"

namespace dnntune::model {

// An answer's band for its setup under one allocator (the model's figures are under glibc's
// defaults, "default"; an allocator variant has its own figure and band).
struct SetupBand {
  std::string allocator = "default";
  double low = 0, high = 0;
};

struct JobContradiction {
  std::string job_id;
  std::string recorded;  // the record's timestamp
  std::string allocator;
  double images_per_second = 0;  // the job's: ranks x batch over the median step of its slowest rank
  double band_low = 0, band_high = 0;
  // "a job of yours, 2026-12-07, ran 41.2 images/s, outside this answer's band 45.0-52.3 (job 123, under glibc's defaults)"
  std::string text;
};

// The jobs among `jobs` of machine `fingerprint`, backend `backend` and a CPU device that ran
// `configuration` of the network (by any of `network_names`: the name as given, the network's
// own) under an allocator `bands` holds, outside that band; in the order recorded.
std::vector<JobContradiction> contradicting_jobs(const std::vector<records::Measurement>& jobs,
                                                 const std::vector<std::string>& network_names,
                                                 const TrainingConfiguration& configuration,
                                                 const std::vector<SetupBand>& bands, const std::string& fingerprint,
                                                 const std::string& backend);

// "  contradicted: TEXT\n" per job, and the JSON array (schemas/prediction.schema.json's
// contradicting_jobs, as recommendation.schema.json's).
std::string contradictions_text(const std::vector<JobContradiction>& contradictions);
nlohmann::json contradictions_json(const std::vector<JobContradiction>& contradictions);

}  // namespace dnntune::model
