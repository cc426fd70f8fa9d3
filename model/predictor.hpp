// model/predictor.hpp — predicting one training iteration, and images/s, for a network and a
// training configuration on a calibrated machine (or a spec machine with a calibration's
// efficiencies carried over), with the uncertainty band and the time split into named terms.
//
// How a layer pass is timed: when the calibration measured this layer pass at this batch in
// exactly this setting, that measurement; when it measured it in another setting, that
// measurement carried over by the model: scaled by the model's ratio when threads or SMT differ
// (compute scales), shifted by the model's difference when only the co-running count differs
// (contention adds shared traffic, whatever the kernel's own speed); otherwise the model alone. Measurements are never
// interpolated
// across batches: a framework may switch kernels between two batch sizes.
//
// Anchors: where the calibration trained the network for real (Calibration::anchors), the
// forward and backward layer sums are multiplied by the anchor's measured / summed ratios — of
// the anchor at this batch and setting when there is one (the prediction then reproduces the
// real step, and the band covers it), else of the same network's nearest anchor (same batch
// first, then the fewest co-running processes, threads and SMT away: co-running micro-runs err
// their own way), the band widened by the correction carried and by how much the anchors at that batch
// disagree with each other. Only a prediction with an exact anchor, on one node, is labelled "measured".
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/calibration.hpp"
#include "model/machine_rates.hpp"
#include "model/stragglers.hpp"
#include "model/training_configuration.hpp"
#include "workloads/graph.hpp"

namespace dnntune::model {

// Seconds per iteration of each named term (the split users read to see where time goes).
struct IterationTerms {
  double forward = 0;
  double backward_data = 0;
  double backward_weights = 0;
  double gradient_sums = 0;          // summing gradients of tensors read by several layers
  double optimizer = 0;              // SGD with momentum and weight decay
  double communication = 0;          // all of it (all-reduce buckets, or PS push + pull)
  double exposed_communication = 0;  // what the backward pass did not hide
  double communication_cpu = 0;      // compute slowed by communication running on the same cores
  double stragglers = 0;             // a barrier waiting for the slowest node (model/stragglers.hpp)
  // The layer time by its limiting term, to name the bottleneck.
  double compute_bound = 0;
  double memory_bound = 0;
  double overhead_bound = 0;
};

// The real step a prediction was checked against (Calibration::anchors): the anchor of this
// network at this batch and setting (exact), else the same network's nearest one, whose
// correction is carried over.
struct AnchorUse {
  bool used = false;
  bool exact = false;
  Anchor anchor;
  double forward_ratio = 1, backward_ratio = 1;  // measured / the layers' sum, applied to this prediction
  // The spread (largest - smallest log of measured / the layers' sum, forward and backward
  // together) among this network's anchors at the used one's batch: a carried band widens by it.
  double disagreement = 0;
};

struct Prediction {
  std::string network;
  std::string backend;
  std::string machine;
  TrainingConfiguration configuration;
  Placement placement;
  double iteration_seconds = 0;
  double images_per_second = 0;      // the whole job (workers only, for a parameter server)
  double images_per_second_low = 0;  // 90% band
  double images_per_second_high = 0;
  double scaling_efficiency = 1;  // images/s over nodes x the same configuration on one node;
                                  // parameter server: per worker, over a worker training alone
  IterationTerms terms;
  double measured_fraction = 0;  // share of layer time taken from measurements of this batch
  // "measured" (checked against a real step of this network, batch and setting on one node),
  // "partly measured", "modelled", "spec"
  std::string confidence;
  AnchorUse anchor;
  // The share of the iteration under a layer class's in-network ratio (context_correction.hpp):
  // 0 with an exact anchor, or without module times in the calibration.
  double context_corrected_share = 0;
  std::string bottleneck;          // the largest term, in words
  std::string step_spread_source;  // where the straggler term's spread came from (or why none)
  // Over nodes: where the inter-node link came from: the calibration's sweep, the fabric's preset,
  // or the user's jobs on that fabric (FabricTerms::source). "" on one node.
  std::string inter_node_link_source;
  // How far one real run's median of this setting moves from run to run (log sd), as the band
  // counts it: 0 unless a real step corrects the prediction (and only with the band). With
  // anchor.anchor.runs it says how well the runs behind a "measured" figure pin it down.
  double run_spread_log_sd = 0;
};

struct ExecutionSetting;  // model/layer_time.hpp

// The communication terms of one fabric as the user's own multi-node jobs on it ran them
// (model/job_fabric_fit.hpp): the effective inter-node link and the nodes' step spread. They
// replace the fabric's preset, and the calibration's measured link, for that fabric only.
struct FabricTerms {
  LinkModel inter_node;  // measured: true; its source names the jobs
  StepSpread spread;     // the straggler term's
  std::string source;    // "2 jobs of yours on eth10 (2 and 4 nodes, the last 2026-12-07: ids ...)"
};

class Predictor {
 public:
  // This machine, from its calibration.
  static Expected<Predictor> from_calibration(Calibration calibration);
  // A spec machine (data/machines) with `reference`'s efficiencies; lower confidence.
  static Expected<Predictor> from_spec(const records::MachineProfile& machine, const Calibration& reference);

  // with_band = false skips the bootstrap replicates and the scaling efficiency (which needs a
  // one-node prediction too): for ranking thousands of configurations.
  // With the band, `replicate_images_per_second` (when given) receives the images/s of each
  // bootstrap replicate, as replicate_images_per_second() below, at no extra cost.
  Expected<Prediction> predict(const workloads::Network& network, const TrainingConfiguration& configuration,
                               bool with_band = true, std::vector<double>* replicate_images_per_second = nullptr) const;
  // Images/s of `configuration` under each bootstrap replicate of the parameters, in the
  // calibration's order (empty when it has none): two configurations' values are paired, one
  // draw of every parameter for both, so what they share (a spec transfer, a prior) cancels
  // in their ratio.
  Expected<std::vector<double>> replicate_images_per_second(const workloads::Network& network,
                                                            const TrainingConfiguration& configuration) const;

  const MachineRates& rates() const { return rates_; }
  const records::MachineProfile& machine() const { return calibration_.machine; }
  const std::string& backend() const { return calibration_.backend; }
  bool spec_only() const { return spec_only_; }
  // The calibration's allocator term (model/allocation.hpp); absent: not fitted.
  const std::optional<AllocationModel>& allocation() const { return calibration_.allocation; }

  // `terms` for the fabric `fabric` (a configuration naming it over nodes takes them), replacing
  // any given before for it.
  void set_fabric_terms(const std::string& fabric, FabricTerms terms);
  // The terms given for `fabric`; null: none (the calibration's link or the fabric's preset).
  const FabricTerms* fabric_terms(const std::string& fabric) const;
  // The inter-node link a configuration over `fabric` takes: its FabricTerms' when given, else the
  // calibration's measured one, unless the fabric is a preset's what-if (numbers) or none was measured.
  Expected<LinkModel> inter_node_link(const std::string& fabric) const;

 private:
  struct IterationTotals;
  struct ComputePart;
  struct ComputeMemo;
  struct WorkloadCosts;
  // The costs of `network` at `batch`, computed once per predictor (and its copies) and workload.
  std::shared_ptr<const WorkloadCosts> workload_costs(const workloads::Network& network, std::int64_t batch,
                                                      const std::string& workload_key) const;
  ComputePart compute_part(const workloads::Network& network, std::int64_t batch, const ExecutionSetting& setting,
                           const ModelParameters& parameters, const WorkloadCosts& costs) const;
  // processes_per_node > 0: an exact anchor must have run that many (predict knows; compute_part
  // only has the execution setting).
  AnchorUse anchor_for(const std::string& network, std::int64_t batch, const ExecutionSetting& setting,
                       int processes_per_node = 0) const;
  IterationTotals iterate(const workloads::Network& network, const TrainingConfiguration& configuration,
                          const Placement& placement, const ModelParameters& parameters) const;
  // The step spread the straggler term uses: the anchors', else a spec node's published one.
  // Over nodes of `fabric`: its FabricTerms' spread when given.
  StepSpread node_step_spread(const std::string& network, const std::string& fabric) const;

  // The log sd by which a run's step under glibc's defaults moves between runs (predictor.cpp).
  double default_allocator_run_spread(const workloads::Network& network, const TrainingConfiguration& configuration,
                                      double iteration_seconds) const;

  // Compute parts already predicted, and the workloads' costs, shared by copies of this predictor
  // (its calibration does not change after construction).
  std::shared_ptr<ComputeMemo> memo_;  // made by from_calibration and from_spec
  Calibration calibration_;
  MachineRates rates_;
  bool spec_only_ = false;
  std::map<std::string, FabricTerms> fabric_terms_;  // by fabric name
};

// Extra log-standard-deviation of a spec machine's prediction: efficiencies carried from one
// microarchitecture to another are only roughly right.
constexpr double spec_transfer_log_sd = 0.25;

}  // namespace dnntune::model
