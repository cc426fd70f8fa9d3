// model/gpu_communication.hpp — gradient all-reduce between GPUs as NCCL does it: a ring or a
// (double binary) tree over NVLink / NVSwitch / PCIe inside a node, hierarchical across nodes
// (reduce-scatter inside the node, an all-reduce of each GPU's shard over the fabric, all-gather
// inside the node), and overlapped with the backward pass the way PyTorch DDP's buckets are:
// a bucket is reduced once the backward has produced all its gradients, one bucket at a time.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "model/communication.hpp"

namespace dnntune::model {

// Ring: 2(p-1) steps of latency, 2(p-1)/p of the bytes over the link.
double ring_allreduce_seconds(double bytes, int ranks, const LinkModel& link);
// Double binary tree (NCCL >= 2.4): 2 ceil(log2 p) steps of latency, every rank sends and
// receives the whole message twice (once per tree direction, half of it in each tree).
double tree_allreduce_seconds(double bytes, int ranks, const LinkModel& link);

struct GpuAllReduce {
  double seconds = 0;
  std::string algorithm;  // "none", "ring", "tree", "ring in node + ring across nodes", ...
};

// All-reduce of `bytes` over `gpus_per_node` GPUs on each of `nodes` nodes. Inside a node the
// GPUs talk over `intra`; across nodes each GPU's shard goes over the fabric, the node's GPUs
// sharing its `fabric_links` ports. NCCL's choice between ring and tree is the faster of the two.
GpuAllReduce gpu_allreduce(double bytes, int gpus_per_node, int nodes, const LinkModel& intra, const LinkModel& fabric,
                           int fabric_links);

// One layer's share of the backward pass, in the order the backward runs (last layer first).
struct BackwardStep {
  double seconds = 0;         // its backward passes
  double gradient_bytes = 0;  // the gradients it produces
};

struct BackwardOverlap {
  double communication_seconds = 0;  // all buckets' all-reduces together
  double exposed_seconds = 0;        // what finishes after the backward pass
  int buckets = 0;
};

// Buckets fill in backward order; a bucket closes when it holds `fusion_bytes` (or at the end)
// and its all-reduce starts when it has closed and the previous one has finished.
template <class AllReduceSeconds>
BackwardOverlap overlap_with_backward(const std::vector<BackwardStep>& steps, double fusion_bytes,
                                      const AllReduceSeconds& allreduce_seconds) {
  BackwardOverlap overlap;
  double clock = 0, bucket_bytes = 0, link_free_at = 0;
  const auto send_bucket = [&] {
    const double seconds = allreduce_seconds(bucket_bytes);
    link_free_at = std::max(link_free_at, clock) + seconds;
    overlap.communication_seconds += seconds;
    ++overlap.buckets;
    bucket_bytes = 0;
  };
  for (const BackwardStep& step : steps) {
    clock += step.seconds;
    bucket_bytes += step.gradient_bytes;
    if (bucket_bytes > 0 && bucket_bytes >= fusion_bytes) send_bucket();
  }
  if (bucket_bytes > 0) send_bucket();
  overlap.exposed_seconds = std::max(0.0, link_free_at - clock);
  return overlap;
}

}  // namespace dnntune::model
