// common/json_file.hpp — reading and writing dnntune's versioned JSON files.
// Every file dnntune writes carries {"schema": KIND, "schema_version": N} at its top level so
// that a file of another kind or version is refused with a clear message instead of being
// half-read. Messages name the file: "FILE: not valid JSON (line 3, column 7: ...)".
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "common/files.hpp"

namespace dnntune {

// Documents nested deeper than this are refused before parsing (the parser recurses per level).
constexpr int max_json_depth = 512;

// Parses `text`; `origin` names where it came from (a path, "<built-in skylake-8180>").
Expected<nlohmann::json> parse_json(const std::string& text, const std::string& origin);

// Reads and parses a whole file (a regular file of at most max_input_bytes, common/files.hpp).
Expected<nlohmann::json> read_json_file(const std::string& path);

// Writes `document` pretty-printed, atomically (write_file_atomically, common/files.hpp), so an
// interrupted write or a full disk never leaves a truncated file behind. `kind`: see WrittenFile.
Expected<void> write_json_file(const std::string& path, const nlohmann::json& document,
                               WrittenFile kind = WrittenFile::user_output);

// {"schema": kind, "schema_version": version}: the head of every document dnntune writes, its
// outputs included (the JSON contract: schemas/ describes each kind).
nlohmann::json schema_head(const std::string& kind, int version);

// Checks that `document` is an object of schema `kind` at exactly `version`.
Expected<void> check_schema(const nlohmann::json& document, const std::string& kind, int version,
                            const std::string& origin);

// Turns an exception thrown while converting a parsed document into a one-line bad_input that
// names the file and the member: "FILE: (/topology/packages) type must be number, but is string".
Error json_conversion_error(const nlohmann::json::exception& exception, const std::string& origin);

// Enums in files are words. `words` maps each member to its word; reading an unknown word throws
// a nlohmann exception naming the member and the known words (caught by json_conversion_error),
// never silently taking the first member.
template <class Enum, std::size_t N>
std::string enum_word(Enum value, const std::pair<Enum, const char*> (&words)[N]) {
  for (const auto& [member, text] : words)
    if (member == value) return text;
  return "?";
}

// An integer member as T: a JSON integer within T's range. nlohmann's get<int>() takes 56.5 as 56,
// 1e9 as 1000000000 and -1 as 18446744073709551615 for an unsigned: a count or a size written
// that way is a damaged or hand-edited file. Throws a type_error naming the member (caught by
// json_conversion_error).
template <class T>
T json_integer(const nlohmann::json& value) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  const bool in_range =
      value.is_number_unsigned()
          ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
          : value.is_number_integer() &&
                value.get<std::int64_t>() >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
                (std::is_unsigned_v<T> ||
                 value.get<std::int64_t>() <= static_cast<std::int64_t>(std::numeric_limits<T>::max()));
  if (!in_range)
    throw nlohmann::json::type_error::create(
        302,
        "must be an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
            std::to_string(std::numeric_limits<T>::max()) + ", not " + value.dump(),
        &value);
  return value.get<T>();
}

template <class Enum, std::size_t N>
Enum enum_from_word(const nlohmann::json& value, const std::pair<Enum, const char*> (&words)[N]) {
  const auto word = value.get<std::string>();
  for (const auto& [member, text] : words)
    if (word == text) return member;
  std::string known;
  for (const auto& pair : words) known += std::string(known.empty() ? "" : ", ") + pair.second;
  throw nlohmann::json::other_error::create(501, "unknown value \"" + word + "\" (known: " + known + ")", &value);
}

}  // namespace dnntune
