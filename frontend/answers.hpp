// frontend/answers.hpp — each question's whole answer, built once for the command and the Python
// module: predict, scale and recommend on a CPU node (GPU nodes: frontend/gpu_answers.hpp). A
// request holds what the user asked, already parsed (cli/ from the option table's rows, python/
// from keyword arguments, both through common/number_grammar.hpp); what the user left out takes
// the defaults below. The drivers only parse the request and render the answer (as text, or as
// the JSON document built here), so `recommend --json`, `dnntune.Model().recommend()` and the
// layout predict and scale take by default are one answer.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "frontend/model_source.hpp"
#include "frontend/request_defaults.hpp"
#include "model/scaling.hpp"
#include "tuner/allocator_choice.hpp"
#include "tuner/recommendation.hpp"

namespace dnntune::frontend {

// Where a session's requests are answered from. A calibration file or a spec machine answers every
// request alike: loaded once (preload() at once, else on the first request). This machine's
// cached calibration is loaded per request, covering the request's network and batches (a first
// run measures what it lacks, heard on `progress`).
class AnswerSource {
 public:
  // `executable`: the dnntune command a first run's workers run ("": this program).
  AnswerSource(ModelSource source, std::string executable, pipeline::Progress progress);
  // Loads a file or spec machine now, so that a bad one is refused before any request.
  Expected<void> preload();
  Expected<LoadedModel> model_for(const std::string& network, const std::vector<std::int64_t>& batches) const;
  const ModelSource& source() const { return source_; }
  const pipeline::Progress& progress() const { return progress_; }

 private:
  bool answers_alike() const { return !source_.calibration_path.empty() || !source_.machine.empty(); }
  // `loaded` with this machine's recorded jobs and the communication terms its multi-node jobs fit
  // (job_evidence.hpp); what could not be fitted is said on progress once per source.
  Expected<LoadedModel> with_recorded_jobs(LoadedModel loaded) const;
  ModelSource source_;
  std::string executable_;
  pipeline::Progress progress_;
  mutable std::optional<LoadedModel> loaded_;
  mutable std::set<std::string> said_;
};

// --allocator (Python allocator=): "" is the one recommended; a name must be one this node can
// load (probe/allocators.hpp).
Expected<void> check_allocator_name(const std::string& allocator);

// The allocation model the allocator choice uses for this predictor: the calibration's fit, else
// the prior from the probed fault cost; none for a spec machine or another node's topology (no
// fault cost of its own measured here).
std::optional<model::AllocationModel> allocation_model(const model::Predictor& predictor);

struct RecommendRequest {
  std::string network;              // a built-in name or a network file, as given (how_to_settle repeats it)
  tuner::SearchSpaceOptions space;  // tuner's defaults: batch 32, one node, the default fusion and fabric
  tuner::RecommendOptions options;  // objective, epochs and dataset images (time-to-train and the job's --time)
  std::string allocator;            // "": the one recommended
  int verify = 0;                   // > 0: train the K best candidates on this machine; the measured best wins
  std::string partition;            // the job's partition: the answer is for its calibrated node when there is one
  // A search estimated past `max_minutes` is refused before it starts, naming `max_minutes_option`
  // (the command's option that raises it; "" from Python).
  double max_minutes = default_max_search_minutes;
  std::string max_minutes_option;
};

struct RecommendAnswer {
  tuner::Recommendation recommendation;  // with its basis, how to settle a tie, and the allocator
  model::MachineRates rates;             // the node's, for the launch lines
  // The job script's inputs: the predicted seconds to train `options.epochs` of the dataset at
  // the pick's images/s (the default --time), and the allocator every rank loads.
  double seconds_to_train = 0;
  std::string job_allocator = "default";
};

// The whole recommendation: the search, its basis (and for a spec machine the unidentified
// parameters' share of the band), what would settle a tie, --verify's runs, and the allocator
// with the close calls PyTorch's runs or the allocators decide (tuner::recommend_allocator).
// A long search is announced on the source's progress first.
Expected<RecommendAnswer> answer_recommend(const AnswerSource& source, const RecommendRequest& request);

// predict and scale: one configuration as asked, with the processes per node, threads and SMT
// the user did not give (`given`) taken from the recommended setup (answer_recommend at this
// batch, node count, fusion and fabric), and its allocator: the recommended setup's, or --allocator.
struct PredictRequest {
  std::string network;
  model::TrainingConfiguration configuration;  // the layout fields count only where `given` says so
  GivenLayout given;
  std::string allocator;  // "": the one recommended
};

struct PredictAnswer {
  model::Prediction prediction;      // under glibc's defaults, as every model figure
  tuner::AllocatorChoice allocator;  // the setup's allocator: its candidates carry the figure with its gain
  std::string layout_basis;          // where the layout came from when dnntune chose it ("": the user gave it)
  // The user's recorded jobs of this setup that ran outside its band (frontend/job_evidence.hpp).
  std::vector<model::JobContradiction> contradicting_jobs;
};

Expected<PredictAnswer> answer_predict(const AnswerSource& source, const PredictRequest& request);

// The node counts a scaling curve spans when the user gives none (the command's --nodes text).
constexpr const char* default_scale_nodes = "1..1024";

struct ScaleRequest {
  PredictRequest setup;  // its configuration's node count is ignored: the layout is per node (at one)
  std::vector<int> node_counts;
};

struct ScaleAnswer {
  std::vector<model::ScalingRow> rows;
  tuner::AllocatorChoice allocator;  // the setup's at one node
  std::string layout_basis;
};

Expected<ScaleAnswer> answer_scale(const AnswerSource& source, const ScaleRequest& request);

// The JSON documents (`--json`, and the Python module's dicts): schemas/prediction.schema.json,
// scaling.schema.json, recommendation.schema.json.
nlohmann::json prediction_document(const PredictAnswer& answer);
nlohmann::json scaling_document(const ScaleAnswer& answer);
nlohmann::json recommendation_document(const RecommendAnswer& answer, bool explain);

}  // namespace dnntune::frontend
