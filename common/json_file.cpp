// common/json_file.cpp — see json_file.hpp.
#include "common/json_file.hpp"

#include <algorithm>
#include <cstdint>

#include "common/files.hpp"

namespace dnntune {
namespace {

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count),
// stopping early past `limit`: the parser recurses per level, so a file of 100,000 `[` would
// overflow the stack before it could be refused.
int nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char character : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (character == '\\')
        escaped = true;
      else if (character == '"')
        in_string = false;
    } else if (character == '"') {
      in_string = true;
    } else if (character == '[' || character == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if (character == ']' || character == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Expected<nlohmann::json> parse_json(const std::string& text, const std::string& origin) {
  if (nesting_depth(text, max_json_depth) > max_json_depth)
    return bad_input(origin + ": not valid JSON (nested deeper than " + std::to_string(max_json_depth) + " levels)");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    // Syntax errors, and numbers no double holds (1e999: out_of_range.406).
    std::string detail = error.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at ...": keep the useful part.
    if (!detail.empty() && detail.front() == '[') {
      const auto end = detail.find("] ");
      if (end != std::string::npos) detail = detail.substr(end + 2);
    }
    return bad_input(origin + ": not valid JSON (" + detail + ")");
  }
}

Error json_conversion_error(const nlohmann::json::exception& exception, const std::string& origin) {
  std::string detail = exception.what();
  // Drop nlohmann's "[json.exception.type_error.302] " prefix: users need the member and the problem.
  if (!detail.empty() && detail.front() == '[') {
    const auto end = detail.find("] ");
    if (end != std::string::npos) detail = detail.substr(end + 2);
  }
  return bad_input(origin + ": " + detail);
}

Expected<nlohmann::json> read_json_file(const std::string& path) {
  auto text = read_input_file(path);
  if (!text) return text.error();
  return parse_json(*text, path);
}

Expected<void> write_json_file(const std::string& path, const nlohmann::json& document, WrittenFile kind) {
  return write_file_atomically(path, document.dump(2) + "\n", kind);
}

nlohmann::json schema_head(const std::string& kind, int version) {
  return {{"schema", kind}, {"schema_version", version}};
}

Expected<void> check_schema(const nlohmann::json& document, const std::string& kind, int version,
                            const std::string& origin) {
  if (!document.is_object()) return bad_input(origin + ": expected a JSON object at the top level");
  const auto schema = document.find("schema");
  if (schema == document.end() || !schema->is_string())
    return bad_input(origin + ": not a dnntune file (no \"schema\" member; expected \"" + kind + "\")");
  if (*schema != kind)
    return bad_input(origin + ": is a \"" + schema->get<std::string>() + "\" file, expected \"" + kind + "\"");
  const auto found = document.find("schema_version");
  if (found == document.end() || !found->is_number_integer())
    return bad_input(origin + ": no integer \"schema_version\"");
  // Compared and reported as written: 2^40 is not "version 0".
  const bool same = found->is_number_unsigned() ? found->get<std::uint64_t>() == static_cast<std::uint64_t>(version)
                                                : found->get<std::int64_t>() == version;
  if (!same)
    return bad_input(origin + ": " + kind + " schema version " + found->dump() + ", this dnntune reads version " +
                     std::to_string(version) + " (re-create the file with this version)");
  return {};
}

}  // namespace dnntune
