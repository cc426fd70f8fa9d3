// calibrate/module_report.hpp — `dnntune calibrate --report DIR --modules`: the micro-runs set
// against the network they were taken from. For each anchor run that timed its modules
// (DIR/network.jsonl, kind module; train/module_timer.hpp) and each pass (forward; backward =
// backward-data + backward-weights), three sums of the same network, batch, setting and allocator
// (micro-runs of `calibrate --allocator NAME` against steps of `train --allocator NAME`):
//   * isolated: the raw micro-runs of DIR/layers.jsonl of every layer pass the network runs, as
//     measured (the number measured, and those missing, left out of the sum: not modelled here);
//   * in-network: the layers' own times inside the real step (the median over steps of their
//     per-step sum when the run recorded it, else the sum of each layer's median);
//   * step: the trained step's pass (its median);
// and their ratios, then the modules whose isolated and in-network times disagree most (by the
// absolute difference: what they move in the sum). Text, or JSON ("dnntune.module-report" v1,
// schemas/module-report.schema.json).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::calibrate {

struct ModulePassSums {
  std::string network, backend;
  std::string allocator;  // what both the micro-runs and the step ran under
  std::int64_t batch = 0;
  int threads = 1, processes = 1;
  bool smt = false;
  std::string pass;               // "forward" or "backward"
  double isolated_seconds = 0;    // the sum of the measured micro-runs
  int measured_passes = 0;        // layer passes behind it
  int missing_passes = 0;         // layer passes the network runs that no micro-run measured
  double in_network_seconds = 0;  // the sum of the modules' medians inside the step
  int modules = 0;
  double step_seconds = 0;  // the trained step's pass (0 when not recorded)
};

struct ModuleDisagreement {
  std::string network, module, descriptor, pass, allocator;
  std::int64_t batch = 0;
  int threads = 1, processes = 1;
  double isolated_seconds = 0, in_network_seconds = 0;
};

struct ModuleReport {
  std::string directory;
  std::vector<ModulePassSums> passes;
  std::vector<ModuleDisagreement> worst;  // the largest |isolated - in-network| first
};

// Reads DIR/layers.jsonl (may be absent: nothing isolated) and DIR/network.jsonl (needed). Of
// several records of one measurement the last counts.
Expected<ModuleReport> make_module_report(const std::string& directory, int worst_count = 10);

std::string module_report_text(const ModuleReport& report);
std::string module_report_json_text(const ModuleReport& report);

}  // namespace dnntune::calibrate
