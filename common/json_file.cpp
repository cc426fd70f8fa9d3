// common/json_file.cpp — see json_file.hpp.
#include "common/json_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dnntune {

Expected<nlohmann::json> parse_json(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    std::string detail = error.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at ...": keep the useful part.
    const auto at = detail.find("parse error");
    if (at != std::string::npos) detail = detail.substr(at);
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
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad_input(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return bad_input(path + ": read error");
  return parse_json(text.str(), path);
}

Expected<void> write_json_file(const std::string& path, const nlohmann::json& document) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return failure(path + ": cannot write (" + std::strerror(errno) + ")");
    out << document.dump(2) << '\n';
    if (!out.flush()) return failure(path + ": write failed (" + std::strerror(errno) + ")");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return failure(path + ": cannot replace (" + std::strerror(errno) + ")");
  }
  return {};
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
  if (found->get<int>() != version)
    return bad_input(origin + ": " + kind + " schema version " + std::to_string(found->get<int>()) +
                     ", this dnntune reads version " + std::to_string(version) +
                     " (re-create the file with this version)");
  return {};
}

}  // namespace dnntune
