// model/calibration.hpp — a fitted cost model of one machine and one backend: the parameters
// (with bootstrap replicates for the uncertainty band), the layer measurements they were fitted
// on (predictions reuse them where they match), the communication links, and the fit report.
// Saved as JSON ("dnntune.calibration" v1); loading it predicts exactly as before saving.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/expected.hpp"
#include "model/allocation.hpp"
#include "model/communication.hpp"
#include "model/parameters.hpp"
#include "records/machine_profile.hpp"
#include "workloads/layer.hpp"

namespace dnntune::model {

constexpr const char* calibration_schema = "dnntune.calibration";
constexpr int calibration_schema_version = 2;  // 2: the conv_native class

// One measured layer pass in one setting (a median over repetitions).
struct MeasuredLayer {
  int threads = 1;
  bool smt = false;
  int co_running = 1;
  double seconds = 0;
  double coefficient_of_variation = 0;
  int repetitions = 1;
};

// One layer pass at one batch: the key of its measurements in every setting. Saved as the text
// "descriptor|pass|batch" (pass an index, pass_index), the calibration file's format.
struct MeasuredLayerKey {
  std::string descriptor;
  int pass = 0;
  std::int64_t batch = 1;

  std::string to_text() const;
  // bad_input unless `text` is "descriptor|pass|batch" with a pass index 0..2 and a batch of
  // 1..workloads::max_batch.
  static Expected<MeasuredLayerKey> from_text(const std::string& text);
  bool operator<(const MeasuredLayerKey& other) const {
    return std::tie(descriptor, pass, batch) < std::tie(other.descriptor, other.pass, other.batch);
  }
  bool operator==(const MeasuredLayerKey& other) const {
    return descriptor == other.descriptor && pass == other.pass && batch == other.batch;
  }
};
MeasuredLayerKey measured_layer_key(const std::string& descriptor, int pass, std::int64_t batch);
// "kind|pass": a pass of every layer of a kind (Calibration::fused_passes).
std::string fused_pass_key(workloads::LayerKind kind, int pass);

struct ParameterEstimate {
  std::string name;
  double value = 0;
  double low = 0;       // 5th percentile over bootstrap replicates (value when pinned)
  double high = 0;      // 95th percentile
  bool pinned = false;  // the data cannot identify it: kept at its prior
};

// Mean absolute percentage error of predictions for samples never seen by the fit that made
// them (k-fold by layer descriptor), by group ("conv_spatial", "threads 2", ...).
struct HeldOutError {
  std::string group;
  int samples = 0;
  double mean_absolute_percentage_error = 0;
};

struct FitSummary {
  int samples = 0;          // layer-pass measurements used
  int records_ignored = 0;  // not ok, another backend, or costing nothing
  double fit_seconds = 0;
  double held_out_log_sd = 0;  // spread of log(measured / predicted) held out: the model error
  std::vector<ParameterEstimate> parameters;
  std::vector<HeldOutError> held_out_by_class;
  std::vector<HeldOutError> held_out_by_setting;
  std::vector<std::string> sources;  // the measurement files
};

// The network trained for real a few steps (train/anchor.hpp) next to what the layers
// predict for the same step: corrected, pass by pass, the predictor matches the real step.
struct Anchor {
  std::string network;
  std::int64_t batch = 0;  // per process
  int threads = 1;
  bool smt = false;
  int processes = 1;                                                        // on the node
  int steps = 0;                                                            // timed steps, over all its runs
  double forward_seconds = 0, backward_seconds = 0, iteration_seconds = 0;  // measured medians
  double iteration_coefficient_of_variation = 0;
  double layers_forward_seconds = 0, layers_backward_seconds = 0;  // the layers' sums, uncorrected
  // The step after its backward: the measured optimizer pass (0: not recorded, in calibrations
  // written before anchors kept it) against the model's streaming terms there (gradient sums and
  // optimizer, uncorrected). The model's add-class rate, fitted from a short first run, can be far
  // off for them, and a measured prediction would then miss its own anchor (docs/results.md).
  double optimizer_seconds = 0, streaming_seconds = 0;
  // The runs of this setting behind it (each a process's own heap and neighbours): the measured
  // figures are the median over them, and their iteration medians spread this much (log sd; 0 for
  // one run), which a measured band holds.
  int runs = 1;
  double between_runs_log_sd = 0;
  double forward_ratio() const { return layers_forward_seconds > 0 ? forward_seconds / layers_forward_seconds : 1; }
  double backward_ratio() const { return layers_backward_seconds > 0 ? backward_seconds / layers_backward_seconds : 1; }
  double streaming_ratio() const {
    return optimizer_seconds > 0 && streaming_seconds > 0 ? optimizer_seconds / streaming_seconds : 1;
  }
};

// What a pass of the layers takes inside a real training step against what the calibration
// gives them in isolation (model/context_correction.hpp), from the anchors' module times.
struct ContextRatio {
  std::string pass;   // "forward" or "backward" (backward-data and backward-weights together)
  double ratio = 1;   // in-network / isolated: the geometric mean over the anchors' runs
  double log_sd = 0;  // the spread of those runs' log ratios: the band's widening
  int modules = 0;    // module passes behind it
  int runs = 0;       // anchor runs (network, batch, setting) behind it
  // Threads per process of those runs: a dispatch cliff (Debian's libtorch at 1 thread) follows
  // the thread count, so a ratio is carried to the nearest thread count, as anchors are.
  int threads = 1;
};

struct Calibration {
  records::MachineProfile machine;
  std::string backend;  // "torch", "onednn"
  std::string backend_version;
  ModelParameters parameters;
  std::vector<std::vector<double>> bootstrap_parameters;  // flat (parameters.hpp), one per replicate
  std::map<MeasuredLayerKey, std::vector<MeasuredLayer>> measured_layers;
  // "kind|pass" (layer kind name, pass index) of passes the backend runs no kernel of their own
  // for, in any layer of that kind: micro-runs record them `unimplemented` (oneDNN computes batch
  // norm's scale and shift gradients inside its backward-data primitive). Predictions give them
  // no time: the other pass's measurement has it.
  std::set<std::string> fused_passes;
  CommunicationLinks links;     // inter_node.measured == false: a fabric preset is used instead
  std::vector<Anchor> anchors;  // absent in calibrations written before anchors: none
  // Absent when no anchor timed its modules (older calibrations): no context correction.
  std::vector<ContextRatio> context_ratios;
  // The allocator term fitted from anchors under each allocator variant (model/allocation.hpp);
  // absent when none was anchored next to glibc-tuned: the prior then applies.
  std::optional<AllocationModel> allocation;
  FitSummary summary;
};

std::string to_json_text(const Calibration& calibration);
Expected<Calibration> calibration_from_json_text(const std::string& text, const std::string& origin);
Expected<Calibration> read_calibration(const std::string& path);

}  // namespace dnntune::model
