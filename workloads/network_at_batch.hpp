// workloads/network_at_batch.hpp — a network at a batch per process, as a typed key: what a
// cached calibration covers. Its text form "resnet152@32" is what covered.json holds (a network
// file is named by a digest of its content, pipeline::covered_network_key; the batch is after the
// last '@').
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/parse_number.hpp"
#include "workloads/layer.hpp"

namespace dnntune::workloads {

struct NetworkAtBatch {
  std::string network;  // a zoo name, or a network file's key (pipeline::covered_network_key)
  std::int64_t batch = 1;

  std::string to_text() const { return network + "@" + std::to_string(batch); }
  // nullopt unless `text` is "NETWORK@BATCH" with a non-empty network and a batch of 1..max_batch.
  static std::optional<NetworkAtBatch> from_text(std::string_view text) {
    const auto at = text.rfind('@');
    if (at == std::string_view::npos || at == 0) return std::nullopt;
    const auto batch = parse_int64(text.substr(at + 1));
    if (!batch || *batch < 1 || *batch > max_batch) return std::nullopt;
    return NetworkAtBatch{std::string(text.substr(0, at)), *batch};
  }
  bool operator==(const NetworkAtBatch& other) const { return network == other.network && batch == other.batch; }
  bool operator!=(const NetworkAtBatch& other) const { return !(*this == other); }
};

}  // namespace dnntune::workloads
