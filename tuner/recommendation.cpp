// tuner/recommendation.cpp — see recommendation.hpp.
#include "tuner/recommendation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>

#include "common/logical_cpus.hpp"
#include "common/statistics.hpp"
#include "common/text_format.hpp"
#include "model/setup_calls.hpp"

namespace dnntune::tuner {
namespace {

double score_of(const model::Prediction& prediction, Objective objective) {
  if (objective == Objective::images_per_node) return prediction.images_per_second / prediction.configuration.nodes;
  return prediction.images_per_second;  // throughput; time to train falls as images/s rises
}

// How much there is to get wrong in a job set-up: fewer processes, SMT off, all-reduce.
int complexity(const model::TrainingConfiguration& configuration) {
  return 4 * (configuration.processes_per_node - 1) + (configuration.smt ? 2 : 0) +
         (configuration.scheme == model::CommunicationScheme::parameter_server ? 8 : 0) +
         (configuration.asynchronous ? 4 : 0);
}

bool bands_overlap(const model::Prediction& a, const model::Prediction& b) {
  return a.images_per_second_low <= b.images_per_second_high && b.images_per_second_low <= a.images_per_second_high;
}

// Whether `candidate` cannot be told apart from `top`: compared replicate by replicate (the same
// draw of every parameter for both, so what they share cancels), the candidate is at least as
// fast in 5% or more of the replicates. Without replicates, overlapping bands.
bool tied_with(const RankedPoint& top, const std::vector<double>& top_replicates, const RankedPoint& candidate,
               const std::vector<double>& candidate_replicates, Objective objective) {
  if (!bands_overlap(candidate.prediction, top.prediction)) return false;
  if (top_replicates.empty() || candidate_replicates.size() != top_replicates.size()) return true;
  const auto per_node = [&](const RankedPoint& point) {
    return objective == Objective::images_per_node ? 1.0 / point.prediction.configuration.nodes : 1.0;
  };
  std::size_t at_least_as_fast = 0;
  for (std::size_t index = 0; index < top_replicates.size(); ++index)
    if (candidate_replicates[index] * per_node(candidate) >= top_replicates[index] * per_node(top)) ++at_least_as_fast;
  return at_least_as_fast >= 0.05 * static_cast<double>(top_replicates.size());
}

// The half-width (90%) of the log difference between the run medians behind two measured
// predictions; nullopt unless both are measured with a run spread.
std::optional<double> run_difference_half_width(const model::Prediction& a, const model::Prediction& b) {
  if (a.confidence != "measured" || b.confidence != "measured") return std::nullopt;
  if (!(a.run_spread_log_sd > 0) || !(b.run_spread_log_sd > 0)) return std::nullopt;
  const auto variance_of_median = [](const model::Prediction& prediction) {
    return prediction.run_spread_log_sd * prediction.run_spread_log_sd / std::max(1, prediction.anchor.anchor.runs);
  };
  return z_90_percent * std::sqrt(variance_of_median(a) + variance_of_median(b));
}

std::string runs_words(const model::Prediction& prediction) {
  const int runs = std::max(1, prediction.anchor.anchor.runs);
  return model::describe(prediction.configuration) + " (" + std::to_string(runs) + " run" + (runs == 1 ? "" : "s") +
         ")";
}

std::string layout_words(const model::TrainingConfiguration& configuration) {
  return std::to_string(configuration.processes_per_node) + " process" +
         (configuration.processes_per_node == 1 ? "" : "es") + ", SMT " + (configuration.smt ? "on" : "off");
}

}  // namespace

bool within_run_spread(const model::Prediction& a, const model::Prediction& b) {
  const auto half_width = run_difference_half_width(a, b);
  return half_width && std::abs(std::log(a.images_per_second / b.images_per_second)) < *half_width;
}

const std::vector<std::pair<std::string, Objective>>& objectives_by_name() {
  static const std::vector<std::pair<std::string, Objective>> table{{"throughput", Objective::throughput},
                                                                    {"time-to-train", Objective::time_to_train},
                                                                    {"images-per-node", Objective::images_per_node}};
  return table;
}

void choose_among_ties(Recommendation& result, const std::vector<std::vector<double>>& replicates) {
  const RankedPoint& top = result.ranking.front();
  result.best = top;
  result.tied_candidates = 1;
  result.tied_within_band = false;
  const std::vector<double> none;
  const std::vector<double>& top_replicates = replicates.empty() ? none : replicates.front();
  for (std::size_t index = 1; index < result.ranking.size(); ++index) {
    const RankedPoint& candidate = result.ranking[index];
    // Two measured settings are told apart by their runs (below), not by the replicates: those
    // cannot see what an anchor corrects, and between measured settings the simpler is not the
    // faster more often than not (docs/results.md).
    if (top.prediction.confidence == "measured" && candidate.prediction.confidence == "measured") continue;
    if (!tied_with(top, top_replicates, candidate, index < replicates.size() ? replicates[index] : none,
                   result.objective))
      continue;
    ++result.tied_candidates;
    result.tied_within_band = true;
    if (complexity(candidate.prediction.configuration) < complexity(result.best.prediction.configuration))
      result.best = candidate;
  }
  // A pick no real step checked does not win a close call against one a real step did: the
  // paired replicates cannot compare them (an anchor's correction is not among the model's
  // parameters), and the model alone misses what only a real step shows: a dispatch cliff of
  // the framework at one thread that the short first run could not anchor (docs/results.md).
  std::optional<RankedPoint> unchecked;
  if (result.best.prediction.confidence != "measured")
    for (const RankedPoint& candidate : result.ranking)
      if (candidate.prediction.confidence == "measured" &&
          bands_overlap(candidate.prediction, result.best.prediction)) {
        unchecked = result.best;
        result.best = candidate;
        break;
      }
  result.chosen_by_tie_break = result.best.prediction.configuration != top.prediction.configuration;
  // Measured candidates the pick's runs cannot tell from it: tied, but not competing for the
  // simplest (see recommendation.hpp); the best-ranked of them is named.
  const RankedPoint* close_by_runs = nullptr;
  if (!unchecked && result.tied_candidates == 1)
    for (const RankedPoint& candidate : result.ranking)
      if (candidate.prediction.configuration != result.best.prediction.configuration &&
          within_run_spread(candidate.prediction, result.best.prediction)) {
        if (!close_by_runs) close_by_runs = &candidate;
        ++result.tied_candidates;
        result.tied_within_band = true;
      }
  if (close_by_runs) {
    const model::Prediction& pick = result.best.prediction;
    const model::Prediction& rival = close_by_runs->prediction;
    result.choice_note = "measured " + runs_words(pick) + " and " + runs_words(rival) + " are " +
                         format_fixed(100 * std::abs(pick.images_per_second / rival.images_per_second - 1), 0) +
                         "% apart, within what their runs move (" +
                         format_fixed(100 * (std::exp(*run_difference_half_width(pick, rival)) - 1), 0) +
                         "% at 90%): the faster median is recommended; `--verify` trains both again";
    return;
  }
  if (unchecked) {
    const RankedPoint& passed_over = *unchecked;
    result.choice_note =
        "the tie-break prefers what a real step checked: " + model::describe(passed_over.prediction.configuration) +
        " scored higher but is " + passed_over.prediction.confidence + ", and " +
        model::describe(result.best.prediction.configuration) +
        ", measured, lies within its band; `--verify` trains both";
    return;
  }
  const std::string compared = top_replicates.empty()
                                   ? "their bands overlap"
                                   : "compared replicate by replicate over " + std::to_string(top_replicates.size()) +
                                         " draws of the parameters";
  if (result.chosen_by_tie_break)
    result.choice_note = "the model cannot tell " + std::to_string(result.tied_candidates) + " candidates apart (" +
                         compared + "), so the pick is the tie-break's: the simplest of them (" +
                         layout_words(result.best.prediction.configuration) + "; the top score was " +
                         model::describe(top.prediction.configuration) + ")";
  else if (result.tied_within_band)
    result.choice_note = "the model's top score is also the simplest of " + std::to_string(result.tied_candidates) +
                         " candidates it cannot tell apart (" + compared + "): measure them with --verify";
}

const RankedPoint* unchecked_top_score(const Recommendation& recommendation) {
  if (recommendation.ranking.empty()) return nullptr;
  const RankedPoint& top = recommendation.ranking.front();
  if (top.prediction.confidence == "measured" ||
      top.prediction.configuration == recommendation.best.prediction.configuration)
    return nullptr;
  return &top;
}

namespace {

// A candidate's whole setup: the allocator recommended for it, its images/s under that allocator,
// whether that rests on real steps at its own threads per process (glibc's defaults always do:
// they are the anchors'), and PyTorch's runs of exactly that setup, if any.
struct Setup {
  const RankedPoint* point = nullptr;
  AllocatorChoice choice;
  double images_per_second = 0;
  bool measured_here = false;
  const model::MeasuredSetup* timed = nullptr;
  const model::TrainingConfiguration& configuration() const { return point->prediction.configuration; }
};

// What a setup is judged by: the allocation model, the network and the allocators on offer.
struct SetupContext {
  const std::optional<model::AllocationModel>& model;
  const workloads::Network& network;
  const std::vector<InstalledAllocator>& installed;
  const std::string& user_choice;

  const model::MeasuredSetup* pytorch_runs(const model::TrainingConfiguration& c, const std::string& allocator) const {
    return model::find_setup(model->pytorch_setups, network.name, c.batch_per_process, c.processes_per_node,
                             c.threads_per_process, c.smt, allocator);
  }

  Setup setup_of(const RankedPoint& point) const {
    const model::Prediction& prediction = point.prediction;
    const model::TrainingConfiguration& c = prediction.configuration;
    Setup setup{&point, choose_allocator(model, network, prediction, installed, user_choice),
                prediction.images_per_second, false, nullptr};
    if (const AllocatorCandidate* candidate = setup.choice.find(setup.choice.chosen))
      setup.images_per_second = candidate->images_per_second;
    setup.measured_here =
        setup.choice.chosen == "default" || (model && model->measured_at(setup.choice.chosen, c.threads_per_process));
    if (model && c.nodes == 1) setup.timed = pytorch_runs(c, setup.choice.chosen);
    return setup;
  }
};

std::string threads_words(int threads) {
  return std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " per process";
}

// The close call by the model: the setup it recommends among the pick and its rivals, and why
// ("" when the pick stands).
struct ModelCall {
  const Setup* decided = nullptr;
  std::string why;
};

ModelCall decide_by_model(const Setup& pick, const std::vector<Setup>& rivals) {
  const model::Prediction& pick_prediction = pick.point->prediction;
  // Faster by more than the two settings' runs move (the allocator anchors are a step or a run
  // each, and a difference their runs cannot resolve does not overturn the runs' pick), and only
  // where the pick's allocator gain, too, rests on real steps at its threads per process.
  const Setup* decided = &pick;
  for (const Setup& rival : rivals) {
    if (!pick.measured_here) break;
    const auto half_width = run_difference_half_width(rival.point->prediction, pick_prediction);
    if (rival.measured_here && rival.images_per_second > decided->images_per_second && half_width &&
        std::log(rival.images_per_second / pick.images_per_second) > *half_width)
      decided = &rival;
  }
  // The pick's gain from its allocator not measured at its threads per process (the pooled fit of
  // pairs run at another count), a rival's measured at its own: the setup real steps checked under
  // the allocator the answer sets is recommended, as a measured setting is over an unchecked one
  // (choose_among_ties). glibc's defaults fault in more with several threads in one process, so the
  // pooled gain of a two-thread pair overstates it at one thread and turned close calls to the
  // one-thread layout that PyTorch then ran slower under that allocator (docs/results.md).
  const Setup* checked = nullptr;
  if (!pick.measured_here)
    for (const Setup& rival : rivals)
      if (rival.measured_here && rival.choice.chosen != "default" &&
          (!checked || rival.images_per_second > checked->images_per_second))
        checked = &rival;
  if (checked) decided = checked;
  // Both under glibc's defaults: the close call stays the runs' (choose_among_ties).
  if (pick.choice.chosen == "default" && decided->choice.chosen == "default") decided = &pick;
  const std::string both = model::describe(pick.configuration()) + " and " + model::describe(decided->configuration()) +
                           " are within what their runs move under glibc's defaults; ";
  if (checked)
    return {decided, both + pick.choice.chosen + "'s gain at " +
                         threads_words(pick.configuration().threads_per_process) + " is the pooled fit's, " +
                         checked->choice.chosen + "'s at " +
                         threads_words(checked->configuration().threads_per_process) +
                         " was measured: the setup real steps checked, " + model::describe(checked->configuration()) +
                         " under " + checked->choice.chosen + ", is recommended"};
  if (decided != &pick)
    return {decided, both + "with the allocator recommended for each, measured at its layout, " +
                         model::describe(decided->configuration()) + " under " + decided->choice.chosen +
                         " is predicted " + format_fixed(decided->images_per_second, 1) + " images/s against " +
                         format_fixed(pick.images_per_second, 1) + " under " + pick.choice.chosen +
                         ": it is recommended"};
  return {decided, ""};
}

// Every other single-node setting of the ranking PyTorch timed, beyond the close call's sides:
// the unchecked top score the tie-break passed over (its runs are the real steps the tie-break
// wanted), and a layout the C++ trainer's runs set apart from the pick, which PyTorch can order
// the other way (resnet18 b8: the C++ runs put 2x1 5% ahead of 1x2, PyTorch's 1x2 under tcmalloc
// 6% ahead; docs/results.md).
std::vector<Setup> other_timed_setups(const Recommendation& recommendation, const SetupContext& context,
                                      const std::vector<const Setup*>& sides) {
  std::vector<Setup> found;
  for (const RankedPoint& candidate : recommendation.ranking) {
    const model::TrainingConfiguration& c = candidate.prediction.configuration;
    const bool listed =
        std::any_of(sides.begin(), sides.end(), [&](const Setup* side) { return side->configuration() == c; });
    if (listed || c.nodes != 1) continue;
    const bool timed = std::any_of(
        context.installed.begin(), context.installed.end(),
        [&](const InstalledAllocator& allocator) { return context.pytorch_runs(c, allocator.name) != nullptr; });
    if (timed) found.push_back(context.setup_of(candidate));
  }
  return found;
}

// One setup as PyTorch timed it under one allocator.
struct Timed {
  const Setup* side;
  std::string allocator;
  const model::MeasuredSetup* setup;
};

std::vector<Timed> timed_by_pytorch(const std::vector<const Setup*>& sides, const SetupContext& context) {
  std::vector<Timed> timed;
  for (const Setup* side : sides) {
    if (side->configuration().nodes != 1) continue;
    for (const InstalledAllocator& allocator : context.installed)
      if (context.user_choice.empty() || allocator.name == context.user_choice)
        if (const auto* setup = context.pytorch_runs(side->configuration(), allocator.name))
          timed.push_back({side, allocator.name, setup});
  }
  return timed;
}

// The close call by PyTorch: where the decided setup and others of the close call (each layout
// under any allocator: PyTorch's gain from an allocator can differ from the C++ trainer's) were
// timed as the user's job runs them, the fastest median is the pick. Those runs time exactly the
// setups the job runs; the model's call between them rests on the C++ trainer's steps under
// glibc's defaults, which can order two layouts otherwise than PyTorch under the allocator the
// answer sets (docs/results.md). A difference within what their runs move (each run as uncertain
// as one of the anchors', over the root of the runs) is still the better estimate there is, as
// between two measured settings (choose_among_ties); the note says which it was.
struct PytorchCall {
  const Timed* winner = nullptr;   // nullptr: PyTorch's runs do not decide
  const Timed* decided = nullptr;  // the model's decided setup as PyTorch timed it
  std::string why;
};

std::string timed_words(const Timed& item) {
  const std::size_t runs = item.setup->iteration_seconds.size();
  // A setup the user's own jobs ran says so: the answer rests on them.
  return model::describe(item.side->configuration()) + " under " + item.allocator + " " +
         format_fixed(item.setup->images_per_second(), 1) + " images/s (" +
         (item.setup->from_jobs.empty() ? std::to_string(runs) + " run" + (runs == 1 ? "" : "s")
                                        : item.setup->from_jobs) +
         ")";
}

PytorchCall decide_by_pytorch(const std::vector<Timed>& timed, const Setup& decided) {
  const auto decided_timed = std::find_if(timed.begin(), timed.end(), [&](const Timed& item) {
    return item.side == &decided && item.allocator == decided.choice.chosen;
  });
  if (decided_timed == timed.end() || timed.size() < 2) return {};
  const Timed* winner = &*decided_timed;
  for (const Timed& other : timed)
    if (other.setup->images_per_second() > winner->setup->images_per_second()) winner = &other;
  // The runner-up: the decided setup, or where it won, the fastest of the others.
  const Timed* second = winner != &*decided_timed ? &*decided_timed : nullptr;
  for (const Timed& other : timed)
    if (&other != winner && (!second || other.setup->images_per_second() > second->setup->images_per_second()))
      second = &other;
  // Whether the runs settle it (model/setup_calls.hpp): each run moves at least what the model's
  // runs of those settings move, more where PyTorch's own runs moved more.
  const double floor_sd =
      std::max(winner->side->point->prediction.run_spread_log_sd, second->side->point->prediction.run_spread_log_sd);
  const bool open = model::compare_setups(*winner->setup, *second->setup, floor_sd).open();
  std::string why = "timed by PyTorch from Python as the job runs: " + timed_words(*winner);
  for (const Timed& item : timed)
    if (&item != winner) why += ", " + timed_words(item);
  const std::string left_open =
      "by less than their runs move: the call is open (the faster median is the better estimate there is; "
      "`--verify` trains both again)";
  if (winner == &*decided_timed)
    why += open ? ": the pick is the fastest, " + left_open : ": the pick is the fastest";
  else
    why += open ? ": the fastest is recommended, " + left_open
                : ": the fastest, by more than their runs move, is recommended";
  return {winner, &*decided_timed, why};
}

// `setup` becomes the answer's pick, with its allocator.
void adopt(Recommendation& recommendation, const Setup& setup) {
  recommendation.best = *setup.point;
  recommendation.chosen_by_tie_break =
      recommendation.best.prediction.configuration != recommendation.ranking.front().prediction.configuration;
  recommendation.allocator = setup.choice;
}

}  // namespace

void recommend_allocator(Recommendation& recommendation, const std::optional<model::AllocationModel>& model,
                         const workloads::Network& network, const std::vector<InstalledAllocator>& installed,
                         const std::string& user_choice) {
  const SetupContext context{model, network, installed, user_choice};
  const RankedPoint pick_point = recommendation.best;
  const Setup pick = context.setup_of(pick_point);
  recommendation.allocator = pick.choice;
  if (!model) return;
  // --verify trained the candidates for real and chose among them (choose_by_measurement): that
  // layout and its note stand, and only its allocator is decided here.
  const bool layout_verified = !recommendation.verified.empty();
  const auto note = [&](const std::string& why) {
    if (!layout_verified && !why.empty()) recommendation.choice_note = why;
  };
  // The measured candidates the pick's runs cannot tell from it.
  std::vector<Setup> rivals;
  if (!layout_verified)
    for (const RankedPoint& candidate : recommendation.ranking)
      if (candidate.prediction.configuration != pick_point.prediction.configuration &&
          within_run_spread(candidate.prediction, pick_point.prediction))
        rivals.push_back(context.setup_of(candidate));
  const ModelCall by_model = decide_by_model(pick, rivals);
  std::vector<const Setup*> sides{&pick};
  for (const Setup& rival : rivals) sides.push_back(&rival);
  const std::vector<Setup> also_timed =
      layout_verified ? std::vector<Setup>{} : other_timed_setups(recommendation, context, sides);
  for (const Setup& setup : also_timed) sides.push_back(&setup);
  const std::vector<Timed> timed = timed_by_pytorch(sides, context);
  const PytorchCall by_pytorch = decide_by_pytorch(timed, *by_model.decided);
  if (by_pytorch.winner && by_pytorch.winner != by_pytorch.decided) {
    const Timed& winner = *by_pytorch.winner;
    adopt(recommendation, *winner.side);
    if (winner.allocator != winner.side->choice.chosen) {
      AllocatorChoice& choice = *recommendation.allocator;
      choice.note = "the model predicted " + winner.side->choice.chosen + " here, but PyTorch ran " + winner.allocator +
                    " faster: " + by_pytorch.why.substr(by_pytorch.why.find(':') + 2);
      choice.chosen = winner.allocator;
      choice.chosen_by = "pytorch";
    }
    note(by_pytorch.why);
    return;
  }
  const std::string why = by_pytorch.winner ? by_pytorch.why : by_model.why;
  if (by_model.decided != &pick) adopt(recommendation, *by_model.decided);
  note(why);
}

std::string objective_name(Objective objective) {
  for (const auto& [name, value] : objectives_by_name())
    if (value == objective) return name;
  return "?";
}

unsigned scoring_workers() { return static_cast<unsigned>(std::min(logical_cpus(), 16)); }

Expected<Recommendation> recommend(const model::Predictor& predictor, const workloads::Network& network,
                                   const SearchSpaceOptions& space_options, const RecommendOptions& options) {
  const SearchSpace space = enumerate_search_space(predictor.rates(), space_options);
  Recommendation result;
  result.objective = options.objective;
  result.space_size = space.valid.size() + space.excluded.size();
  result.excluded = space.excluded;
  if (space.valid.empty()) {
    std::string reason = space.excluded.empty() ? "the search space is empty" : space.excluded.front().reason;
    return bad_input("no configuration fits this node: " + reason);
  }
  // Rank without bands (fast), then band every candidate: any of them may be the pick or
  // tie with it, and the answer shows each with its band.
  for (const auto& configuration : space.valid) {
    auto prediction = predictor.predict(network, configuration, false);
    if (!prediction) return prediction.error();
    result.ranking.push_back({*prediction, score_of(*prediction, options.objective)});
  }
  std::stable_sort(result.ranking.begin(), result.ranking.end(),
                   [](const RankedPoint& a, const RankedPoint& b) { return a.score > b.score; });
  // Each candidate's images/s under every bootstrap replicate, kept for the paired comparisons.
  // A band is a prediction per replicate, so the candidates are spread over the cores
  // (Predictor::predict is safe to call concurrently).
  std::vector<std::vector<double>> replicates(result.ranking.size());
  std::vector<std::optional<Expected<model::Prediction>>> banded(result.ranking.size());
  // A worker bands one layout (batch, processes, threads, SMT) at a time, every node count, fusion
  // size and scheme of it together: they share the compute under each replicate, which the
  // predictor keeps only a while (epyc-9654 --nodes 1..1024 banded each layout 11 times over).
  std::map<std::tuple<std::int64_t, int, int, bool>, std::vector<std::size_t>> by_layout;
  for (std::size_t index = 0; index < result.ranking.size(); ++index) {
    const model::TrainingConfiguration& c = result.ranking[index].prediction.configuration;
    by_layout[{c.batch_per_process, c.processes_per_node, c.threads_per_process, c.smt}].push_back(index);
  }
  std::vector<const std::vector<std::size_t>*> layouts;
  for (const auto& [layout, indices] : by_layout) layouts.push_back(&indices);
  std::atomic<std::size_t> next{0};
  const auto band_some = [&] {
    for (std::size_t group = next++; group < layouts.size(); group = next++)
      for (const std::size_t index : *layouts[group])
        banded[index] =
            predictor.predict(network, result.ranking[index].prediction.configuration, true, &replicates[index]);
  };
  const unsigned workers = scoring_workers();
  std::vector<std::thread> threads;
  for (unsigned worker = 1; worker < workers; ++worker) threads.emplace_back(band_some);
  band_some();
  for (auto& thread : threads) thread.join();
  for (std::size_t index = 0; index < result.ranking.size(); ++index) {
    if (!*banded[index]) return banded[index]->error();
    result.ranking[index].prediction = **banded[index];
  }
  choose_among_ties(result, replicates);

  const model::TrainingConfiguration& best = result.best.prediction.configuration;
  const model::MachineRates& rates = predictor.rates();
  model::TrainingConfiguration single = best;
  single.processes_per_node = 1;
  single.threads_per_process = rates.cores();
  single.smt = false;
  single.scheme = model::CommunicationScheme::allreduce;
  // A baseline trains the same global batch when one is fixed (and is left out when it does
  // not split evenly), else the winner's batch per process.
  const auto with_its_batch =
      [&](model::TrainingConfiguration baseline) -> std::optional<model::TrainingConfiguration> {
    if (space_options.global_batch <= 0) return baseline;
    const auto split = split_global_batch(space_options.global_batch,
                                          static_cast<std::int64_t>(baseline.processes_per_node) * baseline.nodes);
    if (!split) return std::nullopt;
    baseline.batch_per_process = *split;
    return baseline;
  };
  if (const auto baseline = with_its_batch(single))
    if (auto prediction = predictor.predict(network, *baseline, false)) result.single_process = *prediction;
  model::TrainingConfiguration thumb = single;
  thumb.processes_per_node = std::min(4, rates.cores());
  thumb.threads_per_process = rates.cores() / thumb.processes_per_node;
  if (const auto baseline = with_its_batch(thumb))
    if (auto prediction = predictor.predict(network, *baseline, false)) result.rule_of_thumb = *prediction;
  result.seconds_to_train =
      options.epochs * static_cast<double>(options.dataset_images) / result.best.prediction.images_per_second;
  return result;
}

std::vector<model::TrainingConfiguration> verification_candidates(const Recommendation& recommendation, std::size_t k) {
  std::vector<model::TrainingConfiguration> candidates;
  if (k == 0) return candidates;
  const model::TrainingConfiguration& chosen = recommendation.best.prediction.configuration;
  candidates.push_back(chosen);
  for (const RankedPoint& point : recommendation.ranking) {
    if (candidates.size() >= k) break;
    if (point.prediction.configuration != chosen) candidates.push_back(point.prediction.configuration);
  }
  return candidates;
}

const VerifiedPoint* find_verified(const Recommendation& recommendation,
                                   const model::TrainingConfiguration& configuration) {
  for (const VerifiedPoint& point : recommendation.verified)
    if (point.prediction.configuration == configuration) return &point;
  return nullptr;
}

void choose_by_measurement(Recommendation& recommendation, std::vector<VerifiedPoint> verified) {
  recommendation.verified = std::move(verified);
  const auto& points = recommendation.verified;
  const VerifiedPoint* pick = find_verified(recommendation, recommendation.best.prediction.configuration);
  if (!pick) throw std::logic_error("choose_by_measurement: the recommended configuration was not verified");
  const auto fastest =
      std::max_element(points.begin(), points.end(), [](const VerifiedPoint& a, const VerifiedPoint& b) {
        return a.measured_images_per_second < b.measured_images_per_second;
      });
  const std::string pick_text = format_fixed(pick->measured_images_per_second, 2) + " images/s";
  const std::string fastest_text = model::describe(fastest->prediction.configuration) + " measured " +
                                   format_fixed(fastest->measured_images_per_second, 2) + " images/s";
  if (&*fastest == pick) {
    recommendation.choice_note = "verified: the model's pick measured fastest (" + pick_text + ")";
  } else if (fastest->measured_low > pick->measured_high) {
    recommendation.choice_note = "verified: " + fastest_text + ", clearly above the model's pick (" + pick_text +
                                 ", step ranges apart); the measured best is recommended";
    for (const RankedPoint& point : recommendation.ranking)
      if (point.prediction.configuration == fastest->prediction.configuration) recommendation.best = point;
  } else {
    recommendation.choice_note = "verified: " + fastest_text + " against " + pick_text +
                                 " for the model's pick, within the steps' spread: a tie at this run's precision, so "
                                 "the model's pick stays";
  }
}

}  // namespace dnntune::tuner
