// model/job_fabric_fit.hpp — the communication terms of a fabric as the user's own multi-node
// jobs on it ran them (records kind job on 2 or more nodes, naming their fabric: the hook's
// DNNTUNE_FABRIC): the effective inter-node bandwidth and latency, and the nodes' step spread.
// Until such jobs exist the model knows a fabric only from its preset (90% of the line rate) or
// from calibrate --comm's one-rank-per-node sweep, neither of which is a whole job: buckets
// overlapping the backward pass, TCP's ramp-up after each ring step's wait, a rank's CPU share.
//
// What a job says about the fabric is its step over one node's: its excess. The one-node step is
// that of a one-node job of the same network, batch and layout (allocator included) when there is
// one, else the model's; the model then predicts the excess for a link (alpha, beta) as its
// prediction over the job's nodes less its prediction on one node, so that an error of the
// model's compute cancels. (alpha, beta) minimise the squared log-error of one-node step + excess
// against the jobs' steps over a log grid spanning what links can be (records/record_bounds.hpp),
// its best polished by Nelder-Mead; the latency is fitted only when the jobs span two node counts or settings (else
// it stays the fabric's: one excess cannot tell latency from bandwidth). The step spread is the
// median coefficient of variation of the jobs' steps (of the slowest rank, step by step). A fit
// reads a fabric's latest 16 jobs (in the order recorded).
//
// Refused, each with why, never fitted: a job naming no fabric or an unknown one, ranks' times
// that are not its processes x nodes, a step faster than its nodes' roofline, and a fit that
// lands on the edge of what a link can be (a multi-node job no slower than one node's).
#pragma once

#include <string>
#include <vector>

#include "model/predictor.hpp"
#include "records/measurement.hpp"

namespace dnntune::model {

struct FabricFit {
  std::string fabric;
  FabricTerms terms;
  std::vector<std::string> job_ids;  // the jobs behind it, in the order recorded
  // The log-rms error of the jobs' steps (one-node step + excess, as fitted) under the link the
  // model had for the fabric before (its preset or the calibration's sweep) and under the fit.
  double log_rms_before = 0, log_rms_after = 0;
};

struct FabricFits {
  std::vector<FabricFit> fits;          // one per fabric with a job that could be fitted
  std::vector<std::string> not_fitted;  // "job ID (...): why", and fabrics whose fit was refused
};

// The fits of `jobs` (the job records of the machine `predictor` models: the caller reads them by
// its fingerprint; one-node jobs serve as the one-node steps, other backends' and GPU jobs are
// passed over) under `predictor`.
FabricFits fit_fabrics_from_jobs(const Predictor& predictor, const std::vector<records::Measurement>& jobs);

// `predictor` with each fit's terms for its fabric (Predictor::set_fabric_terms).
Predictor with_fabric_fits(Predictor predictor, const FabricFits& fits);

}  // namespace dnntune::model
