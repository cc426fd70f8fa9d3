// tuner/comparison.hpp — the CPU-versus-GPU answer: each machine's best configuration for one
// node (CPU) or for the chosen number of GPUs, side by side, and how many times faster each is
// than the first, with the ratio's band (the ratio of the bands' opposite ends).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dnntune::tuner {

struct ComparedMachine {
  std::string machine;        // "skylake-8180", "v100"
  std::string kind;           // "cpu-node" or "gpu"
  std::string configuration;  // the best one found, in words
  double images_per_second = 0;
  double low = 0, high = 0;  // 90% band
  std::string source;        // where its efficiencies come from
};

struct Comparison {
  std::string network;
  std::vector<ComparedMachine> machines;  // in the order asked
};

struct Ratio {
  double value = 1, low = 1, high = 1;  // machine's images/s over the first's
  // The first machine itself, or the same profile at the same configuration again: one prediction
  // twice, not two independent draws, so the ratio is exactly 1 and has no band.
  bool same_machine = false;
};
Ratio ratio_to_first(const Comparison& comparison, std::size_t index);

std::string comparison_text(const Comparison& comparison);
// With its "schema" head (dnntune.comparison).
nlohmann::json comparison_json(const Comparison& comparison);

}  // namespace dnntune::tuner
