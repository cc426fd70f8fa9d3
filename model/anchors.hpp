// model/anchors.hpp — the anchors of a fit (Calibration::anchors): each network trained for real
// (kind network records: passes forward, backward, iteration; train/anchor.hpp) next to
// the sum of its layer passes as the fitted calibration predicts them, before any correction.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/calibration.hpp"
#include "records/measurement.hpp"
#include "workloads/graph.hpp"

namespace dnntune::model {

// How far the median of one short training run moves from another run of the same network and
// setting on the same node (log sd), at least: glibc's default malloc faults in a different
// share of each run's buffers, and a VM's neighbours come and go. The floor is the pooled
// run-to-run spread benchmarks/accuracy_figures.sh measured (docs/results.md, "Anchors"): bands
// of a measured prediction without it were too narrow to hold the next run. A quieter node gets
// a wider band than it needs, never a narrower one.
constexpr double run_to_run_log_sd = 0.025;

// The network a run trained: its record's network_source (a network file's path; a built-in's
// name), else the recorded name.
Expected<workloads::Network> trained_network(const records::Measurement& record);

// Each network, batch and setting trained on one node among `records` of this calibration's
// machine and backend, under the default allocator: every run of it pooled (its medians the
// median over the runs, their spread Anchor::between_runs_log_sd), so that a measured figure rests
// on more than one process's heap state once the setting was trained again. A run by PyTorch
// from Python joins the median only next to two or more runs of the C++ trainer (the one that
// trains every other setting); it always joins the spread. A network dnntune cannot load by the
// recorded name (a network file since moved) is left out.
std::vector<Anchor> fit_anchors(const std::vector<records::Measurement>& records, const Calibration& calibration);

// The median of a figure over the anchors that have it (`figure` gives nullopt for one without):
// `network`'s own anchors when any has it, else every network's on this node. The node's
// spreads (step to step, process to process) are read this way.
struct AnchorMedian {
  double value = 0;         // 0 when no anchor has the figure
  std::size_t anchors = 0;  // how many it is the median of
  bool own = false;         // over `network`'s own anchors
};
AnchorMedian median_over_anchors(const std::vector<Anchor>& anchors, const std::string& network,
                                 const std::function<std::optional<double>(const Anchor&)>& figure);

// How far a run's median moves from one process to the next on this node (log sd): the median
// between-runs spread of the settings trained more than once, `network`'s own, else any
// network's; 0 when no setting was. A first run trains its base setting three times (two
// trainers, each run a process of its own) and each separating setting once: one run cannot show
// this spread, yet the next process of that setting moves as much (a process's step time is
// bimodal under glibc's defaults). Without it, one-run anchors get bands narrower than the
// spread of the base setting's runs, and the next runs fall outside them (docs/results.md).
double between_processes_log_sd(const std::vector<Anchor>& anchors, const std::string& network);

}  // namespace dnntune::model
