// model/anchors.hpp — the anchors of a fit (Calibration::anchors): each network trained for real
// (kind network records: passes forward, backward, iteration; train/anchor.hpp) next to
// the sum of its layer passes as the fitted calibration predicts them, before any correction.
#pragma once

#include <vector>

#include "model/calibration.hpp"
#include "records/measurement.hpp"

namespace dnntune::model {

// The newest run of each network, batch and setting on one node among `records` of this
// calibration's machine and backend. A network dnntune cannot load by the recorded name (a
// network file since moved) is left out.
std::vector<Anchor> fit_anchors(const std::vector<records::Measurement>& records, const Calibration& calibration);

}  // namespace dnntune::model
