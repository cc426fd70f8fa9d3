// pipeline/separating_anchors.cpp — see separating_anchors.hpp.
#include "pipeline/separating_anchors.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include "calibrate/runner.hpp"
#include "model/predictor.hpp"
#include "model/allocation.hpp"
#include "model/anchors.hpp"
#include "model/setup_calls.hpp"
#include "pipeline/first_run_plan.hpp"
#include "pipeline/installed_allocators.hpp"
#include "probe/memory_budget.hpp"
#include "train/anchor.hpp"
#include "train/python_runner.hpp"
#include "tuner/recommendation.hpp"
#include "workloads/costs.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::pipeline {
namespace {

// A launch and the trainer's set-up per process, besides its steps: PyTorch from Python's imports
// torch and torchvision first (the plan's estimates count the same: first_run_plan.hpp).
double start_seconds(const SeparatingAnchorRequest& request) {
  return request.runner == records::kPythonTrainer ? python_start_seconds : trainer_start_seconds;
}

// " by PyTorch from Python" where it trains, for the progress lines.
std::string by_runner(const SeparatingAnchorRequest& request) {
  return request.runner == records::kPythonTrainer ? " by PyTorch from Python" : "";
}

// "2x1": processes per node x threads per process, as --anchor-settings takes it.
std::string setting_label(const model::TrainingConfiguration& configuration) {
  return std::to_string(configuration.processes_per_node) + "x" + std::to_string(configuration.threads_per_process) +
         (configuration.smt ? " smt" : "");
}

calibrate::Setting setting_of(const model::TrainingConfiguration& configuration) {
  return {configuration.threads_per_process, configuration.smt, configuration.processes_per_node};
}

std::string whole_seconds(double seconds) { return std::to_string(static_cast<long long>(std::lround(seconds))); }

// One network's work: the settings to anchor, each with why, in the order they are trained.
struct Wanted {
  model::Prediction prediction;
  std::string why;
};

// The top-ranked candidates the tuner cannot separate: the top score and the pick, then every
// other whose band overlaps the top one's, up to `limit`; each that no real step backs yet
// (not "measured") is wanted, the closest call first.
std::vector<Wanted> unseparated(const tuner::Recommendation& recommendation, std::size_t limit) {
  std::vector<Wanted> wanted;
  if (recommendation.ranking.empty()) return wanted;
  const model::Prediction& top = recommendation.ranking.front().prediction;
  std::size_t considered = 0;
  for (const tuner::RankedPoint& point : recommendation.ranking) {
    const model::Prediction& candidate = point.prediction;
    const bool is_top = candidate.configuration == top.configuration;
    const bool is_pick = candidate.configuration == recommendation.best.prediction.configuration;
    const bool overlaps = candidate.images_per_second_high >= top.images_per_second_low;
    if (!is_top && !is_pick && !overlaps) continue;
    if (++considered > limit) break;
    if (candidate.confidence == "measured") continue;
    wanted.push_back({candidate, is_top ? "to check the top candidate against a real step"
                                        : "to separate it from " + setting_label(top.configuration)});
  }
  return wanted;
}

// One thread per process at the top candidate's batch and cores (Px1, else 1x1), when no
// anchor of that batch runs one thread: where Debian's libtorch has shown a dispatch cliff.
std::optional<Wanted> one_thread_probe(const tuner::Recommendation& recommendation,
                                       const std::vector<model::Anchor>& anchors, const std::string& network) {
  if (recommendation.ranking.empty()) return std::nullopt;
  const model::TrainingConfiguration& top = recommendation.ranking.front().prediction.configuration;
  for (const model::Anchor& anchor : anchors)
    if (anchor.network == network && anchor.batch == top.batch_per_process && anchor.threads == 1) return std::nullopt;
  for (const int processes : {top.processes_per_node * top.threads_per_process, 1})
    for (const tuner::RankedPoint& point : recommendation.ranking) {
      const model::TrainingConfiguration& configuration = point.prediction.configuration;
      if (configuration.batch_per_process == top.batch_per_process && configuration.threads_per_process == 1 &&
          !configuration.smt && configuration.processes_per_node == processes)
        return Wanted{point.prediction, "to look for a one-thread cliff"};
    }
  return std::nullopt;
}

// What a run at `candidate` should take: the steps of the recorded anchor its prediction was
// corrected by, scaled by the model's ratio between the two settings, plus the start. Nothing
// more: a long-stepped setting's set-up is small against its steps, and counting extra steps
// for it skipped anchors that fit (docs/results.md, "The first run").
double estimated_run_seconds(const model::Predictor& predictor, const workloads::Network& network,
                             const model::Prediction& candidate, double steps, double start_seconds) {
  double step_seconds = candidate.iteration_seconds;
  if (candidate.anchor.used) {
    const model::Anchor& anchor = candidate.anchor.anchor;
    model::TrainingConfiguration there;
    there.batch_per_process = anchor.batch;
    there.threads_per_process = anchor.threads;
    there.smt = anchor.smt;
    there.processes_per_node = anchor.processes;
    if (const auto predicted = predictor.predict(network, there, false); predicted && predicted->iteration_seconds > 0)
      step_seconds = anchor.iteration_seconds * candidate.iteration_seconds / predicted->iteration_seconds;
  }
  return steps * step_seconds + start_seconds * candidate.configuration.processes_per_node;
}

// Trains `model` once at `configuration` under `allocator`, its record appended to
// DIR/network.jsonl, the timed steps stopped after `steps_seconds`; returns the seconds it took.
Expected<double> train_once(const SeparatingAnchorRequest& request, const std::string& model,
                            const model::TrainingConfiguration& configuration, double steps_seconds,
                            const std::string& allocator = "default",
                            const std::string& runner = records::kCppTrainer) {
  train::AnchorRequest anchor;
  anchor.executable = request.executable;
  // A network file by its absolute path: the fit finds the network again from the record's command.
  std::error_code error;
  anchor.model = std::filesystem::is_regular_file(model, error) ? std::filesystem::absolute(model).string() : model;
  anchor.batch = configuration.batch_per_process;
  anchor.threads = configuration.threads_per_process;
  anchor.processes = configuration.processes_per_node;
  anchor.directory = request.directory;
  anchor.warmup = request.warmup;
  anchor.iterations = request.iterations;
  anchor.time_limit_seconds = std::max(1.0, steps_seconds);
  anchor.allocator = allocator;
  anchor.runner = runner;
  const auto started = std::chrono::steady_clock::now();
  if (auto run = train::run_anchor(anchor); !run) return run.error();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

// What both rounds start from: the model under `calibration` and the runs DIR/network.jsonl holds.
struct Anchoring {
  model::Predictor predictor;
  std::vector<records::Measurement> recorded;
  std::string fingerprint;
};

Expected<Anchoring> start_anchoring(const model::Calibration& calibration, const SeparatingAnchorRequest& request) {
  auto predictor = model::Predictor::from_calibration(calibration);
  if (!predictor) return predictor.error();
  auto read = train::read_anchor_records(request.directory);
  if (!read) return read.error();
  return Anchoring{std::move(*predictor), std::move(*read), records::fingerprint(calibration.machine)};
}

void say(const SeparatingAnchorRequest& request, const std::string& line) {
  if (request.progress) request.progress(line);
}

// The allocators a layout of another thread count is also trained under, so that the allocator's
// gain is measured there too (model/allocation.hpp): glibc-tuned (the reference every variant is
// fitted against) and the variant the first fit recommends for the top candidate, when that is not
// glibc's default. None without an allocation term fitted from anchors.
std::vector<std::string> allocators_to_pair(const Anchoring& anchoring, const workloads::Network& network,
                                            const tuner::Recommendation& recommendation) {
  const auto& allocation = anchoring.predictor.allocation();
  if (!allocation || recommendation.ranking.empty()) return {};
  const tuner::AllocatorChoice choice = tuner::choose_allocator(
      allocation, network, recommendation.ranking.front().prediction, installed_allocators(), "");
  if (choice.chosen == "default") return {};
  std::vector<std::string> allocators{model::reference_allocator};
  if (choice.chosen != model::reference_allocator) allocators.push_back(choice.chosen);
  return allocators;
}

// Whether `allocator` has a run of `network` at `batch` with `threads` per process recorded.
bool recorded_at_threads(const std::vector<records::Measurement>& recorded, const std::string& fingerprint,
                         const std::string& network, std::int64_t batch, int threads, const std::string& allocator) {
  return std::any_of(recorded.begin(), recorded.end(), [&](const records::Measurement& record) {
    return record.kind == records::MeasurementKind::network && record.machine_fingerprint == fingerprint &&
           record.network == network && record.batch == batch && record.threads == threads &&
           record.allocator == allocator && record.status == records::MeasurementStatus::ok;
  });
}

// One setup the answer's check times by PyTorch: a layout and an allocator, and its predicted step.
struct SetupSide {
  const tuner::RankedPoint* point = nullptr;
  std::string allocator;
  double step_seconds = 0;  // one process's step under that allocator, predicted
};

// The setups that decide the answer, in the order they are timed: the answer's (layout and
// allocator), the other side of its close call under the allocator recommended for it (the runs'
// pick when the allocator turned the answer away from it, else the best-ranked measured candidate
// within what the pick's runs move, else the unchecked top score the tie-break passed over), then
// each of those layouts under glibc-tuned where glibc's defaults were recommended for it: the C++
// trainer's pair can miss what glibc keeping its memory gains PyTorch (one timed step of it ran no
// faster than glibc's defaults where PyTorch ran 1.6x faster), and glibc-tuned needs nothing
// installed; then the answer's layout under each variant its C++ measurements cannot order against
// the model's pick (AllocatorChoice::close): the C++ trainer put tcmalloc level with glibc-tuned on
// resnet18 b8 where PyTorch ran it 4-25% faster in each of three grids (docs/results.md, "The first
// answer"); last, the answer's layout under glibc's defaults where the model's pick of variant has
// a band that includes no gain (its median picked it).
std::vector<SetupSide> setup_check_sides(const tuner::Recommendation& recommendation,
                                         const tuner::RankedPoint& runs_pick,
                                         const std::optional<model::AllocationModel>& allocation,
                                         const workloads::Network& network,
                                         const std::vector<tuner::InstalledAllocator>& installed) {
  const tuner::RankedPoint& answer = recommendation.best;
  const tuner::RankedPoint* rival = nullptr;
  if (answer.prediction.configuration != runs_pick.prediction.configuration) {
    rival = &runs_pick;
  } else {
    for (const tuner::RankedPoint& point : recommendation.ranking)
      if (point.prediction.configuration != answer.prediction.configuration &&
          tuner::within_run_spread(point.prediction, answer.prediction)) {
        rival = &point;
        break;
      }
    // The top score the tie-break passed over because no real step checked it: PyTorch's runs of
    // it are that check, and what the benchmark's user runs (a one-thread layout the model ranked
    // first lost the pick this way where PyTorch ran it 7-25% faster; docs/results.md).
    if (!rival) rival = tuner::unchecked_top_score(recommendation);
  }
  std::vector<SetupSide> sides;
  const auto add = [&](const tuner::RankedPoint& point, const std::string& allocator) {
    const model::TrainingConfiguration& c = point.prediction.configuration;
    if (c.smt || c.nodes != 1) return;  // the trainers bind one thread per core, on this node
    for (const SetupSide& side : sides)
      if (side.allocator == allocator && side.point->prediction.configuration == c) return;
    const tuner::AllocatorChoice choice = tuner::choose_allocator(allocation, network, point.prediction, installed, "");
    double images_per_second = point.prediction.images_per_second;
    if (const tuner::AllocatorCandidate* candidate = choice.find(allocator))
      images_per_second = candidate->images_per_second;
    sides.push_back(
        {&point, allocator, static_cast<double>(c.batch_per_process * c.processes_per_node) / images_per_second});
  };
  const std::string answer_allocator = recommendation.allocator ? recommendation.allocator->chosen : "default";
  add(answer, answer_allocator);
  std::string rival_allocator;
  if (rival) {
    rival_allocator = tuner::choose_allocator(allocation, network, rival->prediction, installed, "").chosen;
    add(*rival, rival_allocator);
  }
  if (answer_allocator == "default") add(answer, model::reference_allocator);
  if (rival && rival_allocator == "default") add(*rival, model::reference_allocator);
  // The answer's layout under the model's pick and the variants its measurements cannot order
  // against it (PyTorch may have switched the answer to one of them already).
  const tuner::AllocatorChoice modelled =
      tuner::choose_allocator(allocation, network, answer.prediction, installed, "");
  if (modelled.chosen != "default") add(answer, modelled.chosen);
  for (const std::string& variant : modelled.close) add(answer, variant);
  if (const tuner::AllocatorCandidate* picked = modelled.find(modelled.chosen);
      picked && modelled.chosen != "default" && picked->prediction.gain_low <= 1)
    add(answer, "default");
  return sides;
}

// The noise rule of the answer's setups: the answer's setup as PyTorch timed it (`answer`) and the
// fastest other setup PyTorch timed of that network (at a batch the request compares, on this node),
// while their runs move more than the difference they decide (model::compare_setups, each run moving
// at least what the model's runs of those settings move), the one with fewer runs (the answer's on
// a tie, so that the two alternate) is timed once more, up to close_call_runs runs each. Returns 1
// when it trained, 0 when the call is settled, both have their runs or the next run does not fit.
Expected<int> time_open_call(const SeparatingAnchorRequest& request, const std::string& model,
                             const workloads::Network& network, const tuner::Recommendation& recommendation,
                             const model::MeasuredSetup& answer, const std::vector<model::MeasuredSetup>& timed) {
  const model::MeasuredSetup* rival = nullptr;
  for (const model::MeasuredSetup& setup : timed)
    if (setup.network == network.name && &setup != &answer && setup.from_jobs.empty() &&
        std::find(request.batches.begin(), request.batches.end(), setup.batch) != request.batches.end() &&
        (!rival || setup.images_per_second() > rival->images_per_second()))
      rival = &setup;
  if (!rival) return 0;
  const auto configuration_of = [](const model::MeasuredSetup& setup) {
    model::TrainingConfiguration configuration;
    configuration.batch_per_process = setup.batch;
    configuration.processes_per_node = setup.processes;
    configuration.threads_per_process = setup.threads;
    configuration.smt = setup.smt;
    return configuration;
  };
  // What the model's runs of a setting move: the least either setup's runs move.
  double floor_sd = model::run_to_run_log_sd;
  for (const tuner::RankedPoint& point : recommendation.ranking)
    for (const model::MeasuredSetup* setup : {&answer, rival})
      if (point.prediction.configuration == configuration_of(*setup))
        floor_sd = std::max(floor_sd, point.prediction.run_spread_log_sd);
  const model::SetupCall call = model::compare_setups(answer, *rival, floor_sd);
  const std::size_t most = static_cast<std::size_t>(request.close_call_runs);
  if (!call.open() || (answer.iteration_seconds.size() >= most && rival->iteration_seconds.size() >= most)) return 0;
  const bool answer_next =
      answer.iteration_seconds.size() < most && answer.iteration_seconds.size() <= rival->iteration_seconds.size();
  const model::MeasuredSetup& next = answer_next ? answer : *rival;
  const model::MeasuredSetup& other = answer_next ? *rival : answer;
  const auto words = [](const model::MeasuredSetup& setup) {
    return std::to_string(setup.processes) + "x" + std::to_string(setup.threads) + " under " + setup.allocator;
  };
  const std::string label = network.name + " mb" + std::to_string(next.batch) + " at " + words(next);
  const double step = next.median_iteration_seconds();
  const int timed_steps = setup_check_timed_steps(step, request.iterations);
  const double start = python_start_seconds * next.processes;
  const double estimate = start + (request.setup_check_warmup + timed_steps) * step;
  if (estimate > request.budget_seconds) {
    say(request, "the call between " + label + " and " + words(other) +
                     " left open: one more PyTorch run would take about " + whole_seconds(estimate) + " s, past the " +
                     whole_seconds(request.budget_seconds) + " s left for it");
    return 0;
  }
  say(request, "anchor: timing " + label + " by PyTorch from Python again: its runs and " + words(other) + "'s are " +
                   whole_seconds(100 * (std::exp(call.apart_log) - 1)) + "% apart, within what their runs move (" +
                   whole_seconds(100 * (std::exp(call.half_width_log) - 1)) + "% at 90%)");
  SeparatingAnchorRequest repeat = request;
  repeat.warmup = request.setup_check_warmup;
  repeat.iterations = timed_steps;
  if (auto seconds = train_once(repeat, model, configuration_of(next),
                                std::max(1.0, request.budget_seconds - start - request.setup_check_warmup * step),
                                next.allocator, records::kPythonTrainer);
      !seconds)
    return seconds.error();
  return 1;
}

}  // namespace

Expected<int> run_separating_anchors(const model::Calibration& calibration, const SeparatingAnchorRequest& request) {
  const auto progress = [&](const std::string& line) { say(request, line); };
  auto anchoring = start_anchoring(calibration, request);
  if (!anchoring) return anchoring.error();
  const std::vector<records::Measurement>& recorded = anchoring->recorded;
  const std::string& fingerprint = anchoring->fingerprint;
  double spent = 0;
  int trained = 0;
  for (const std::string& model : request.models) {
    auto network = workloads::load_network(model);
    if (!network) return network.error();
    const bool anchored_anywhere =
        std::any_of(calibration.anchors.begin(), calibration.anchors.end(),
                    [&](const model::Anchor& anchor) { return anchor.network == network->name; });
    if (!anchored_anywhere) continue;  // no real step to estimate from (the base anchor did not fit): said already
    tuner::SearchSpaceOptions space;
    space.batches_per_process = request.batches;
    auto recommendation = tuner::recommend(anchoring->predictor, *network, space, {});
    if (!recommendation) return recommendation.error();
    std::vector<Wanted> wanted = unseparated(*recommendation, request.candidates);
    const std::vector<std::string> paired = allocators_to_pair(*anchoring, *network, *recommendation);
    std::vector<std::pair<int, std::string>> paired_now;  // (threads, allocator) trained by this call
    if (auto probe = one_thread_probe(*recommendation, calibration.anchors, network->name);
        probe && std::none_of(wanted.begin(), wanted.end(), [&](const Wanted& item) {
          return item.prediction.configuration == probe->prediction.configuration;
        }))
      wanted.push_back(*probe);
    for (const Wanted& item : wanted) {
      const model::TrainingConfiguration& configuration = item.prediction.configuration;
      const std::string label = network->name + " mb" + std::to_string(configuration.batch_per_process) + " at " +
                                setting_label(configuration);
      const calibrate::Setting setting = setting_of(configuration);
      // Trained by an earlier call or run (resumed): the fit has it, but not always its pair under
      // the recommended allocator (the earlier call's budget can have left that out).
      const bool recorded_before = calibrate::recorded_anchor(recorded, fingerprint, network->name,
                                                              configuration.batch_per_process, setting, "default");
      // Trained when one timed step is expected to fit; the trainer's time limit then stops the
      // timed steps where the budget ends. A slow setting (a one-thread cliff: steps of many
      // seconds, which the model, not having seen the cliff, may predict far shorter) then costs its warm-up
      // and one timed step, not all: its steps are long enough to agree (max/min 1.00 over such
      // anchors); the median of three guards the short, noisy ones.
      const double start = start_seconds(request) * configuration.processes_per_node;
      const double estimate =
          estimated_run_seconds(anchoring->predictor, *network, item.prediction,
                                request.warmup * std::max(1.0, request.warmup_steps) + 1, start_seconds(request));
      if (!recorded_before) {
        if (configuration.smt) {
          progress("anchor of " + label +
                   " not trained: the trainer binds one thread per core (SMT off), so it stays " +
                   item.prediction.confidence);
          continue;
        }
        const auto cost = workloads::network_cost(*network, configuration.batch_per_process);
        const double needed = cost ? cost->training_memory_bytes() * configuration.processes_per_node : 0;
        if (const auto spare = probe::spare_memory_bytes(); spare && needed > 0.8 * static_cast<double>(*spare)) {
          progress("anchor of " + label + " skipped: training it needs about " + whole_seconds(needed / 1e9) +
                   " GB, this machine can spare " + whole_seconds(static_cast<double>(*spare) / 1e9) + " GB");
          continue;
        }
        const double budget =
            trained == 0 ? std::max(request.budget_seconds, request.first_budget_seconds) : request.budget_seconds;
        if (spent + estimate > budget) {
          progress("anchor of " + label + " skipped: it would take about " + whole_seconds(estimate) +
                   " s, past the anchor budget of " + whole_seconds(budget) + " s (" + whole_seconds(spent) +
                   " s spent); it stays " + item.prediction.confidence);
          continue;
        }
        progress("anchor: training " + network->name + " mb" + std::to_string(configuration.batch_per_process) +
                 " for real (" + setting_label(configuration) + ")" + by_runner(request) + " " + item.why);
        auto seconds =
            train_once(request, model, configuration, std::min(request.steps_limit_seconds, budget - spent - start),
                       "default", request.runner);
        if (!seconds) return seconds.error();
        spent += *seconds;
        ++trained;
      }
      // The recommended allocator at this layout too, when its thread count has no such run yet: a
      // close call under glibc's defaults can turn the other way under it (model/allocation.hpp).
      for (const std::string& allocator : paired) {
        if (recorded_at_threads(recorded, fingerprint, network->name, configuration.batch_per_process,
                                configuration.threads_per_process, allocator) ||
            std::find(paired_now.begin(), paired_now.end(),
                      std::make_pair(configuration.threads_per_process, allocator)) != paired_now.end())
          continue;
        if (spent + estimate > request.budget_seconds) {
          progress("anchor of " + label + " under " + allocator + " skipped: it would take about " +
                   whole_seconds(estimate) + " s, past the anchor budget of " + whole_seconds(request.budget_seconds) +
                   " s (" + whole_seconds(spent) + " s spent); the allocator's gain there is the pooled fit's");
          break;
        }
        progress("anchor: training " + network->name + " mb" + std::to_string(configuration.batch_per_process) +
                 " for real (" + setting_label(configuration) + ") under " + allocator + by_runner(request) +
                 ", to compare the layouts under the allocator the answer sets");
        // PyTorch's run under an allocator that keeps its memory takes the untimed steps of the
        // answer's setups (the second step faults in anew): it is one of those setups.
        SeparatingAnchorRequest paired_request = request;
        if (request.runner == records::kPythonTrainer) paired_request.warmup = request.setup_check_warmup;
        auto paired_seconds = train_once(paired_request, model, configuration,
                                         std::min(request.steps_limit_seconds, request.budget_seconds - spent - start),
                                         allocator, request.runner);
        if (!paired_seconds) return paired_seconds.error();
        spent += *paired_seconds;
        ++trained;
        paired_now.emplace_back(configuration.threads_per_process, allocator);
      }
    }
  }
  return trained;
}

Expected<int> run_close_call_anchor(const model::Calibration& calibration, const SeparatingAnchorRequest& request) {
  const auto progress = [&](const std::string& line) { say(request, line); };
  auto anchoring = start_anchoring(calibration, request);
  if (!anchoring) return anchoring.error();
  const std::vector<records::Measurement>& recorded = anchoring->recorded;
  const std::string& fingerprint = anchoring->fingerprint;
  for (const std::string& model : request.models) {
    auto network = workloads::load_network(model);
    if (!network) return network.error();
    tuner::SearchSpaceOptions space;
    space.batches_per_process = request.batches;
    auto recommendation = tuner::recommend(anchoring->predictor, *network, space, {});
    if (!recommendation) return recommendation.error();
    const model::Prediction& pick = recommendation->best.prediction;
    const auto rival = std::find_if(recommendation->ranking.begin(), recommendation->ranking.end(),
                                    [&](const tuner::RankedPoint& point) {
                                      return point.prediction.configuration != pick.configuration &&
                                             tuner::within_run_spread(point.prediction, pick);
                                    });
    if (rival == recommendation->ranking.end()) continue;
    // Where the setting's last run lies in DIR/network.jsonl (the order of training).
    const auto last_run = [&](const model::Prediction& prediction) -> std::ptrdiff_t {
      const auto runs = calibrate::recorded_anchor_runs(recorded, fingerprint, network->name,
                                                        prediction.configuration.batch_per_process,
                                                        setting_of(prediction.configuration), "default");
      return runs.empty() ? -1 : runs.back() - recorded.data();
    };
    const auto short_of_runs = [&](const model::Prediction& prediction) {
      return prediction.anchor.anchor.runs < request.close_call_runs;
    };
    if (!short_of_runs(pick) && !short_of_runs(rival->prediction)) continue;
    const bool rival_next =
        !short_of_runs(pick) || (short_of_runs(rival->prediction) && last_run(rival->prediction) <= last_run(pick));
    const model::Prediction& next = rival_next ? rival->prediction : pick;
    const model::Prediction& other = rival_next ? pick : rival->prediction;
    const std::string label = network->name + " mb" + std::to_string(next.configuration.batch_per_process) + " at " +
                              setting_label(next.configuration);
    const double estimate = estimated_run_seconds(
        anchoring->predictor, *network, next, request.warmup * std::max(1.0, request.warmup_steps) + request.iterations,
        start_seconds(request));
    if (estimate > request.budget_seconds) {
      progress("close call of " + label + " and " + setting_label(other.configuration) +
               " left as it is: one more run would take about " + whole_seconds(estimate) + " s, past the " +
               whole_seconds(request.budget_seconds) + " s left for it");
      continue;
    }
    const double apart = 100 * std::abs(next.images_per_second / other.images_per_second - 1);
    progress("anchor: training " + network->name + " mb" + std::to_string(next.configuration.batch_per_process) +
             " for real (" + setting_label(next.configuration) + ")" + by_runner(request) + " again: its runs and " +
             setting_label(other.configuration) + "'s are " + whole_seconds(apart) +
             "% apart, within what a setting's runs move");
    const double start = start_seconds(request) * next.configuration.processes_per_node;
    if (auto seconds = train_once(request, model, next.configuration,
                                  std::min(request.steps_limit_seconds, request.budget_seconds - start), "default",
                                  request.runner);
        !seconds)
      return seconds.error();
    return 1;
  }
  return 0;
}

Expected<int> run_setup_check(const model::Calibration& calibration, const SeparatingAnchorRequest& request) {
  const auto progress = [&](const std::string& line) { say(request, line); };
  auto anchoring = start_anchoring(calibration, request);
  if (!anchoring) return anchoring.error();
  std::optional<model::AllocationModel> allocation = anchoring->predictor.allocation();
  if (!allocation) return 0;  // no allocator variant measured: nothing holds PyTorch's setups
  // Every run recorded so far, also those the calibration was fitted before: called again without a
  // refit, this call sees the runs of the calls before it.
  allocation->pytorch_setups =
      model::measured_setups_from_records(anchoring->recorded, calibration.machine, calibration.backend);
  const std::vector<tuner::InstalledAllocator> installed = installed_allocators();
  for (const std::string& model : request.models) {
    auto network = workloads::load_network(model);
    if (!network) return network.error();
    tuner::SearchSpaceOptions space;
    space.batches_per_process = request.batches;
    auto recommendation = tuner::recommend(anchoring->predictor, *network, space, {});
    if (!recommendation) return recommendation.error();
    const tuner::RankedPoint runs_pick = recommendation->best;
    tuner::recommend_allocator(*recommendation, allocation, *network, installed, "");
    const std::vector<SetupSide> sides = setup_check_sides(*recommendation, runs_pick, allocation, *network, installed);
    if (sides.size() < 2) continue;
    std::vector<std::size_t> runs;  // PyTorch's so far, per side
    for (const SetupSide& side : sides) {
      const model::TrainingConfiguration& c = side.point->prediction.configuration;
      const model::MeasuredSetup* timed =
          model::find_setup(allocation->pytorch_setups, network->name, c.batch_per_process, c.processes_per_node,
                            c.threads_per_process, c.smt, side.allocator);
      runs.push_back(timed ? timed->iteration_seconds.size() : 0);
    }
    // The side with the fewest runs, the first listed on a tie; once each has its runs, the noise rule.
    const std::size_t next = static_cast<std::size_t>(std::min_element(runs.begin(), runs.end()) - runs.begin());
    if (runs[next] >= static_cast<std::size_t>(request.setup_check_runs)) {
      const tuner::RankedPoint& answer = *sides.front().point;
      const model::TrainingConfiguration& c = answer.prediction.configuration;
      const model::MeasuredSetup* answer_runs =
          model::find_setup(allocation->pytorch_setups, network->name, c.batch_per_process, c.processes_per_node,
                            c.threads_per_process, c.smt, sides.front().allocator);
      if (!answer_runs) continue;
      auto repeated =
          time_open_call(request, model, *network, *recommendation, *answer_runs, allocation->pytorch_setups);
      if (!repeated) return repeated.error();
      if (*repeated > 0) return *repeated;
      continue;
    }
    const auto timed_steps = [&](const SetupSide& side) {
      return setup_check_timed_steps(side.step_seconds, request.iterations);
    };
    const auto estimate = [&](const SetupSide& side) {
      return python_start_seconds * side.point->prediction.configuration.processes_per_node +
             (request.setup_check_warmup + timed_steps(side)) * side.step_seconds;
    };
    // A side timed alone compares nothing: the first run of all starts only when a second fits too.
    const bool first_of_all = std::all_of(runs.begin(), runs.end(), [](std::size_t count) { return count == 0; });
    const double needed = estimate(sides[next]) + (first_of_all ? estimate(sides[next == 0 ? 1 : 0]) : 0);
    const auto words = [&](const SetupSide& side) {
      return setting_label(side.point->prediction.configuration) + " under " + side.allocator;
    };
    const std::string label =
        network->name + " mb" + std::to_string(sides[next].point->prediction.configuration.batch_per_process);
    const std::string others = [&] {
      std::string text;
      for (std::size_t index = 0; index < sides.size(); ++index)
        if (index != next) text += (text.empty() ? "" : ", ") + words(sides[index]);
      return text;
    }();
    if (needed > request.budget_seconds) {
      progress("the setups of " + label + " not timed by PyTorch: " + words(sides[next]) + " would take about " +
               whole_seconds(needed) + " s, past the " + whole_seconds(request.budget_seconds) + " s left for it");
      continue;
    }
    // A first run that gave the deciding anchors to PyTorch checked it already.
    if (auto available =
            request.runner == records::kPythonTrainer ? Expected<void>{} : train::check_python_runner(network->name);
        !available) {
      progress("the setups of " + label + " not timed by PyTorch from Python: " + available.error().message);
      return 0;
    }
    progress("anchor: timing " + label + " at " + words(sides[next]) +
             " by PyTorch from Python, as the job runs it, "
             "against " +
             others);
    SeparatingAnchorRequest timed = request;
    timed.warmup = request.setup_check_warmup;
    timed.iterations = timed_steps(sides[next]);
    const double start = python_start_seconds * sides[next].point->prediction.configuration.processes_per_node;
    if (auto seconds = train_once(
            timed, model, sides[next].point->prediction.configuration,
            std::max(1.0, request.budget_seconds - start - request.setup_check_warmup * sides[next].step_seconds),
            sides[next].allocator, records::kPythonTrainer);
        !seconds)
      return seconds.error();
    return 1;
  }
  return 0;
}

}  // namespace dnntune::pipeline
