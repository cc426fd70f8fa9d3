// frontend/request_defaults.hpp — what a request means where the user left something out, for
// the command and the Python module alike: the layout predict and scale use without --ppn and
// --threads (the one `recommend`'s whole answer picks for that machine, network and batch, not
// 1 x 1; frontend/answers.cpp passes that answer in), and the announcement of work a list
// multiplies (the candidates of a long --nodes list).
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
                                                     const model::TrainingConfiguration& asked, const GivenLayout& given,
                                                     const Recommender& recommended);

// Candidates scored before a search announces itself (on `progress`, with its estimate).
constexpr std::size_t candidates_worth_announcing = 2000;
// Counts the candidates of `space` on the predictor's node and, when there are many, says how
// many and about how long they take (one banded prediction timed here, times their number).
void announce_search(const model::Predictor& predictor, const workloads::Network& network,
                     const tuner::SearchSpaceOptions& space, const pipeline::Progress& progress);

}  // namespace dnntune::frontend
