// tests/probe_measurement_test.cpp — measurement records: JSON line round trip, keys, appending,
// and reading files cut short by an interrupted run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "records/measurement.hpp"
#include "records/measurement_v1.hpp"
#include "tests/cli_support.hpp"

using namespace dnntune;

namespace {

records::Measurement sample_layer_record() {
  records::Measurement m;
  m.kind = records::MeasurementKind::layer;
  m.backend = "onednn";
  m.backend_version = "oneDNN 2.6.3";
  m.machine_fingerprint = "0123456789abcdef";
  m.network = "resnet50";
  m.descriptor = "conv:ic64ih56iw56oc64kh3kw3sh1ph1";
  m.pass = "backward_data";
  m.batch = 16;
  m.threads = 2;
  m.processes = 2;
  m.cpu_sets = {{0}, {1}};
  m.median_seconds = 0.0125;
  m.coefficient_of_variation = 0.03;
  m.min_seconds = 0.012;
  m.max_seconds = 0.014;
  m.repetitions = 9;
  m.command = "dnntune calibrate --model resnet50 --batch 16";
  m.timestamp = "2026-11-29T22:54:28Z";
  return m;
}

}  // namespace

TEST_CASE("a measurement prints back identically") {
  const auto record = sample_layer_record();
  const std::string line = records::to_json_line(record);
  CHECK(line.find('\n') == std::string::npos);
  const auto read_back = records::measurement_from_json_line(line, "x");
  REQUIRE(read_back);
  CHECK(records::to_json_line(*read_back) == line);
  CHECK(records::measurement_key(*read_back) == records::measurement_key(record));
}

TEST_CASE("the key tells settings apart but not results") {
  const auto a = sample_layer_record();
  auto b = a;
  b.median_seconds = 1;
  b.timestamp = "later";
  CHECK(records::measurement_key(a) == records::measurement_key(b));
  b.threads = 1;
  CHECK(records::measurement_key(a) != records::measurement_key(b));
  auto c = a;
  c.smt = true;
  CHECK(records::measurement_key(a) != records::measurement_key(c));
}

TEST_CASE("precision and memory format are written only when not fp32 and contiguous, and tell keys apart") {
  const auto strict = sample_layer_record();
  const std::string strict_line = records::to_json_line(strict);
  CHECK(strict_line.find("\"precision\"") == std::string::npos);
  CHECK(strict_line.find("\"memory_format\"") == std::string::npos);
  auto mixed = strict;
  mixed.precision = "bf16";
  mixed.memory_format = "channels_last";
  const auto read_back = records::measurement_from_json_line(records::to_json_line(mixed), "x");
  REQUIRE(read_back);
  CHECK(read_back->precision == "bf16");
  CHECK(read_back->memory_format == "channels_last");
  const auto strict_back = records::measurement_from_json_line(strict_line, "x");
  REQUIRE(strict_back);
  CHECK(strict_back->precision == "fp32");
  CHECK(strict_back->memory_format == "contiguous");
  CHECK(records::measurement_key(mixed) != records::measurement_key(strict));
  auto tf32 = strict;
  tf32.precision = "tf32";
  CHECK(records::measurement_key(tf32) != records::measurement_key(strict));
}

TEST_CASE("a v1 training record says who trained it through its command, migrated into its trainer") {
  // Version 1 kept the runner only in the command; migration on read makes it the typed field.
  records::Measurement record;
  record.kind = records::MeasurementKind::network;
  record.command = "dnntune train --model resnet18 --batch 8 --threads 2";
  records::migrate_v1_record(record);
  CHECK(records::training_runner(record) == "dnntune");  // before --runner existed, and its default
  CHECK(records::trained_by_cpp_trainer(record));
  record.command = "dnntune train --model resnet18 --batch 8 --threads 2 --runner python --json";
  records::migrate_v1_record(record);
  CHECK(records::training_runner(record) == "python");
  CHECK_FALSE(records::trained_by_cpp_trainer(record));
  record.command = "dnntune train --model resnet18 --runner";  // cut short: the default, not an empty name
  records::migrate_v1_record(record);
  CHECK(records::training_runner(record) == "dnntune");
  CHECK(records::trained_by_cpp_trainer(record));
}

TEST_CASE("appended records survive an interrupted write") {
  const std::string path = test::make_temporary_directory() + "/records.jsonl";
  auto record = sample_layer_record();
  REQUIRE(records::append_measurement(path, record));
  record.pass = "forward";
  REQUIRE(records::append_measurement(path, record));
  {
    // A kill in the middle of the third write leaves half a line without its newline.
    std::ofstream out(path, std::ios::app);
    out << records::to_json_line(record).substr(0, 40);
  }
  const auto file = records::read_measurements(path);
  REQUIRE(file);
  CHECK(file->records.size() == 2);
  CHECK(file->truncated_lines == 1);
  CHECK(file->records[1].pass == "forward");
}

TEST_CASE("a resume reads the whole record file before it changes a byte, and cuts only a record cut short") {
  const std::string directory = test::make_temporary_directory();
  // Two lines of a user's notes without a final newline (validate --record notes.txt --resume):
  // refused, and the file left byte for byte as it was.
  const std::string notes = directory + "/notes.txt";
  test::write_file(notes, "first line\nsecond line");
  const auto refused = records::drop_unterminated_last_line(notes);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::bad_input);
  CHECK(refused.error().message.find(notes + ":1: ") == 0);
  CHECK(test::read_whole_file(notes) == "first line\nsecond line");
  CHECK_FALSE(records::check_record_file(notes));
  // One line of notes alone: not a record cut short either.
  test::write_file(notes, "remember the batch");
  CHECK_FALSE(records::drop_unterminated_last_line(notes));
  CHECK(test::read_whole_file(notes) == "remember the batch");

  // Records, then a last line without its newline that is no record: kept (said when read), and
  // a record appended after it starts a line of its own.
  const std::string records_path = directory + "/records.jsonl";
  const std::string record = records::to_json_line(sample_layer_record());
  test::write_file(records_path, record + "\nnote to self");
  REQUIRE(records::drop_unterminated_last_line(records_path));
  CHECK(test::read_whole_file(records_path) == record + "\nnote to self");
  REQUIRE(records::append_measurement(records_path, sample_layer_record()));
  auto read = records::read_measurements(records_path);
  REQUIRE(read);
  CHECK(read->records.size() == 2);
  CHECK(read->skipped_lines.size() == 1);

  // A record cut short by a kill is what is cut.
  test::write_file(records_path, record + "\n" + record.substr(0, 40));
  REQUIRE(records::drop_unterminated_last_line(records_path));
  CHECK(test::read_whole_file(records_path) == record + "\n");
  std::filesystem::remove_all(directory);
}

TEST_CASE("bad records are skipped and named by file and line, a file of only bad lines is an error") {
  const std::string path = test::make_temporary_directory() + "/bad.jsonl";
  std::ofstream(path) << records::to_json_line(sample_layer_record()) << "\n{\"not\": \"a record\"}\n"
                      << "not JSON\n"
                      << records::to_json_line(sample_layer_record()) << "\n";
  const auto file = records::read_measurements(path);
  REQUIRE(file);
  CHECK(file->records.size() == 2);  // the records around the bad lines are kept
  CHECK(file->truncated_lines == 0);
  REQUIRE(file->skipped_lines.size() == 2);
  CHECK(file->skipped_lines[0].find(path + ":2: ") == 0);
  CHECK(file->skipped_lines[1].find(path + ":3: ") == 0);

  const std::string only_bad = test::make_temporary_directory() + "/only_bad.jsonl";
  std::ofstream(only_bad) << "\n{\"not\": \"a record\"}\n";
  const auto refused = records::read_measurements(only_bad);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find(only_bad + ":2") == 0);

  auto failed = sample_layer_record();
  failed.status = records::MeasurementStatus::failed;
  failed.reason = "oneDNN: unimplemented";
  failed.median_seconds = 0;
  CHECK(records::measurement_from_json_line(records::to_json_line(failed), "f"));
  auto bad = sample_layer_record();
  bad.median_seconds = 0;  // an ok record without a time is corrupt
  CHECK_FALSE(records::measurement_from_json_line(records::to_json_line(bad), "f"));
  CHECK_FALSE(records::read_measurements("/nonexistent/records.jsonl"));
}

TEST_CASE("module records (layers timed inside a training step) round-trip, and bad ones are refused") {
  auto module = sample_layer_record();
  module.kind = records::MeasurementKind::module;
  module.pass = "forward";
  module.module = "layer1.0.conv1";
  const auto back = records::measurement_from_json_line(records::to_json_line(module), "m");
  REQUIRE(back);
  CHECK(back->kind == records::MeasurementKind::module);
  CHECK(back->module == "layer1.0.conv1");
  CHECK(records::to_json_line(*back) == records::to_json_line(module));
  // Two layers of one descriptor are two measurements; a micro-run of it is a third.
  auto other = module;
  other.module = "layer1.1.conv1";
  CHECK(records::measurement_key(other) != records::measurement_key(module));
  CHECK(records::measurement_key(sample_layer_record()) != records::measurement_key(module));
  // Layer records carry no module member, so files written before it read as before.
  CHECK(records::to_json_line(sample_layer_record()).find("\"module\"") == std::string::npos);

  const auto refused = [](const std::string& line) { return !records::measurement_from_json_line(line, "m"); };
  const std::string good = records::to_json_line(module);
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string line = good;
    line.replace(line.find(from), from.size(), to);
    return line;
  };
  CHECK(refused(replaced("\"module\":\"layer1.0.conv1\"", "\"module\":\"\"")));
  CHECK(refused(replaced("\"module\":\"layer1.0.conv1\"", "\"module\":\"tab\\there\"")));
  CHECK(refused(replaced("\"module\":\"layer1.0.conv1\"", "\"module\":\"a\\nb\"")));
  CHECK(refused(replaced("\"module\":\"layer1.0.conv1\"", "\"module\":7")));
  CHECK(refused(replaced("\"module\":\"layer1.0.conv1\"", "\"module\":\"" + std::string(5000, 'x') + "\"")));
  CHECK(refused(replaced(",\"module\":\"layer1.0.conv1\"", "")));
  CHECK(refused(replaced("\"pass\":\"forward\"", "\"pass\":\"backward_data\"")));
  CHECK(refused(replaced("\"network\":\"resnet50\"", "\"network\":\"\"")));
  CHECK(refused(replaced("\"kind\":\"module\"", "\"kind\":\"modules\"")));
  CHECK(refused(replaced("\"median_seconds\":0.0125", "\"median_seconds\":-1")));
  // Every cut of a good line is refused, never a crash (a truncated last line of a file).
  for (std::size_t length = 0; length < good.size(); ++length) CHECK(refused(good.substr(0, length)));
  CHECK_FALSE(refused(replaced("\"pass\":\"forward\"", "\"pass\":\"backward\"")));
  // A network file's layer names may hold spaces and UTF-8: what the trainer writes reads back.
  CHECK_FALSE(refused(replaced("\"module\":\"layer1.0.conv1\"", "\"module\":\"my block/conv 1 \u00e9\"")));
}

TEST_CASE("records outside physical bounds are refused, naming the line and the field") {
  const nlohmann::json good = nlohmann::json::parse(records::to_json_line(sample_layer_record()));
  REQUIRE(records::measurement_from_json_line(good.dump(), "f"));
  // fit took all of these, and a search then scored 1e9 threads or a layer of 1e300 seconds.
  const std::vector<std::tuple<const char*, nlohmann::json, const char*>> cases = {
      {"threads", 1000000000, "(threads) 1000000000 is outside 1..4096"},
      {"threads", -2, "threads"},
      {"processes", 2000000, "(processes) 2000000 is outside 1..1048576"},
      {"nodes", 1048577, "(nodes)"},
      {"batch", 0, "(batch) 0 is outside 1..65536"},
      {"batch", 65537, "(batch) 65537 is outside 1..65536"},
      {"median_seconds", 1e300, "(median_seconds) 1e+300 is outside 0..1e6 seconds"},
      {"max_seconds", -1, "(max_seconds)"},
      {"coefficient_of_variation", -0.5, "(coefficient_of_variation)"},
      {"repetitions", 0, "(repetitions) 0 is outside 1..2^30"},
      {"message_bytes", -8, "(message_bytes)"},
      {"cpu_sets", nlohmann::json::array({{-1}}), "(cpu_sets)"}};
  for (const auto& [field, value, message] : cases) {
    nlohmann::json bad = good;
    bad[field] = value;
    const auto refused = records::measurement_from_json_line(bad.dump(), "layers.jsonl:7");
    INFO(field << " = " << value.dump());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::bad_input);
    CHECK(refused.error().message.find("layers.jsonl:7: ") == 0);
    CHECK(refused.error().message.find(message) != std::string::npos);
  }
  // A record that was not timed may say so with zeros, and an exchange has no batch.
  nlohmann::json skipped = good;
  skipped["status"] = "skipped";
  skipped["batch"] = 0;
  skipped["median_seconds"] = 0;
  skipped["repetitions"] = 0;
  CHECK(records::measurement_from_json_line(skipped.dump(), "f"));
  nlohmann::json exchange = good;
  exchange["kind"] = "communication";
  exchange["batch"] = 0;
  exchange["message_bytes"] = 1 << 20;
  CHECK(records::measurement_from_json_line(exchange.dump(), "f"));
}
