// frontend/request_defaults.hpp — what a request means where the user left something out, for
// the command and the Python module alike: the layout predict and scale use without --ppn and
// --threads (the one `recommend`'s whole answer picks for that machine, network and batch, not
// 1 x 1; frontend/answers.cpp passes that answer in), and the estimate of work the lists multiply
// (the candidates of a long --nodes list): announced, and refused past a stated number of minutes.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/expected.hpp"
#include "model/predictor.hpp"
#include "pipeline/default_calibration.hpp"
#include "tuner/recommendation.hpp"
#include "tuner/search_space.hpp"
#include "workloads/graph.hpp"

namespace dnntune::frontend {

// Which parts of the layout the user gave; the rest is the recommended layout's.
struct GivenLayout {
  bool processes_per_node = false;
  bool threads_per_process = false;
  bool smt = false;  // SMT asked for (--smt): only layouts on SMT siblings
};

struct DefaultedConfiguration {
  model::TrainingConfiguration configuration;
  // One line on where the layout came from when dnntune chose it ("" when the user gave it all),
  // printed as the answer's note and carried in its JSON as "layout_basis".
  std::string layout_basis;
  // The recommendation's allocator when the layout is its pick (the allocator of the recommended
  // setup); none when the user gave the layout or it is another ranked point.
  std::optional<tuner::AllocatorChoice> allocator;
};

// The whole recommendation over a search space (frontend::answer_recommend: allocator included).
using Recommender = std::function<Expected<tuner::Recommendation>(const tuner::SearchSpaceOptions& space)>;

// `asked` with the processes per node, threads per process and SMT the user did not give taken
// from `recommended`'s pick for this network and batch (per node: at `asked.nodes` nodes for a
// prediction, at one for a scaling curve, whose layout is per node), or its best-ranked point that
// keeps what the user gave. The rest of `asked` (batch, nodes, scheme, fusion, fabric) is kept.
Expected<DefaultedConfiguration> with_default_layout(const model::Predictor& predictor,
                                                     const workloads::Network& network,
                                                     const model::TrainingConfiguration& asked,
                                                     const GivenLayout& given, const Recommender& recommended);

// Candidates scored before a search announces itself (on `progress`, with its estimate).
constexpr std::size_t candidates_worth_announcing = 2000;

// The longest a search may be estimated to take before it is refused, unless the user raises
// it: ten minutes is past any default search (seconds) and any list a user meant, while the
// product of a few long lists (every node count, batch and fusion size) runs for hours.
constexpr double default_max_search_minutes = 10;

// A search's size and how long it is estimated to take on this machine.
struct SearchEstimate {
  std::size_t candidates = 0;
  double seconds = 0;  // 0 when too few candidates to be worth timing
};
// Counts the candidates of `space` on the predictor's node and, when there are many, estimates
// how long they take (one banded prediction timed here, times their number, over the workers).
SearchEstimate estimate_search(const model::Predictor& predictor, const workloads::Network& network,
                               const tuner::SearchSpaceOptions& space);
// Refuses an estimate past `max_minutes`, naming the lists that multiply the work and
// `limit_option`, the option that raises the limit ("": none to name).
Expected<void> check_search_estimate(const SearchEstimate& estimate, double max_minutes,
                                     const std::string& limit_option);
// The above in order: a search past the limit is refused before it starts; one that is not but
// is long says how many candidates and about how long on `progress`.
Expected<void> announce_search(const model::Predictor& predictor, const workloads::Network& network,
                               const tuner::SearchSpaceOptions& space, const pipeline::Progress& progress,
                               double max_minutes, const std::string& limit_option);

}  // namespace dnntune::frontend
