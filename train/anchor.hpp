// train/anchor.hpp — the anchor of a calibration: the network trained for real for a few
// steps (`dnntune train ... --record DIR/network.jsonl`, with --launch for several processes; a
// process of its own, so it gets the binding and the malloc state a real job gets), so the fit
// can check the sum of the layer micro-runs against a real step of the same network, batch and
// setting. The records are kind network with passes iteration, forward, backward,
// exposed_communication and optimizer (training_report.hpp), and kind module: each layer's
// forward and backward inside the step (train/module_timer.hpp); pipeline/measurement_inputs.cpp
// reads DIR/network.jsonl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "records/measurement.hpp"

namespace dnntune::train {

constexpr const char* anchor_records_file = "network.jsonl";

struct AnchorRequest {
  std::string executable;  // the dnntune binary (its `train` command trains)
  std::string model;       // a built-in network or a network JSON file
  std::int64_t batch = 8;  // per process
  int threads = 1;         // per process
  int processes = 1;       // on this node
  // Steps before the timed ones: the first step allocates every activation afresh (page faults)
  // and picks kernels; the second already runs as the hundredth does.
  int warmup = 2;
  int iterations = 3;                 // timed steps
  double time_limit_seconds = 0;      // > 0: fewer timed steps when they would end past it (train --time-limit)
  std::string directory;              // the measurement directory: records go to DIR/network.jsonl
  std::string allocator = "default";  // every rank trains under it (probe/allocators.hpp)
  // Who trains (TrainOptions::runner): records::kPythonTrainer measures the step users run, without
  // layer times; the fit pools such a run with the C++ trainer's at the same setting only as the
  // third of three, and counts it in the band's spread always (model/anchors.hpp).
  std::string runner = records::kCppTrainer;
};

// The runs recorded in DIR/network.jsonl so far (none when there is no file yet); a last line an
// interrupted run left unterminated is dropped first, so the next run appends cleanly.
Expected<std::vector<records::Measurement>> read_anchor_records(const std::string& directory);

// Trains as `request` says and appends its records to DIR/network.jsonl. Fails when the job
// cannot start or fails (its exit code and command line say how).
Expected<void> run_anchor(const AnchorRequest& request);

}  // namespace dnntune::train
