// tests/common_json_file_test.cpp — versioned JSON files: parse errors, schema checks, atomic
// writes.
#include <catch2/catch.hpp>

#include <fstream>

#include "common/json_file.hpp"
#include "tests/temporary_files.hpp"

using namespace dnntune;

TEST_CASE("parse errors name the origin") {
  const auto result = parse_json("{\"a\": ", "broken.json");
  REQUIRE_FALSE(result);
  CHECK(result.error().kind == ErrorKind::bad_input);
  CHECK(result.error().message.find("broken.json: not valid JSON (parse error") == 0);
}

TEST_CASE("schema checks") {
  const nlohmann::json good = {{"schema", "dnntune.thing"}, {"schema_version", 2}};
  CHECK(check_schema(good, "dnntune.thing", 2, "f"));
  CHECK_FALSE(check_schema(good, "dnntune.thing", 3, "f"));
  CHECK(check_schema(good, "dnntune.thing", 3, "f").error().message ==
        "f: dnntune.thing schema version 2, this dnntune reads version 3 (re-create the file with this version)");
  CHECK_FALSE(check_schema(good, "dnntune.other", 2, "f"));
  CHECK_FALSE(check_schema(nlohmann::json::array(), "dnntune.thing", 2, "f"));
  CHECK_FALSE(check_schema({{"schema_version", 2}}, "dnntune.thing", 2, "f"));
}

TEST_CASE("write then read a JSON file") {
  const std::string path = dnntune::test::temporary_directory("json-file-test") + "/written.json";
  const nlohmann::json document = {{"schema", "dnntune.thing"}, {"schema_version", 1}, {"values", {1, 2, 3}}};
  REQUIRE(write_json_file(path, document));
  const auto read_back = read_json_file(path);
  REQUIRE(read_back);
  CHECK(*read_back == document);
  CHECK_FALSE(std::ifstream(path + ".tmp").good());  // the temporary was renamed away
  CHECK_FALSE(read_json_file("/nonexistent/x.json"));
  CHECK_FALSE(write_json_file("/nonexistent/dir/x.json", document));
}

TEST_CASE("a JSON file that would crash the parser is bad input, not an abort") {
  const auto overflowing = parse_json("{\"value\": 1e999}", "big.json");
  REQUIRE_FALSE(overflowing);
  CHECK(overflowing.error().kind == ErrorKind::bad_input);
  CHECK(overflowing.error().message.find("big.json: not valid JSON") == 0);
  const auto deep = parse_json(std::string(100000, '['), "deep.json");
  REQUIRE_FALSE(deep);
  CHECK(deep.error().message.find("nested deeper than 512") != std::string::npos);
  // Brackets inside strings are text, not nesting.
  CHECK(parse_json("{\"text\": \"" + std::string(1000, '[') + "\"}", "text.json"));
  CHECK(parse_json(std::string(512, '[') + std::string(512, ']'), "ok.json"));
  const auto device = read_json_file("/dev/zero");
  REQUIRE_FALSE(device);
  CHECK(device.error().message == "/dev/zero: not a regular file");
}

TEST_CASE("a schema version is reported as written, never narrowed") {
  const nlohmann::json huge = {{"schema", "dnntune.thing"}, {"schema_version", 1099511627776}};
  const auto checked = check_schema(huge, "dnntune.thing", 2, "f");
  REQUIRE_FALSE(checked);
  CHECK(checked.error().message.find("schema version 1099511627776,") != std::string::npos);
  CHECK_FALSE(check_schema({{"schema", "dnntune.thing"}, {"schema_version", -2}}, "dnntune.thing", 2, "f"));
}
