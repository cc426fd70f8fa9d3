// model/communication.hpp — the time of gradient exchange, ASTRA-sim-style in two layers: a
// network layer (latency alpha and bandwidth beta of a link, intra-node shared memory or an
// inter-node fabric) and a collective layer built on it (hierarchical ring all-reduce,
// parameter server). Another fabric or collective drops in beside these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "records/measurement.hpp"

namespace dnntune::model {

struct LinkModel {
  double latency_seconds = 0;  // alpha: per message step
  double bandwidth_gbs = 0;    // beta: GB/s a rank sustains
  bool measured = false;       // fitted from records (else a preset or a default)
  std::string source;          // "fitted from 42 allreduce records", "preset edr", ...
};

// Inter-node fabrics by name: edr, hdr, ndr (InfiniBand), opa (Omni-Path 100), eth10, eth25,
// eth100, or one given as numbers, "25gbps-10us" (fabric_from_numbers). Bandwidth is 90% of
// the line rate, latency what MPI sees end to end.
Expected<LinkModel> fabric_preset(const std::string& name);
// The fabric's whole line rate in GB/s (its preset's bandwidth is 90% of it): what no link of that
// fabric exceeds, the ceiling of a link fitted from the user's jobs over it.
Expected<double> fabric_line_rate_gbs(const std::string& name);
std::vector<std::string> fabric_names();

// The name of a fabric of this line rate (Gb/s, finite and > 0) and MPI latency (microseconds,
// finite and >= 0), e.g. "0.2gbps-50us"; a bad number is an error naming it.
Expected<std::string> fabric_from_numbers(double line_rate_gbits, double latency_microseconds);
// A fabric given as numbers is a what-if: it replaces a measured inter-node link, a preset does not.
bool is_fabric_from_numbers(const std::string& name);

// The default intra-node link when no records exist: shared-memory MPI on a modern server.
LinkModel default_intra_node_link();

// Fits T = 2(p-1) alpha + 2(p-1)/p * bytes / beta (the ring all-reduce) to allreduce records
// of one placement (nodes == 1: intra-node; nodes > 1 with one rank per node: inter-node) by least squares on
// relative error. Fails when fewer than 2 distinct message sizes were measured.
Expected<LinkModel> fit_allreduce_link(const std::vector<records::Measurement>& records, bool inter_node);

struct CommunicationLinks {
  LinkModel intra_node;
  LinkModel inter_node;
};

// Hierarchical ring all-reduce of `bytes` over `ranks_per_node` x `nodes` ranks: a ring
// reduce-scatter + all-gather inside each node and a ring all-reduce across nodes (the design
// doc's 2(p-1)/p G/beta_intra + 2(N-1)/N G/beta_inter + latency terms).
double allreduce_seconds(double bytes, int ranks_per_node, int nodes, const CommunicationLinks& links);

// One synchronous parameter-server step: every worker pushes its gradients and pulls the new
// weights, `bytes` each way, spread over `servers` servers; each server's link carries the
// shards of all workers, so the busiest link decides.
double parameter_server_seconds(double bytes, int workers, int servers, int nodes, const CommunicationLinks& links);

}  // namespace dnntune::model
