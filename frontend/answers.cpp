// frontend/answers.cpp — see answers.hpp.
#include "frontend/answers.hpp"

#include "frontend/job_list.hpp"

#include <algorithm>
#include <cmath>

#include "common/json_file.hpp"
#include "common/logical_cpus.hpp"
#include "common/shell_words.hpp"
#include "common/text_format.hpp"
#include "frontend/job_evidence.hpp"
#include "frontend/job_list.hpp"
#include "frontend/option_rows.hpp"
#include "model/report.hpp"
#include "pipeline/installed_allocators.hpp"
#include "pipeline/real_training.hpp"
#include "probe/allocators.hpp"
#include "tuner/report.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::frontend {
namespace {

// Variance of log(a / b) over paired replicates (0 when there are none).
double paired_log_variance(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || a.size() != b.size()) return 0;
  std::vector<double> differences;
  for (std::size_t index = 0; index < a.size(); ++index) differences.push_back(std::log(a[index] / b[index]));
  double mean = 0, variance = 0;
  for (double value : differences) mean += value / differences.size();
  for (double value : differences) variance += (value - mean) * (value - mean) / (differences.size() - 1);
  return variance;
}

// How much of the answer's uncertainty the parameters the reference could not identify cause:
// their share of the pick's band (log-variance), and of the paired spread between the top score
// and its nearest rival, which is what decides a tie.
std::string band_share_line(const LoadedModel& loaded, const workloads::Network& network,
                            const tuner::Recommendation& recommendation) {
  const model::Predictor& fixed = *loaded.without_prior_spread;
  const model::Prediction& best = recommendation.best.prediction;
  const auto narrower = fixed.predict(network, best.configuration, true);
  if (!narrower) return "the share of the unidentified parameters could not be computed: " + narrower.error().message;
  const double whole = std::log(best.images_per_second / best.images_per_second_low);
  const double identified = std::log(narrower->images_per_second / narrower->images_per_second_low);
  const auto share = [](double part, double all) { return all > 0 ? std::max(0.0, 1 - part / all) : 0.0; };
  std::string line =
      "the unidentified parameters cause " + format_fixed(100 * share(identified * identified, whole * whole), 0) +
      "% of the pick's band (its log-variance: " + format_fixed(best.images_per_second_low, 1) + "-" +
      format_fixed(best.images_per_second_high, 1) + " images/s, " + format_fixed(narrower->images_per_second_low, 1) +
      "-" + format_fixed(narrower->images_per_second_high, 1) +
      " with them fixed at their priors; the rest is the spec transfer and the reference's own fit)";
  // The top score against the pick, or against the runner-up when the pick is the top score.
  const auto& top = recommendation.ranking.front().prediction.configuration;
  const auto& rival = best.configuration != top           ? best.configuration
                      : recommendation.ranking.size() > 1 ? recommendation.ranking[1].prediction.configuration
                                                          : top;
  if (rival == top) return line;
  const auto a = loaded.predictor.replicate_images_per_second(network, top);
  const auto b = loaded.predictor.replicate_images_per_second(network, rival);
  const auto a_fixed = fixed.replicate_images_per_second(network, top);
  const auto b_fixed = fixed.replicate_images_per_second(network, rival);
  if (!a || !b || !a_fixed || !b_fixed) return line;
  return line + ", and " +
         format_fixed(100 * share(paired_log_variance(*a_fixed, *b_fixed), paired_log_variance(*a, *b)), 0) +
         "% of the paired spread between " + model::describe(top) + " and " + model::describe(rival) +
         " (what decides whether they tie)";
}

// What would settle a tie the model cannot break, for where the model came from.
std::string how_to_settle(const LoadedModel& loaded, const ModelSource& source, const RecommendRequest& request) {
  const std::string model = " --model " + shell_quote(request.network);  // quoted as the scripts quote
  if (loaded.measured_here) return "dnntune recommend" + model + " --verify 4 trains the tied candidates on this node";
  if (loaded.from_partition)
    return "dnntune recommend" + model + " --verify 4 in a job on a node of " + request.partition;
  const std::string partition = request.partition.empty() ? "P" : request.partition;
  if (!source.machine.empty() || !source.topology_path.empty())
    return "measure the node itself: dnntune calibrate --slurm --partition " + partition + model +
           ", then dnntune recommend --partition " + partition + model + " (or recommend" + model +
           " --verify 4 run on such a node)";
  return "dnntune recommend" + model + " --verify 4 in a job on a node of " + partition;
}

// --verify K: the analytical answer checked empirically. Trains the recommended configuration
// and the best-ranked others, K in all, on this node; tuner::choose_by_measurement decides.
Expected<void> verify_for_real(tuner::Recommendation& recommendation, const RecommendRequest& request,
                               const pipeline::Progress& progress) {
  pipeline::RealTrainingOptions training;
  training.iterations = 3;
  const auto candidates = tuner::verification_candidates(recommendation, static_cast<std::size_t>(request.verify));
  std::vector<tuner::VerifiedPoint> verified;
  for (std::size_t index = 0; index < candidates.size(); ++index) {
    const auto ranked =
        std::find_if(recommendation.ranking.begin(), recommendation.ranking.end(),
                     [&](const auto& point) { return point.prediction.configuration == candidates[index]; });
    if (progress)
      progress("verifying [" + std::to_string(index + 1) + "/" + std::to_string(candidates.size()) + "] " +
               model::describe(candidates[index]));
    auto run = pipeline::train_for_real(request.network, candidates[index], training);
    if (!run) return run.error();
    verified.push_back({ranked->prediction, run->images_per_second, run->low, run->high});
  }
  tuner::choose_by_measurement(recommendation, std::move(verified));
  return {};
}

// Everything in `request` that needs no model, checked before a first run starts.
Expected<void> check_recommend_request(const AnswerSource& source, const RecommendRequest& request) {
  if (request.verify > 0 && (!source.source().machine.empty() || !source.source().topology_path.empty()))
    return bad_input(long_name(option_rows::verify) +
                     " trains on this machine: it cannot verify a recommendation for " +
                     long_name(option_rows::machine) + " or " + long_name(option_rows::topology));
  return check_allocator_name(request.allocator);
}

// The allocator chosen for `prediction`'s setup (the user's when named): for a layout that is not
// the recommendation's pick, whose allocator comes with the recommendation.
tuner::AllocatorChoice allocator_of(const model::Predictor& predictor, const workloads::Network& network,
                                    const model::Prediction& prediction, const std::string& user_choice) {
  return tuner::choose_allocator(allocation_model(predictor), network, prediction, pipeline::installed_allocators(),
                                 user_choice);
}

// answer_recommend from its search on, with the model already loaded for the request's network
// and batches: predict's and scale's default layout ask it with the model they loaded.
Expected<RecommendAnswer> recommend_with(const AnswerSource& source, const LoadedModel& loaded,
                                         const workloads::Network& network, const RecommendRequest& request) {
  const model::Predictor& predictor = loaded.predictor;
  // Long lists: refused past the request's minutes, else said first.
  if (auto bounded = announce_search(predictor, network, request.space, source.progress(), request.max_minutes,
                                     request.max_minutes_option);
      !bounded)
    return bounded.error();
  auto recommendation = tuner::recommend(predictor, network, request.space, request.options);
  if (!recommendation) return recommendation.error();
  RecommendAnswer answer{std::move(*recommendation), predictor.rates()};
  tuner::Recommendation& result = answer.recommendation;
  result.basis = loaded.basis;
  if (loaded.without_prior_spread) result.basis.push_back(band_share_line(loaded, network, result));
  result.how_to_settle = how_to_settle(loaded, source.source(), request);
  if (request.verify > 0)
    if (auto verified = verify_for_real(result, request, source.progress()); !verified) return verified.error();
  // This machine's recorded jobs compete as PyTorch's first-run runs do (frontend/job_list.hpp).
  auto allocation = allocation_model(predictor);
  if (allocation) add_recorded_jobs(*allocation, loaded.jobs, predictor.machine(), source.source().backend);
  tuner::recommend_allocator(result, allocation, network, pipeline::installed_allocators(), request.allocator);
  add_job_evidence(result, predictor, loaded.jobs, request.network);
  // The allocator may have settled a close call: the job runs the pick it left.
  answer.seconds_to_train = request.options.epochs * static_cast<double>(request.options.dataset_images) /
                            result.best.prediction.images_per_second;
  answer.job_allocator = result.allocator->chosen;
  return answer;
}

// predict's and scale's configuration: the asked one with the recommended layout where the user
// gave none (answer_recommend's pick at this batch, node count, fusion and fabric, allocator
// included), and that recommendation's allocator when the layout is its pick.
Expected<DefaultedConfiguration> defaulted_setup(const LoadedModel& loaded, const workloads::Network& network,
                                                 const AnswerSource& source, const PredictRequest& request) {
  const Recommender recommended = [&](const tuner::SearchSpaceOptions& space) -> Expected<tuner::Recommendation> {
    RecommendRequest asked;
    asked.network = request.network;
    asked.space = space;
    asked.allocator = request.allocator;
    auto answer = recommend_with(source, loaded, network, asked);
    if (!answer) return answer.error();
    return std::move(answer->recommendation);
  };
  return with_default_layout(loaded.predictor, network, request.configuration, request.given, recommended);
}

// What predict and scale both stand on: the allocator name checked, the network, the model for its
// batch, and the configuration with its default layout.
struct PredictionSetup {
  workloads::Network network;
  LoadedModel loaded;
  DefaultedConfiguration setup;
};

Expected<PredictionSetup> prediction_setup(const AnswerSource& source, const PredictRequest& request) {
  if (auto checked = check_allocator_name(request.allocator); !checked) return checked.error();
  auto network = workloads::load_network(request.network);
  if (!network) return network.error();
  auto loaded = source.model_for(request.network, {request.configuration.batch_per_process});
  if (!loaded) return loaded.error();
  auto setup = defaulted_setup(*loaded, *network, source, request);
  if (!setup) return setup.error();
  return PredictionSetup{std::move(*network), std::move(*loaded), std::move(*setup)};
}

}  // namespace

AnswerSource::AnswerSource(ModelSource source, std::string executable, pipeline::Progress progress)
    : source_(std::move(source)), executable_(std::move(executable)), progress_(std::move(progress)) {}

Expected<void> AnswerSource::preload() {
  if (!answers_alike() || loaded_) return {};
  auto loaded = model_for("", {});
  if (!loaded) return loaded.error();
  return {};
}

Expected<LoadedModel> AnswerSource::model_for(const std::string& network,
                                              const std::vector<std::int64_t>& batches) const {
  if (loaded_) return with_recorded_jobs(*loaded_);
  pipeline::DefaultCalibrationRequest request;
  if (!network.empty()) request.models = {network};
  request.batches = batches;
  request.backend = source_.backend;
  request.executable = executable_;
  auto loaded = load_model(source_, request, progress_);
  if (!loaded) return loaded.error();
  if (answers_alike()) loaded_ = *loaded;
  return with_recorded_jobs(std::move(*loaded));
}

Expected<LoadedModel> AnswerSource::with_recorded_jobs(LoadedModel loaded) const {
  // Read at every request, not kept with the model: a job may have been recorded since.
  auto jobs = recorded_jobs(loaded.predictor.machine());
  if (!jobs) return jobs.error();
  loaded.jobs = std::move(*jobs);
  const pipeline::Progress once = [this](const std::string& line) {
    if (progress_ && said_.insert(line).second) progress_(line);
  };
  fit_recorded_fabrics(loaded.predictor, loaded.jobs, once);
  return loaded;
}

Expected<void> check_allocator_name(const std::string& allocator) {
  if (allocator.empty()) return {};
  if (auto variant = probe::allocator_variant(allocator); !variant)
    return bad_input(long_name(option_rows::allocator) + ": " + variant.error().message);
  return {};
}

std::optional<model::AllocationModel> allocation_model(const model::Predictor& predictor) {
  if (predictor.spec_only()) return std::nullopt;
  return predictor.allocation() ? predictor.allocation() : model::prior_allocation(predictor.machine());
}

Expected<RecommendAnswer> answer_recommend(const AnswerSource& source, const RecommendRequest& request) {
  if (auto checked = check_recommend_request(source, request); !checked) return checked.error();
  auto network = workloads::load_network(request.network);
  if (!network) return network.error();
  // This machine's calibration measures the batches its ranks would run with.
  const int this_machines_cpus = logical_cpus();
  const auto batches = tuner::batches_to_score(request.space, this_machines_cpus);
  if (batches.empty())
    return bad_input(long_name(option_rows::global_batch) + " " + std::to_string(request.space.global_batch) +
                     " does not split evenly over any number of processes of the node counts into batches of at most " +
                     std::to_string(workloads::max_batch) + " per process");
  ModelSource where = source.source();
  where.partition = request.partition;  // the job's partition is also where the answer is for
  const AnswerSource partition_source(where, "", source.progress());
  auto loaded = (request.partition.empty() ? source : partition_source).model_for(request.network, batches);
  if (!loaded) return loaded.error();
  if (request.verify > 0 && loaded->from_partition)
    return bad_input(long_name(option_rows::verify) + " trains on this machine, but the answer is for partition " +
                     request.partition + "'s nodes: run recommend " + long_name(option_rows::verify) +
                     " in a job on one of them");
  return recommend_with(source, *loaded, *network, request);
}

Expected<PredictAnswer> answer_predict(const AnswerSource& source, const PredictRequest& request) {
  auto prepared = prediction_setup(source, request);
  if (!prepared) return prepared.error();
  const auto& [network, loaded, setup] = *prepared;
  auto prediction = loaded.predictor.predict(network, setup.configuration);
  if (!prediction) return prediction.error();
  tuner::AllocatorChoice allocator =
      setup.allocator ? *setup.allocator : allocator_of(loaded.predictor, network, *prediction, request.allocator);
  PredictAnswer answer{std::move(*prediction), std::move(allocator), setup.layout_basis, {}};
  answer.contradicting_jobs =
      contradicting_jobs(loaded.predictor, loaded.jobs, request.network, answer.prediction, answer.allocator);
  return answer;
}

Expected<ScaleAnswer> answer_scale(const AnswerSource& source, const ScaleRequest& request) {
  PredictRequest per_node = request.setup;
  per_node.configuration.nodes = 1;  // the layout is per node: the one recommended for one node
  auto prepared = prediction_setup(source, per_node);
  if (!prepared) return prepared.error();
  const auto& [network, loaded, setup] = *prepared;
  auto rows = model::predict_scaling(loaded.predictor, network, setup.configuration, request.node_counts);
  if (!rows) return rows.error();
  std::optional<tuner::AllocatorChoice> allocator = setup.allocator;
  if (!allocator) {
    auto at_one_node = loaded.predictor.predict(network, setup.configuration);
    if (!at_one_node) return at_one_node.error();
    allocator = allocator_of(loaded.predictor, network, *at_one_node, per_node.allocator);
  }
  return ScaleAnswer{std::move(*rows), std::move(*allocator), setup.layout_basis};
}

nlohmann::json prediction_document(const PredictAnswer& answer) {
  auto document = schema_head("dnntune.prediction", 1);
  document.update(model::prediction_json(answer.prediction));
  document["allocator"] = tuner::allocator_json(answer.allocator);
  if (!answer.layout_basis.empty()) document["layout_basis"] = answer.layout_basis;
  if (!answer.contradicting_jobs.empty())
    document["contradicting_jobs"] = model::contradictions_json(answer.contradicting_jobs);
  return document;
}

nlohmann::json scaling_document(const ScaleAnswer& answer) {
  auto document = schema_head("dnntune.scaling", 1);
  document["rows"] = model::scaling_json(answer.rows);
  document["allocator"] = tuner::allocator_json(answer.allocator);
  if (!answer.layout_basis.empty()) document["layout_basis"] = answer.layout_basis;
  return document;
}

nlohmann::json recommendation_document(const RecommendAnswer& answer, bool explain) {
  return tuner::recommendation_json(answer.recommendation, explain);
}

}  // namespace dnntune::frontend
