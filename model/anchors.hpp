// model/anchors.hpp — the anchors of a fit (Calibration::anchors): each network trained for real
// (kind network records: passes forward, backward, iteration; train/anchor.hpp) next to
// the sum of its layer passes as the fitted calibration predicts them, before any correction.
#pragma once

#include <vector>

#include "model/calibration.hpp"
#include "records/measurement.hpp"
#include "workloads/graph.hpp"

namespace dnntune::model {

// The network a run trained: the --model of its reproducing command (a network file's path; a
// built-in's name), else the recorded name. Paths dnntune quotes (spaces) are not unquoted.
Expected<workloads::Network> trained_network(const records::Measurement& record);

// The newest run of each network, batch and setting on one node among `records` of this
// calibration's machine and backend, trained under the default allocator. A network dnntune
// cannot load by the recorded name (a network file since moved) is left out.
std::vector<Anchor> fit_anchors(const std::vector<records::Measurement>& records, const Calibration& calibration);

}  // namespace dnntune::model
