// model/stragglers.hpp — the slowest node sets a synchronous step. Each node's step varies from
// step to step (spread sigma: OS noise, frequency, memory); a barrier (the ring all-reduce, a
// synchronous parameter server) waits for the slowest of the N nodes, whose expected excess over
// the mean step is sigma * E[max of N standard normals], growing like sigma * sqrt(2 ln N). The
// spread is measured where it can be: the calibration's anchors (real training steps of a whole
// node) give it as a coefficient of variation. A spec node (data/machines) has no anchor: it takes
// the published spread of HPC nodes (spec_node_step_spread), with its range; a measured machine
// without anchors has no term, and the prediction says so.
#pragma once

#include <string>
#include <vector>

#include "model/calibration.hpp"

namespace dnntune::model {

struct StepSpread {
  double coefficient_of_variation = 0;  // of one node's step time; 0: not measured
  int anchors = 0;                      // how many anchors it rests on
  std::string source;                   // "2 anchors of resnet18 (2-3 timed steps)", "not measured: ..."
  // A prior's range (spec nodes); both equal to the value when measured.
  double coefficient_of_variation_low = 0, coefficient_of_variation_high = 0;
};

// The step spread of a spec node, from published measurements of HPC nodes (stragglers.cpp
// cites them): one node's step time against its peers', as a coefficient of variation.
StepSpread spec_node_step_spread();

// E[max of `count` independent standard normal draws], by Blom's approximation
// Phi^-1((n - 0.375) / (n + 0.25)) (within 0.03 of the exact value from 2 to 1024; sqrt(2 ln n)
// overstates it by 0.5 at 128). 0 for a count of 1 or less.
double expected_maximum_of_standard_normals(int count);

// The median coefficient of variation of the anchors of `network` with 2 or more timed steps, or
// when it has none, of every such anchor (the node's noise, whatever it trained).
StepSpread step_spread(const std::vector<Anchor>& anchors, const std::string& network);

// What waiting for the slowest of `nodes` adds to a synchronous step whose work takes
// `step_seconds` on one node with this spread: step * cv * E[max of nodes normals].
double straggler_seconds(double step_seconds, const StepSpread& spread, int nodes);

}  // namespace dnntune::model
