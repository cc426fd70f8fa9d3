// tuner/report.cpp — see report.hpp.
#include "tuner/report.hpp"
#include "common/text_format.hpp"

#include <cstdio>
#include <map>
#include <sstream>

#include "model/job_contradictions.hpp"
#include "model/plausibility.hpp"
#include "model/report.hpp"

namespace dnntune::tuner {
namespace {

std::string layout(const model::TrainingConfiguration& c) {
  std::string text =
      std::to_string(c.processes_per_node) + " x " + std::to_string(c.threads_per_process) + (c.smt ? " SMT" : "");
  if (c.scheme == model::CommunicationScheme::parameter_server) text += c.asynchronous ? " async-PS" : " sync-PS";
  return text;
}

bool same_layout(const model::TrainingConfiguration& a, const model::TrainingConfiguration& b) {
  return a.processes_per_node == b.processes_per_node && a.threads_per_process == b.threads_per_process &&
         a.smt == b.smt && a.batch_per_process == b.batch_per_process && a.nodes == b.nodes && a.scheme == b.scheme &&
         a.asynchronous == b.asynchronous;
}

std::string duration_text(double seconds) {
  if (seconds >= 2 * 86400) return format_fixed(seconds / 86400, 1) + " days";
  if (seconds >= 2 * 3600) return format_fixed(seconds / 3600, 1) + " hours";
  return format_fixed(seconds / 60, 1) + " minutes";
}

// "1.48x over one process on all cores (1 x 56: 18.7)": measured when --verify trained both.
std::string speedup_text(const Recommendation& r, const model::Prediction& baseline, const std::string& what) {
  const VerifiedPoint* best = find_verified(r, r.best.prediction.configuration);
  const VerifiedPoint* measured = find_verified(r, baseline.configuration);
  const bool both = best && measured;
  const double ours = both ? best->measured_images_per_second : r.best.prediction.images_per_second;
  const double theirs = both ? measured->measured_images_per_second : baseline.images_per_second;
  return format_fixed(ours / theirs, 2) + "x over " + what + " (" + layout(baseline.configuration) + ": " +
         format_fixed(theirs, 1) + (both ? ", measured)" : ")");
}

}  // namespace

std::string recommendation_text(const Recommendation& r, bool explain) {
  std::ostringstream out;
  const model::Prediction& best = r.best.prediction;
  out << "Best for " << best.network << " on " << best.machine << " (" << best.backend << " backend, "
      << objective_name(r.objective) << "):\n";
  out << "  " << model::describe(best.configuration) << "\n";
  // A band wider than the gate's ratio (model/plausibility.hpp) is no figure: unknown.
  out << "  predicted "
      << (model::band_is_known(best.images_per_second_low, best.images_per_second_high)
              ? format_fixed(best.images_per_second, 1) + " images/s (90% band "
              : std::string("images/s unknown (90% band "))
      << format_fixed(best.images_per_second_low, 1) << "-" << format_fixed(best.images_per_second_high, 1)
      << (model::band_is_known(best.images_per_second_low, best.images_per_second_high)
              ? ", "
              : ", wider than " + format_fixed(model::widest_band_ratio, 0) + "x: the model does not know; ")
      << best.confidence << ")";
  if (best.confidence == "spec")
    out << " — a spec machine: lower confidence";
  else
    out << "; " << format_fixed(100 * best.measured_fraction, 0) << "% of its layer time from micro-runs at this batch";
  out << "\n";
  if (const VerifiedPoint* measured = find_verified(r, best.configuration))
    out << "  measured " << format_fixed(measured->measured_images_per_second, 2) << " images/s (--verify)\n";
  if (r.single_process) out << "  " << speedup_text(r, *r.single_process, "one process on all cores");
  if (r.rule_of_thumb)
    out << ", "
        << speedup_text(r, *r.rule_of_thumb,
                        std::to_string(r.rule_of_thumb->configuration.processes_per_node) + " processes per node");
  if (r.single_process || r.rule_of_thumb) out << "\n";
  if (r.allocator) out << allocator_text(*r.allocator);
  out << "  bottleneck: " << best.bottleneck << "\n";
  if (r.objective == Objective::time_to_train) out << "  time to train: " << duration_text(r.seconds_to_train) << "\n";
  out << "  pick: " << (r.chosen_by_tie_break ? "the tie-break's" : "the model's") << " (" << r.tied_candidates
      << " candidate" << (r.tied_candidates == 1 ? "" : "s") << " within reach of the top score)\n";
  if (!r.choice_note.empty()) out << "  note: " << r.choice_note << "\n";
  if (!r.how_to_settle.empty() && r.tied_candidates > 1) out << "  to settle it: " << r.how_to_settle << "\n";
  for (const std::string& line : r.basis) out << "  basis: " << line << "\n";
  out << model::contradictions_text(r.contradicting_jobs);
  if (!r.verified.empty()) {
    out << "  trained for real (images/s at the median step, slowest-fastest):\n";
    for (const VerifiedPoint& point : r.verified)
      out << "    " << model::describe(point.prediction.configuration) << ": measured "
          << format_fixed(point.measured_images_per_second, 2) << " [" << format_fixed(point.measured_low, 2) << "-"
          << format_fixed(point.measured_high, 2) << "], predicted "
          << format_fixed(point.prediction.images_per_second, 2) << "\n";
  }
  out << "  runners-up:";
  int shown = 0;
  for (const RankedPoint& point : r.ranking) {
    if (same_layout(point.prediction.configuration, best.configuration)) continue;
    out << (shown ? ", " : " ") << layout(point.prediction.configuration) << " b"
        << point.prediction.configuration.batch_per_process << " ("
        << format_fixed(point.prediction.images_per_second, 1) << ", band "
        << format_fixed(point.prediction.images_per_second_low, 1) << "-"
        << format_fixed(point.prediction.images_per_second_high, 1) << ")";
    if (++shown == 4) break;
  }
  out << "\n  " << r.ranking.size() << " configurations scored, " << r.excluded.size()
      << " excluded (do not fit the node); --explain for all, --format slurm for a job script\n";
  if (explain) {
    out << "\nRanking:\n";
    char line[200];
    std::snprintf(line, sizeof line, "  %4s %-16s %6s %6s %12s %17s %12s  %s\n", "rank", "ppn x threads", "batch",
                  "nodes", "images/s", "90% band", "iteration", "bottleneck");
    out << line;
    int rank = 0;
    for (const RankedPoint& point : r.ranking) {
      const auto& p = point.prediction;
      const std::string band =
          format_fixed(p.images_per_second_low, 1) + "-" + format_fixed(p.images_per_second_high, 1);
      std::snprintf(line, sizeof line, "  %4d %-16s %6lld %6d %12.1f %17s %12s  %s\n", ++rank,
                    layout(p.configuration).c_str(), static_cast<long long>(p.configuration.batch_per_process),
                    p.configuration.nodes, p.images_per_second, band.c_str(),
                    model::format_seconds(p.iteration_seconds).c_str(), p.bottleneck.c_str());
      out << line;
    }
    std::map<std::string, int> reasons;
    for (const auto& excluded : r.excluded) ++reasons[excluded.reason.substr(0, excluded.reason.find(" ("))];
    if (r.allocator) out << allocator_table_text(*r.allocator);
    out << "\nExcluded (" << r.excluded.size() << "):\n";
    for (const auto& excluded : r.excluded)
      out << "  " << layout(excluded.configuration) << " b" << excluded.configuration.batch_per_process << ": "
          << excluded.reason << "\n";
  }
  return out.str();
}

nlohmann::json recommendation_json(const Recommendation& r, bool explain) {
  nlohmann::json out = {{"schema", "dnntune.recommendation"},
                        {"schema_version", 1},
                        {"objective", objective_name(r.objective)},
                        {"best", model::prediction_json(r.best.prediction)},
                        {"tied_within_band", r.tied_within_band},
                        {"choice_note", r.choice_note},
                        {"chosen_by", r.chosen_by_tie_break ? "tie-break" : "model"},
                        {"tied_candidates", r.tied_candidates},
                        {"basis", r.basis},
                        {"how_to_settle", r.how_to_settle},
                        {"configurations_scored", r.ranking.size()},
                        {"configurations_excluded", r.excluded.size()}};
  if (r.single_process) {
    out["single_process"] = model::prediction_json(*r.single_process);
    out["speedup_over_single_process"] = r.best.prediction.images_per_second / r.single_process->images_per_second;
  }
  if (r.rule_of_thumb) {
    out["rule_of_thumb"] = model::prediction_json(*r.rule_of_thumb);
    out["speedup_over_rule_of_thumb"] = r.best.prediction.images_per_second / r.rule_of_thumb->images_per_second;
  }
  if (r.objective == Objective::time_to_train) out["seconds_to_train"] = r.seconds_to_train;
  if (r.allocator) out["allocator"] = allocator_json(*r.allocator);
  if (!r.contradicting_jobs.empty()) out["contradicting_jobs"] = model::contradictions_json(r.contradicting_jobs);
  if (!r.verified.empty()) {
    nlohmann::json verified = nlohmann::json::array();
    for (const VerifiedPoint& point : r.verified)
      verified.push_back({{"configuration", model::describe(point.prediction.configuration)},
                          {"processes_per_node", point.prediction.configuration.processes_per_node},
                          {"threads_per_process", point.prediction.configuration.threads_per_process},
                          {"smt", point.prediction.configuration.smt},
                          {"batch_per_process", point.prediction.configuration.batch_per_process},
                          {"predicted_images_per_second", point.prediction.images_per_second},
                          {"measured_images_per_second", point.measured_images_per_second},
                          {"measured_range", {point.measured_low, point.measured_high}}});
    out["verified"] = verified;
  }
  nlohmann::json ranking = nlohmann::json::array();
  const std::size_t shown = explain ? r.ranking.size() : std::min<std::size_t>(5, r.ranking.size());
  for (std::size_t index = 0; index < shown; ++index)
    ranking.push_back(model::prediction_json(r.ranking[index].prediction));
  out["ranking"] = ranking;
  if (explain) {
    nlohmann::json excluded = nlohmann::json::array();
    for (const auto& point : r.excluded)
      excluded.push_back({{"processes_per_node", point.configuration.processes_per_node},
                          {"threads_per_process", point.configuration.threads_per_process},
                          {"smt", point.configuration.smt},
                          {"batch_per_process", point.configuration.batch_per_process},
                          {"nodes", point.configuration.nodes},
                          {"reason", point.reason}});
    out["excluded"] = excluded;
  }
  return out;
}

}  // namespace dnntune::tuner
