// workloads/network_json.hpp — the network file: what `dnntune models show NAME --json` writes
// and what --model FILE reads, so a user-defined network is a file in the same format.
//
//   {"schema": "dnntune.network", "schema_version": 1, "name": "resnet50", "batch": 1,
//    "layers": [{"name": "conv1", "descriptor": "conv:ic3ih224iw224oc64kh7kw7sh2ph3",
//                "inputs": ["input"], ...derived fields...}, ...],
//    "distinct_layers": [...], "totals": {...}}
//
// Reading needs only "name" and, per layer, "name", "descriptor" (layer.hpp) and "inputs"
// (names of the layers it reads, in order; [] for the input layer), in any order. Everything
// else (kind, output shape, parameters, per-pass costs at "batch", totals) is written for
// readers and recomputed on load, never trusted.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "workloads/graph.hpp"

namespace dnntune::workloads {

inline constexpr const char* network_schema = "dnntune.network";
inline constexpr int network_schema_version = 1;

// The network with every layer's costs and the totals at `batch` (fails outside 1..max_batch).
Expected<nlohmann::json> network_to_json(const Network& network, std::int64_t batch);

// Reads a network document; `origin` (a path) prefixes every error message.
Expected<Network> network_from_json(const nlohmann::json& document, const std::string& origin);

// read_json_file + network_from_json.
Expected<Network> read_network_file(const std::string& path);

}  // namespace dnntune::workloads
