// frontend/job_evidence.cpp — see job_evidence.hpp.
#include "frontend/job_evidence.hpp"

#include <algorithm>

#include "model/job_fabric_fit.hpp"

namespace dnntune::frontend {

void fit_recorded_fabrics(model::Predictor& predictor, const std::vector<records::Measurement>& jobs,
                          const pipeline::Progress& progress) {
  const bool any_over_nodes =
      std::any_of(jobs.begin(), jobs.end(), [](const records::Measurement& job) { return job.nodes > 1; });
  if (!any_over_nodes) return;
  const model::FabricFits fits = model::fit_fabrics_from_jobs(predictor, jobs);
  if (progress)
    for (const std::string& why : fits.not_fitted) progress(why);
  predictor = model::with_fabric_fits(std::move(predictor), fits);
}

std::vector<model::SetupBand> setup_bands(const model::Prediction& prediction,
                                          const tuner::AllocatorChoice& allocator) {
  std::vector<model::SetupBand> bands{{"default", prediction.images_per_second_low, prediction.images_per_second_high}};
  for (const tuner::AllocatorCandidate& candidate : allocator.candidates)
    if (candidate.allocator.name != "default" && candidate.images_per_second_low > 0)
      bands.push_back({candidate.allocator.name, candidate.images_per_second_low, candidate.images_per_second_high});
  return bands;
}

std::vector<model::JobContradiction> contradicting_jobs(const model::Predictor& predictor,
                                                        const std::vector<records::Measurement>& jobs,
                                                        const std::string& network_as_given,
                                                        const model::Prediction& prediction,
                                                        const tuner::AllocatorChoice& allocator) {
  if (predictor.spec_only()) return {};  // jobs ran here, not on a spec node
  return model::contradicting_jobs(jobs, {network_as_given, prediction.network}, prediction.configuration,
                                   setup_bands(prediction, allocator), records::fingerprint(predictor.machine()),
                                   predictor.backend());
}

void add_job_evidence(tuner::Recommendation& recommendation, const model::Predictor& predictor,
                      const std::vector<records::Measurement>& jobs, const std::string& network_as_given) {
  const model::TrainingConfiguration& pick = recommendation.best.prediction.configuration;
  if (pick.nodes > 1)
    if (const model::FabricTerms* terms = predictor.fabric_terms(pick.fabric))
      recommendation.basis.push_back("between nodes on " + pick.fabric + ": " + terms->source);
  if (!recommendation.allocator) return;
  recommendation.contradicting_jobs =
      contradicting_jobs(predictor, jobs, network_as_given, recommendation.best.prediction, *recommendation.allocator);
}

}  // namespace dnntune::frontend
