// frontend/job_evidence.hpp — what the user's recorded jobs (records/job_records.hpp: this
// machine's jobs file, frontend/job_list.hpp's job_file_of) add to every answer: the communication
// terms of each fabric its multi-node jobs ran over (model/job_fabric_fit.hpp), which the answers
// for that fabric then rest on and say so, and the jobs of an answer's setup that ran outside its
// band (model/job_contradictions.hpp), which the answer names.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/job_contradictions.hpp"
#include "model/predictor.hpp"
#include "pipeline/default_calibration.hpp"
#include "tuner/allocator_choice.hpp"
#include "tuner/recommendation.hpp"

namespace dnntune::frontend {

// `predictor` with the terms its machine's multi-node `jobs` fit for their fabrics; each job or
// fabric that could not be fitted is said on `progress` ("job 12 (...) is not fitted: why").
void fit_recorded_fabrics(model::Predictor& predictor, const std::vector<records::Measurement>& jobs,
                          const pipeline::Progress& progress);

// The answer's band under each allocator of `allocator` (glibc's defaults: the prediction's own).
std::vector<model::SetupBand> setup_bands(const model::Prediction& prediction, const tuner::AllocatorChoice& allocator);

// The `jobs` of `prediction`'s setup (the network by its name as given or its own) that ran
// outside the band of their allocator.
std::vector<model::JobContradiction> contradicting_jobs(const model::Predictor& predictor,
                                                        const std::vector<records::Measurement>& jobs,
                                                        const std::string& network_as_given,
                                                        const model::Prediction& prediction,
                                                        const tuner::AllocatorChoice& allocator);

// recommend's: the basis line of the pick's fabric when jobs fitted its terms, and the `jobs` that
// contradict the pick.
void add_job_evidence(tuner::Recommendation& recommendation, const model::Predictor& predictor,
                      const std::vector<records::Measurement>& jobs, const std::string& network_as_given);

}  // namespace dnntune::frontend
