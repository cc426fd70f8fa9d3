// calibrate/calibration_report.hpp — `dnntune calibrate --report DIR`: what a calibration
// measured, summarised for a person deciding whether to trust it (text) or for a script (JSON):
//   * throughput: per backend and layer class, achieved GFLOP/s at the base setting against the
//     probe's measured FMA peak of the cores used, and the largest convolutions on their own;
//   * thread scaling: per class, speed-up over one thread (one process, with and without SMT);
//   * contention: per class, how much slower k co-running processes are than one process alone
//     at the same threads;
//   * additivity: the sum of a network's layer passes (each occurrence, the passes the network
//     runs) against a whole-network training step of the same backend, batch and setting — the
//     assumption the cost model rests on, measured. Gradient sums where a tensor has several
//     readers are in the whole step only. The same pass by pass (forward, backward) against the
//     network trained for real when DIR/network.jsonl holds anchors (train/anchor.hpp).
// Sums are taken over the layers measured at every setting compared, so a sampled grid still
// compares like with like; the number of layers behind each figure is given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::calibrate {

struct ClassThroughput {
  std::string backend, layer_class;
  std::int64_t batch = 0;
  int threads = 0;
  double gflops = 0;
  double fraction_of_peak = 0;
  int layers = 0;
};

struct LargestConvolution {
  std::string backend, descriptor, pass;
  std::int64_t batch = 0;
  int threads = 0;
  double gflops = 0;
  double fraction_of_peak = 0;
};

struct ThreadScaling {
  std::string backend, layer_class;
  std::int64_t batch = 0;
  int threads = 0;
  bool smt = false;
  double speedup = 0;  // time at 1 thread / time at `threads`
  int layers = 0;
};

struct Contention {
  std::string backend, layer_class;
  std::int64_t batch = 0;
  int threads = 0;
  int processes = 0;
  double slowdown = 0;  // time with `processes` co-running / time alone, same threads
  int layers = 0;
};

struct Additivity {
  std::string network, backend;
  std::int64_t batch = 0;
  int threads = 0;
  double layers_seconds = 0;   // the sum of the network's layer passes
  double network_seconds = 0;  // the whole-network training step
  int missing_passes = 0;      // layer passes of the network without a measurement (left out of the sum)
  double ratio() const { return network_seconds > 0 ? layers_seconds / network_seconds : 0; }
};

// The same against the network trained for real (the anchors of DIR/network.jsonl), pass by
// pass: "forward", "backward" (backward-data and backward-weights of every layer) and
// "forward+backward".
struct AnchorAdditivity {
  std::string network, backend;
  std::int64_t batch = 0;
  int threads = 0, processes = 1;
  std::string pass;
  double layers_seconds = 0;  // the sum of the network's layer passes of this pass
  double anchor_seconds = 0;  // the trained step's pass (median)
  int missing_passes = 0;
  double ratio() const { return anchor_seconds > 0 ? layers_seconds / anchor_seconds : 0; }
};

struct CalibrationReport {
  std::string directory, machine, fingerprint;
  double peak_gflops_per_core = 0;
  int ok = 0, unimplemented = 0, failed = 0, skipped = 0;
  std::vector<std::string> failures;  // "descriptor pass: reason", a few
  std::vector<ClassThroughput> throughput;
  std::vector<LargestConvolution> largest_convolutions;
  std::vector<ThreadScaling> scaling;
  std::vector<Contention> contention;
  std::vector<Additivity> additivity;
  std::vector<AnchorAdditivity> anchor_additivity;
};

// Reads DIR/layers.jsonl, DIR/machine.json and DIR/network.jsonl when there. Of several records of one measurement the
// last
// that is not skipped counts.
Expected<CalibrationReport> make_calibration_report(const std::string& directory);

std::string report_text(const CalibrationReport& report);
std::string report_json_text(const CalibrationReport& report);

}  // namespace dnntune::calibrate
