// model/gpu_communication.cpp — see gpu_communication.hpp.
#include "model/gpu_communication.hpp"

#include <algorithm>
#include <cmath>

namespace dnntune::model {

double ring_allreduce_seconds(double bytes, int ranks, const LinkModel& link) {
  if (ranks <= 1 || bytes <= 0) return 0;
  return 2.0 * (ranks - 1) * link.latency_seconds + 2.0 * (ranks - 1) / ranks * bytes / (link.bandwidth_gbs * 1e9);
}

double tree_allreduce_seconds(double bytes, int ranks, const LinkModel& link) {
  if (ranks <= 1 || bytes <= 0) return 0;
  return 2.0 * std::ceil(std::log2(static_cast<double>(ranks))) * link.latency_seconds +
         2.0 * bytes / (link.bandwidth_gbs * 1e9);
}

namespace {

GpuAllReduce faster_of_ring_and_tree(double bytes, int ranks, const LinkModel& link) {
  const double ring = ring_allreduce_seconds(bytes, ranks, link);
  const double tree = tree_allreduce_seconds(bytes, ranks, link);
  return tree < ring ? GpuAllReduce{tree, "tree"} : GpuAllReduce{ring, "ring"};
}

}  // namespace

GpuAllReduce gpu_allreduce(double bytes, int gpus_per_node, int nodes, const LinkModel& intra, const LinkModel& fabric,
                           int fabric_links) {
  if (bytes <= 0 || gpus_per_node * nodes <= 1) return {0, "none"};
  if (nodes == 1) return faster_of_ring_and_tree(bytes, gpus_per_node, intra);
  // Reduce-scatter and all-gather inside the node: each half of a ring all-reduce.
  const double in_node = ring_allreduce_seconds(bytes, gpus_per_node, intra);
  // Each GPU's shard crosses the fabric at once: the node's ports are shared among its GPUs.
  LinkModel per_gpu_fabric = fabric;
  per_gpu_fabric.bandwidth_gbs = fabric.bandwidth_gbs * std::min(gpus_per_node, fabric_links) / gpus_per_node;
  const GpuAllReduce across = faster_of_ring_and_tree(bytes / gpus_per_node, nodes, per_gpu_fabric);
  if (gpus_per_node == 1) return {across.seconds, across.algorithm + " across nodes"};
  return {in_node + across.seconds, "ring in node + " + across.algorithm + " across nodes"};
}

}  // namespace dnntune::model
