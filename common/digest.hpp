// common/digest.hpp — a short digest of bytes (FNV-1a, 64 bits) as 16 hexadecimal digits: which
// machine, network file or set of weights two things are, never a secret. One function for the
// machine fingerprint (records/), the cache's name of a network file (pipeline/) and the
// trainer's weight checksum (train/), fed a piece at a time where the bytes are not contiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace dnntune {

class Digest {
 public:
  Digest& add(const unsigned char* bytes, std::size_t size) {
    for (std::size_t index = 0; index < size; ++index) {
      hash_ ^= bytes[index];
      hash_ *= 1099511628211ull;  // the FNV-1a 64-bit prime
    }
    return *this;
  }
  Digest& add(std::string_view text) { return add(reinterpret_cast<const unsigned char*>(text.data()), text.size()); }
  std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
    return text;
  }

 private:
  std::uint64_t hash_ = 14695981039346656037ull;  // the FNV-1a 64-bit offset basis
};

inline std::string digest_hex(std::string_view text) { return Digest().add(text).hex(); }

}  // namespace dnntune
