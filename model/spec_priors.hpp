// model/spec_priors.hpp — what a spec answer rests on. A reference calibration was fitted on one
// measured machine; carried to a spec machine (data/machines) some of its parameters say nothing
// about the target: the reference never ran enough threads to see contention at 28 cores, had no
// SMT siblings to measure their gain, left a parameter at a bound of its range, or (as every
// calibration) never measured what a node's threads cost together: fork-join barriers, whole work
// items, memory on another package. Those parameters get priors grounded in the target's spec
// sheet (vector width, SMT, packages) and in published measurements, each with its source, and
// their range enters the bootstrap replicates, so the band (and the paired comparisons of the
// tuner) carry what is not known.
//
// The rules live in one table (spec_prior_rules); this file never edits the fitted parameters'
// layout: it uses the names of model/parameters.hpp.
#pragma once

#include <string>
#include <vector>

#include "model/calibration.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::model {

// One rule applied to a group of parameters (e.g. smt_gain of the compute-bound classes).
struct AppliedPrior {
  std::string field;                    // "smt_gain", "contention", ..., "work_item_channels"
  std::vector<std::string> parameters;  // the full names it set ("conv_spatial.smt_gain", ...)
  double value = 0;                     // what the answer uses
  double low = 0, high = 0;             // the range the replicates draw from
  std::string why_unidentified;         // what the reference could not measure
  std::string source;                   // where the value comes from
};

struct SpecPriors {
  Calibration calibration;  // the reference with the priors applied and drawn
  std::vector<AppliedPrior> applied;
  // The reference with the priors applied but not drawn: its band is what the identified
  // parameters alone leave (the difference is what the unidentified ones cause).
  Calibration calibration_without_prior_spread;
};

// `reference` with the spec priors of `target` applied. Replicates: each of the reference's
// bootstrap replicates draws every applied group at a stratified quantile of its range (one
// draw shared by the group's parameters), deterministic, so two runs answer alike.
SpecPriors apply_spec_priors(const Calibration& reference, const records::MachineProfile& target);

}  // namespace dnntune::model
