// tuner/allocator_choice.hpp — the memory allocator of the recommended configuration: each
// variant installed on the node predicted for that configuration (model/allocation.hpp), and the
// choice. A variant replaces glibc's defaults only when its whole gain band lies above 1 (the
// fitted anchors say it is faster, beyond their step-to-step spread); a variant known only by
// its prior never does. An allocator the user names (--allocator) wins; the answer then says
// what the model would have picked.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/allocation.hpp"
#include "model/predictor.hpp"
#include "workloads/graph.hpp"

namespace dnntune::tuner {

// A variant the node can load (probe/allocators.hpp lists them; the tuner stays pure).
struct InstalledAllocator {
  std::string name;
  std::vector<std::pair<std::string, std::string>> environment;  // what every rank sets
};

struct AllocatorCandidate {
  InstalledAllocator allocator;
  model::AllocatorPrediction prediction;
  double images_per_second = 0, images_per_second_low = 0, images_per_second_high = 0;
};

struct AllocatorChoice {
  std::string chosen = "default";
  // "model", "user" (--allocator), "unmodelled" (no fault cost), "pytorch" (PyTorch from Python
  // timed it faster than the model's pick: tuner::recommend_allocator; the note says by how much)
  std::string chosen_by = "model";
  bool modelled = false;                       // the allocation term could be evaluated
  bool fitted = false;                         // from anchors under the variants (else the prior)
  std::vector<AllocatorCandidate> candidates;  // every installed variant, the default first
  // The measured variants the measurements cannot order against the model's pick (when it picked a
  // variant, not glibc's defaults; --allocator does not change them): a median gain above 1 whose
  // band overlaps the pick's. The note
  // names them; a first run times the answer's layout under them by PyTorch (pipeline/
  // separating_anchors.hpp, run_setup_check), whose gain from an allocator can differ from the
  // C++ trainer's (docs/results.md, "The first answer").
  std::vector<std::string> close;
  std::string note;
  const AllocatorCandidate* find(const std::string& name) const;
  std::vector<std::pair<std::string, std::string>> environment() const;  // the chosen one's
};

// `model`: the calibration's allocation term, or the prior, or none (no probed fault cost).
// `user_choice`: --allocator as given, empty when not given.
AllocatorChoice choose_allocator(const std::optional<model::AllocationModel>& model, const workloads::Network& network,
                                 const model::Prediction& best, const std::vector<InstalledAllocator>& installed,
                                 const std::string& user_choice);

// "  allocator: tcmalloc, predicted 1.42x over glibc's defaults (90% band 1.21-1.63, measured): ..."
// and the note; the table: one line per variant (--explain).
std::string allocator_text(const AllocatorChoice& choice);
std::string allocator_summary(const AllocatorChoice& choice);  // the first line's words, for a job script's comment
std::string allocator_table_text(const AllocatorChoice& choice);
nlohmann::json allocator_json(const AllocatorChoice& choice);

}  // namespace dnntune::tuner
