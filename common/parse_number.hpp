// common/parse_number.hpp — numbers read from text (command lines, keys in files) without
// exceptions: the whole text must be the number, else there is none.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace dnntune {

// A decimal integer ("42", "-7"): no sign "+", no spaces, no trailing characters, in range of
// int64; std::nullopt otherwise ("resnet18@abc" -> none, "12abc" -> none, "1e3" -> none).
inline std::optional<std::int64_t> parse_int64(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace dnntune
