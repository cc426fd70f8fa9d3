// common/json_file.hpp — reading and writing dnntune's versioned JSON files.
// Every file dnntune writes carries {"schema": KIND, "schema_version": N} at its top level so
// that a file of another kind or version is refused with a clear message instead of being
// half-read. Messages name the file: "FILE: not valid JSON (line 3, column 7: ...)".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace dnntune {

// Parses `text`; `origin` names where it came from (a path, "<built-in skylake-8180>").
Expected<nlohmann::json> parse_json(const std::string& text, const std::string& origin);

// Reads and parses a whole file.
Expected<nlohmann::json> read_json_file(const std::string& path);

// Writes `document` pretty-printed, atomically (temporary file + rename), so an interrupted
// write never leaves a truncated file behind.
Expected<void> write_json_file(const std::string& path, const nlohmann::json& document);

// Checks that `document` is an object of schema `kind` at exactly `version`.
Expected<void> check_schema(const nlohmann::json& document, const std::string& kind, int version,
                            const std::string& origin);

// Turns an exception thrown while converting a parsed document into a one-line bad_input that
// names the file and the member: "FILE: (/topology/packages) type must be number, but is string".
Error json_conversion_error(const nlohmann::json::exception& exception, const std::string& origin);

}  // namespace dnntune
