// tests/cli_input_test.cpp — end-to-end: bad input of every kind the command takes is refused at
// the boundary with one line `dnntune: error: ...` and exit 2, before anything is read,
// calibrated or written; no prediction that is not finite and positive is printed.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"
#include "tests/model_fixtures.hpp"

using dnntune::test::CommandResult;
using dnntune::test::FakeSinfo;
using dnntune::test::run_dnntune;
using dnntune::test::source_path;
using nlohmann::json;

namespace {

std::string reference_calibration() { return source_path("data/reference_calibrations/torch.json"); }

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::string write_json(const std::string& directory, const std::string& name, const json& document) {
  const std::string path = directory + "/" + name;
  std::ofstream(path) << document.dump(1);
  return path;
}

bool is_empty_directory(const std::string& path) {
  DIR* listing = opendir(path.c_str());
  if (!listing) return false;
  int entries = 0;
  while (const dirent* entry = readdir(listing))
    if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") ++entries;
  closedir(listing);
  return entries == 0;
}

// Exit 2 with one line on stderr, "dnntune: error: ..." holding `text`.
void check_refused(const std::vector<std::string>& args, const std::string& text) {
  const CommandResult result = run_dnntune(args);
  std::string command;
  for (const auto& arg : args) command += arg + " ";
  INFO(command << "\n" << result.err);
  CHECK(result.exit_code == 2);
  CHECK(result.err.rfind("dnntune: error: ", 0) == 0);
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  CHECK(result.err.find(text) != std::string::npos);
  CHECK(result.out.empty());
}

}  // namespace

TEST_CASE("numbers out of range are refused when parsed, before the cached calibration is touched") {
  const std::string cache = dnntune::test::make_temporary_directory();
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  check_refused({"predict", "--model", "resnet18", "--network", "ib"}, "\"ib\" is not a network preset (edr, hdr");
  check_refused({"scale", "--model", "resnet18", "--network", "ib"}, "edr, hdr");
  check_refused({"recommend", "--model", "resnet18", "--network", "ib"}, "edr, hdr");
  check_refused({"predict", "--model", "resnet18", "--batch", "70000"}, "--batch: Value 70000 not in range 1 to 65536");
  check_refused({"scale", "--model", "resnet18", "--batch", "0"}, "not in range 1 to 65536");
  check_refused({"recommend", "--model", "resnet18", "--batch", "8,70000"},
                "--batch: Value 70000 not in range 1 to 65536");
  check_refused({"recommend", "--model", "resnet18", "--global-batch", "99999999"}, "at most 65536");
  check_refused({"recommend", "--model", "resnet18", "--epochs", "-1"},
                "--epochs: Value -1 not in range 0 (excluded) to 1000000");
  check_refused({"recommend", "--model", "resnet18", "--epochs", "nan"}, "Value nan is not a number");
  check_refused({"recommend", "--model", "resnet18", "--epochs", "1e308"},
                "Value 1e308 not in range 0 (excluded) to 1000000");
  check_refused({"recommend", "--model", "resnet18", "--dataset-images", "-5"}, "Value -5 not in range 1 to 1e+12");
  check_refused({"recommend", "--model", "resnet18", "--fusion-mb", "nan"}, "--fusion-mb: Value nan is not a number");
  check_refused({"predict", "--model", "resnet18", "--fusion-mb", "nan"}, "--fusion-mb: Value nan is not a number");
  check_refused({"predict", "--model", "resnet18", "--ppn", "0"}, "--ppn: Value 0 not in range 1 to 4096");
  check_refused({"predict", "--model", "resnet18", "--nodes", "1.5"}, "--nodes: Value 1.5 is not an integer");
  for (const char* batch : {"0", "-3", "70000"}) check_refused({"validate", "--batch", batch}, "--batch: ");
  check_refused({"train", "--model", "resnet18", "--threads", "0"}, "--threads: Value 0 not in range 1 to 4096");
  check_refused({"train", "--model", "resnet18", "--batch", "70000"}, "--batch must be at most 65536, not 70000");
  check_refused({"train", "--model", "resnet18", "--lr", "inf"}, "--lr: Value inf not in range");
  check_refused({"calibrate", "--model", "resnet18", "--budget", "0.5"},
                "--budget: Value 0.5 not in range 10 to 10000000");
  CHECK(is_empty_directory(cache));
  unsetenv("DNNTUNE_CACHE_DIR");
}

TEST_CASE("the command line's own errors are one line, and --help and --version still exit 0") {
  check_refused({"predict"}, "--model is required (see `dnntune predict --help`)");
  check_refused({"predict", "--model", "resnet18", "--no-such-option"}, "--no-such-option");
  check_refused({"no-such-command"}, "(see `dnntune --help`)");
  const auto help = run_dnntune({"predict", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--batch") != std::string::npos);
  CHECK(run_dnntune({"--version"}).exit_code == 0);
}

TEST_CASE("calibrations and machine profiles with unphysical values are refused, naming the member") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::vector<std::string> configuration = {"--model", "resnet18", "--ppn", "1", "--threads", "1"};
  const auto predict = [&](const std::string& calibration) {
    std::vector<std::string> args = {"predict", "--calibration", calibration};
    args.insert(args.end(), configuration.begin(), configuration.end());
    return args;
  };
  const CommandResult good = run_dnntune(predict(reference_calibration()));
  INFO(good.err);
  REQUIRE(good.exit_code == 0);

  json calibration = read_json(reference_calibration());
  calibration["parameters"]["conv_spatial.efficiency.forward"] = -0.5;
  check_refused(predict(write_json(directory, "negative.json", calibration)),
                "(/parameters/conv_spatial.efficiency.forward) -0.5 is outside the model's bounds");
  calibration = read_json(reference_calibration());
  calibration["links"]["intra_node"]["bandwidth_gbs"] = 0;
  check_refused(predict(write_json(directory, "link.json", calibration)), "(/links/intra_node/bandwidth_gbs)");
  calibration = read_json(reference_calibration());
  calibration["machine"]["performance"]["peak_fp32_gflops_per_core"]["value"] = 0;
  check_refused(predict(write_json(directory, "peak.json", calibration)),
                "(/performance/peak_fp32_gflops_per_core/value) must be a finite number > 0");
  calibration = read_json(reference_calibration());
  calibration["schema_version"] = 1099511627776;
  check_refused(predict(write_json(directory, "version.json", calibration)), "schema version 1099511627776,");

  json machine = calibration["machine"];
  machine["performance"]["memory_bandwidth_gbs_per_package"]["value"] = -12;
  const std::string profile = write_json(directory, "machine.json", machine);
  check_refused({"probe", "--machine", profile}, "machine.json: (/performance/memory_bandwidth_gbs_per_package/value)");
  std::vector<std::string> spec = predict(reference_calibration());
  spec.insert(spec.end(), {"--machine", profile});
  check_refused(spec, "memory_bandwidth_gbs_per_package");
  const std::string records = directory + "/layers.jsonl";
  std::ofstream out(records);
  for (const auto& record : dnntune::test::synthetic_records(dnntune::test::test_machine(), 0.02, 11))
    out << dnntune::records::to_json_line(record) << "\n";
  out.close();
  check_refused({"fit", records, "--machine", profile}, "memory_bandwidth_gbs_per_package");
  check_refused({"predict", "--calibration", "/dev/zero", "--model", "resnet18"}, "/dev/zero: not a regular file");
}

TEST_CASE("a network name cannot inject lines into a job script, and job names are a safe word") {
  const std::string directory = dnntune::test::make_temporary_directory();
  json network = read_json(source_path("tests/fixtures/tiny_network.json"));
  network["name"] = "tiny\nsrun rm -rf /";
  const std::string injected = write_json(directory, "injected.json", network);
  check_refused({"models", "show", injected}, "control characters");
  check_refused({"recommend", "--model", injected, "--calibration", reference_calibration(), "--format", "slurm"},
                "control characters");
  network["name"] = "tiny $(reboot) 'x'";
  const std::string odd = write_json(directory, "odd.json", network);
  const CommandResult script =
      run_dnntune({"recommend", "--model", odd, "--calibration", reference_calibration(), "--format", "slurm"});
  INFO(script.err);
  REQUIRE(script.exit_code == 0);
  CHECK(script.out.find("#SBATCH --job-name=dnntune-tiny___reboot___x_\n") != std::string::npos);
}

TEST_CASE("outputs: a missing folder is bad input, found before any work") {
  check_refused({"fit", source_path("tests/fixtures"), "-o", "/nonexistent/x"}, "no folder /nonexistent");
  check_refused({"models", "show", "resnet18", "-o", "/nonexistent/x"}, "no folder /nonexistent");
  const std::string directory = dnntune::test::make_temporary_directory();
  check_refused({"models", "show", "resnet18", "-o", directory}, "is a folder");

  // calibrate --report DIR -o FILE: the summary goes to FILE.
  write_json(directory, "machine.json", read_json(reference_calibration())["machine"]);
  std::ofstream(directory + "/layers.jsonl").close();
  const CommandResult report = run_dnntune({"calibrate", "--report", directory, "-o", directory + "/summary.txt"});
  INFO(report.err);
  CHECK(report.exit_code == 0);
  CHECK(report.out.empty());
  std::ifstream summary(directory + "/summary.txt");
  std::string first_line;
  std::getline(summary, first_line);
  CHECK(first_line.rfind("Calibration " + directory, 0) == 0);
}

TEST_CASE("train stops when the loss becomes NaN, and never writes null for a number") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const CommandResult result =
      run_dnntune({"train", "--model", source_path("tests/fixtures/tiny_network.json"), "--lr", "1e12", "--batch", "4",
                   "--iters", "5", "--warmup", "1", "--threads", "1", "--json", "-o", directory + "/report.json"});
  INFO(result.err);
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("the loss became NaN (or infinite) at step ") != std::string::npos);
  CHECK(result.err.find(": lower --lr") != std::string::npos);
  CHECK(is_empty_directory(directory));
}

// Issue 42: one number grammar for every option (common/number_grammar.hpp).
TEST_CASE("every option reads numbers by the one grammar: decimal, exponent when whole, no hex, sign or spaces") {
  const std::string cache = dnntune::test::make_temporary_directory();
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  const std::string calibration = reference_calibration();
  for (const char* bad : {"0x10", "+8", " 8", "8 ", "", "8.", ".5", "inf"}) {
    check_refused({"predict", "--model", "resnet18", "--calibration", calibration, "--batch", bad}, "--batch: ");
    check_refused({"predict", "--model", "resnet18", "--calibration", calibration, "--nodes", bad}, "--nodes: ");
    check_refused({"scale", "--model", "resnet18", "--calibration", calibration, "--nodes", bad}, "--nodes: ");
    check_refused({"recommend", "--model", "resnet18", "--calibration", calibration, "--batch", bad}, "--batch: ");
    check_refused({"recommend", "--model", "resnet18", "--calibration", calibration, "--nodes", bad}, "--nodes: ");
  }
  // Trailing and empty list items, and ranges that cannot double.
  for (const char* bad : {"8,", ",8", "8,,16"}) {
    check_refused({"recommend", "--model", "resnet18", "--calibration", calibration, "--batch", bad}, "empty item");
    check_refused({"recommend", "--model", "resnet18", "--calibration", calibration, "--nodes", bad}, "empty item");
    check_refused({"compare", "--model", "resnet18", "--machine", "v100", "--machine", "a100", "--batch", bad},
                  "empty item");
  }
  check_refused({"recommend", "--model", "resnet18", "--calibration", calibration, "--nodes", "8..1"},
                "runs backwards");
  // 08 is 8 and 1e1 is 10, as written in decimal.
  const auto show = [](const std::string& batch) {
    return run_dnntune({"models", "show", "resnet18", "--json", "--batch", batch}).out;
  };
  CHECK(!show("8").empty());
  CHECK(show("08") == show("8"));
  CHECK(show("1e1") == show("10"));
  check_refused({"models", "show", "resnet18", "--batch", "1.5e0"}, "is not an integer");
  // --dataset-images says "to 1e+12": 1e12 is taken.
  const CommandResult images = run_dnntune({"recommend", "--model", "resnet18", "--calibration", calibration,
                                            "--objective", "time-to-train", "--dataset-images", "1e12", "--json"});
  INFO(images.err);
  CHECK(images.exit_code == 0);
  CHECK(is_empty_directory(cache));
  unsetenv("DNNTUNE_CACHE_DIR");
}

TEST_CASE("more processes than cores says how many fit, never that 0 threads would") {
  const CommandResult result = run_dnntune(
      {"predict", "--model", "resnet18", "--calibration", reference_calibration(), "--ppn", "4096", "--threads", "1"});
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("0 threads per process") == std::string::npos);
  CHECK(result.err.find("processes of 1 thread fit") != std::string::npos);
}

TEST_CASE("SLURM's --time takes its formats with fields in range and more than zero, and nothing else") {
  const std::vector<std::string> slurm = {"recommend", "--model", "resnet18", "--calibration", reference_calibration(),
                                          "--format",  "slurm",   "--time"};
  for (const char* bad : {"99:99:99", "1-24:00:00", "00:00:00", "0", "1-00:60", "10:60", "1:2:3:4", "5-"}) {
    std::vector<std::string> args = slurm;
    args.push_back(bad);
    check_refused(args, "expected MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
  }
  for (const std::string good : {"90", "10:30", "23:59:59", "1-12", "2-06:30", "1-00:00:00"}) {
    std::vector<std::string> args = slurm;
    args.push_back(good);
    const CommandResult script = run_dnntune(args);
    INFO(good << "\n" << script.err);
    CHECK(script.exit_code == 0);
    CHECK(script.out.find("#SBATCH --time=" + good + "\n") != std::string::npos);
  }
}

TEST_CASE("control characters in arguments are refused at the boundary, and never reach the terminal raw") {
  const std::string calibration = reference_calibration();
  for (const std::string& bad : {std::string("debug\x1b[31m"), std::string("debug\nsrun rm"), std::string("a\tb")}) {
    check_refused({"recommend", "--model", "resnet18", "--calibration", calibration, "--partition", bad},
                  "holds a control character");
    check_refused({"predict", "--model", "resnet18", "--machine", bad}, "holds a control character");
    const CommandResult result = run_dnntune({"recommend", "--model", "resnet18", "--account", bad});
    CHECK(result.err.find('\x1b') == std::string::npos);
    CHECK(result.err.find('\t') == std::string::npos);
  }
}

TEST_CASE("lists have a stated maximum length, refused at once") {
  const auto list = [](int count) {
    std::string text;
    for (int value = 1; value <= count; ++value) text += (value > 1 ? "," : "") + std::to_string(value);
    return text;
  };
  const std::vector<std::string> recommend = {"recommend", "--model", "resnet18", "--machine", "skylake-8180"};
  const auto refused_fast = [&](const std::string& option, const std::string& values, const std::string& limit) {
    std::vector<std::string> args = recommend;
    args.insert(args.end(), {option, values});
    const auto start = std::chrono::steady_clock::now();
    check_refused(args, limit);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  };
  refused_fast("--nodes", list(10000), "--nodes: more than 32 values");
  refused_fast("--batch", list(200), "--batch: more than 16 values");
  refused_fast("--fusion-mb", list(300), "--fusion-mb: more than 16 values");
  refused_fast("--ppn", list(33), "--ppn: more than 32 values");
  check_refused({"scale", "--model", "resnet18", "--machine", "skylake-8180", "--nodes", list(33)}, "at most 32");
  // The limit is after ranges are expanded: 1..2^20 is 21 counts, well within it.
  const CommandResult range =
      run_dnntune({"scale", "--model", "resnet18", "--machine", "skylake-8180", "--nodes", "1..1048576", "--json"});
  INFO(range.err);
  CHECK(range.exit_code == 0);
}

// Issue 39: an option several commands take is one row, with one list syntax: calibrate's names
// and numbers take comma lists and ranges as recommend's do, and a repeated option is that list.
TEST_CASE("calibrate and compare take comma lists as recommend does, a repeated option is the same list") {
  const std::string directory = dnntune::test::make_temporary_directory() + "/calibration";
  const auto listed = run_dnntune({"calibrate", "--model", "resnet18,resnet50", "--batch", "8..16", "--threads", "1,2",
                                   "--backend", "torch", "--dry-run", "-o", directory});
  INFO(listed.err);
  REQUIRE(listed.exit_code == 0);
  const auto repeated =
      run_dnntune({"calibrate", "--model", "resnet18", "--model", "resnet50", "--batch", "8", "--batch", "16",
                   "--threads", "1", "--threads", "2", "--backend", "torch", "--dry-run", "-o", directory});
  REQUIRE(repeated.exit_code == 0);
  CHECK(listed.out == repeated.out);
  CHECK(listed.out.find("resnet18 (") != std::string::npos);
  CHECK(listed.out.find("resnet50 (") != std::string::npos);
  CHECK(listed.out.find("batch per process: 8, 16") != std::string::npos);
  CHECK(listed.out.find("1 thread, 2 threads") != std::string::npos);
  check_refused({"calibrate", "--model", "resnet18,", "--dry-run", "-o", directory},
                "--model: \"resnet18,\" has an empty item");
  check_refused({"calibrate", "--model", "resnet18", "--threads", "1,0", "--dry-run", "-o", directory}, "--threads");
  const auto compared = run_dnntune({"compare", "--model", "resnet18", "--machine", "skylake-8180,v100", "--json"});
  INFO(compared.err);
  CHECK(compared.exit_code == 0);
}

TEST_CASE("the GPU machine names in messages come from the built-in profiles") {
  check_refused({"predict", "--model", "resnet18", "--calibration", reference_calibration(), "--gpus", "2"},
                "a100, h100, h200, k80, p100, v100");
}

TEST_CASE("no absurd figure with exit 0: a network that computes nothing, anchors and records out of bounds") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string only_input = write_json(directory, "only_input.json", json::parse(R"({
    "schema": "dnntune.network", "schema_version": 1, "name": "only_input",
    "layers": [{"name": "input", "descriptor": "input:ic3ih16iw16", "inputs": []}]})"));
  // 320,000,000 images/s, recommend 17.9e9 and h200 "inf (90% band inf - inf)" before.
  for (const char* command : {"predict", "recommend", "scale"})
    check_refused({command, "--machine", "skylake-8180", "--model", only_input}, "computes nothing");
  check_refused({"predict", "--machine", "h200", "--model", only_input},
                "only_input.json: network 'only_input' computes nothing");

  // An anchor that says the forward pass took no time, or ran -2 threads: refused by name.
  json calibration = read_json(reference_calibration());
  const json anchor = {{"network", "resnet18"},
                       {"batch", 8},
                       {"threads", 1},
                       {"smt", false},
                       {"processes", 1},
                       {"steps", 3},
                       {"forward_seconds", 1.0},
                       {"backward_seconds", 2.0},
                       {"iteration_seconds", 3.2},
                       {"iteration_coefficient_of_variation", 0.02},
                       {"layers_forward_seconds", 1.1},
                       {"layers_backward_seconds", 2.1}};
  calibration["anchors"] = json::array({anchor});
  const std::vector<std::string> resnet18 = {"--model", "resnet18", "--ppn", "1", "--threads", "1", "--batch", "8"};
  std::vector<std::string> good = {"predict", "--calibration", write_json(directory, "anchored.json", calibration)};
  good.insert(good.end(), resnet18.begin(), resnet18.end());
  const CommandResult anchored = run_dnntune(good);
  INFO(anchored.err);
  CHECK(anchored.exit_code == 0);
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
           {"forward_seconds", 0}, {"batch", 0}, {"threads", -2}, {"processes", 1e9}}) {
    json bad = calibration;
    bad["anchors"][0][field] = value;
    std::vector<std::string> args = {"predict", "--calibration", write_json(directory, "bad_anchor.json", bad)};
    args.insert(args.end(), resnet18.begin(), resnet18.end());
    check_refused(args, "bad_anchor.json: (/anchors/0");
  }

  // fit took a record of 1e9 threads, batch 0 or a median of 1e300 in silence.
  const auto records = dnntune::test::synthetic_records(dnntune::test::test_machine(), 0.02, 11);
  const std::string machine = write_json(directory, "machine.json", calibration["machine"]);
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, json>>{{"threads", 1000000000}, {"batch", 0}, {"median_seconds", 1e300}}) {
    const std::string path = directory + "/layers.jsonl";
    std::ofstream out(path);
    json bad = json::parse(dnntune::records::to_json_line(records.front()));
    bad[field] = value;
    out << bad.dump() << "\n";
    for (std::size_t index = 1; index < records.size(); ++index)
      out << dnntune::records::to_json_line(records[index]) << "\n";
    out.close();
    // Refused, or (once a bad line is skipped and reported) left out, naming the line and the field.
    const CommandResult fit = run_dnntune({"fit", path, "--machine", machine, "-o", directory + "/out.json"});
    INFO(fit.err);
    CHECK((fit.exit_code == 2 || fit.exit_code == 0));
    CHECK(fit.err.find("layers.jsonl:1: (" + field + ")") != std::string::npos);
  }

  // A GPU profile's memory of -1 (read as 2^64-1 bytes before) and a CPU profile's 56.5 cores.
  json gpu = read_json(source_path("data/machines/h200.json"));
  gpu["gpu"]["memory_bytes"] = -1;
  check_refused({"predict", "--machine", write_json(directory, "gpu.json", gpu), "--model", "resnet50"},
                "gpu.json: (/gpu/memory_bytes)");
  json cores = calibration["machine"];
  cores["topology"]["cores"] = 56.5;
  check_refused({"predict", "--machine", write_json(directory, "cores.json", cores), "--model", "resnet50"},
                "cores.json: (/topology/cores) must be an integer");
}

// Issue 61, cases 4 and 5: "#SBATCH --time=925-02:11:00" under an UNLIMITED partition and
// "--time=404220854068-22:15:00" or "--time=-106751991167300--15:-30:-8" from an overflow, before.
TEST_CASE("a job's --time stays within the partition's limit or the stated day, and a capped time is said") {
  // ResNet-18, not a larger network: the cap is what is tested, and a spec recommend bands every
  // candidate over each of the network's layers. Its training takes days even at the default epochs.
  const std::string cache = dnntune::test::make_temporary_directory();
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  const auto script = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"recommend", "--format", "slurm", "--epochs", "1e6", "--dataset-images", "1e12"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_dnntune(args);
  };
  const auto check_capped = [](const CommandResult& result, const std::string& limit, const std::string& whose) {
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("#SBATCH --time=" + limit + "\n#SBATCH --requeue\n") != std::string::npos);
    CHECK(result.out.find("# --time: the whole training takes about ") != std::string::npos);
    CHECK(result.out.find(whose) != std::string::npos);
    CHECK(result.err.find("dnntune: the predicted training (about ") != std::string::npos);
    CHECK(result.err.find("--time capped at " + limit + ", with --requeue") != std::string::npos);
  };
  {
    FakeSinfo unlimited("batch* UNLIMITED\\n", 0);
    check_capped(script({"--model", "resnet18", "--machine", "skylake-8180"}), "1-00:00:00",
                 "partition (default) has none: sinfo says UNLIMITED");
    // 55 convolutions of 64 channels at 1024x1024: within the size checks, 0.1 images/s.
    check_capped(script({"--model", source_path("tests/fixtures/wide_convolutions_network.json"), "--machine",
                         "broadwell-e5-2680v4"}),
                 "1-00:00:00", "sinfo says UNLIMITED");
    // Days at the default epochs: the default day, not the whole training.
    const auto default_epochs = run_dnntune(
        {"recommend", "--model", "resnet18", "--machine", "skylake-8180", "--format", "slurm", "--partition", "batch"});
    check_capped(default_epochs, "1-00:00:00", "partition batch has none: sinfo says UNLIMITED");
  }
  // A sinfo that cannot say: the same day (tests/cli_model_test.cpp, and the fuzzing of durations).
  {
    FakeSinfo two_days("batch* 2-00:00:00\\n", 0);
    check_capped(script({"--model", "resnet18", "--machine", "skylake-8180"}), "2-00:00:00",
                 "the time limit of partition (default) (sinfo)");
    // A given --time is the user's: kept as given, nothing said.
    const auto given = script({"--model", "resnet18", "--machine", "skylake-8180", "--time", "3-00:00:00"});
    INFO(given.err);
    CHECK(given.out.find("#SBATCH --time=3-00:00:00\n") != std::string::npos);
    CHECK(given.err.find("capped") == std::string::npos);
  }
  unsetenv("DNNTUNE_CACHE_DIR");
}

// Issue 61 and 59: an empty value meant "not given" (--precision "", --partition "", --time ""),
// and --precision fp32,fp32 was taken; --precision was read by two parsers, --anchor-settings by
// a third.
TEST_CASE("an empty value is refused, not read as not given, a list names each item once, read by one parser") {
  const std::string calibration = reference_calibration();
  const std::vector<std::string> cpu = {"recommend", "--model", "resnet18", "--calibration", calibration};
  const std::vector<std::string> gpu = {"recommend", "--model", "resnet50", "--machine", "h200"};
  const auto with = [](std::vector<std::string> args, const std::vector<std::string>& extra) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  for (const char* option : {"--partition", "--time", "--account", "--allocator", "--precision", "--format"})
    check_refused(with(cpu, {option, ""}), std::string(option) + ": an empty value (leave the option out");
  check_refused(with(gpu, {"--precision", ""}), "--precision: an empty value");
  check_refused({"predict", "--model", "resnet50", "--machine", "h200", "--precision", ""},
                "--precision: an empty value");
  check_refused({"predict", "--model", "resnet50", "--machine", ""}, "--machine: an empty value");
  // One message for an item given twice and for an empty item, whatever the list.
  check_refused(with(gpu, {"--precision", "fp32,fp32"}), "--precision: \"fp32\" is listed twice");
  check_refused(with(gpu, {"--memory-format", "channels_last,channels_last"}),
                "--memory-format: \"channels_last\" is listed twice");
  check_refused(with(gpu, {"--precision", "fp32,,bf16"}), "--precision: \"fp32,,bf16\" has an empty item");
  check_refused(with(gpu, {"--precision", "fp32,"}), "--precision: \"fp32,\" has an empty item");
  check_refused(with(cpu, {"--batch", "8,,16"}), "--batch: \"8,,16\" has an empty item");
  const std::string directory = dnntune::test::make_temporary_directory() + "/calibration";
  check_refused({"calibrate", "--model", "resnet18,", "--dry-run", "-o", directory},
                "--model: \"resnet18,\" has an empty item");
  check_refused({"calibrate", "--model", "resnet18,resnet18", "--dry-run", "-o", directory},
                "--model: \"resnet18\" is listed twice");
  check_refused({"calibrate", "--model", "resnet18", "--anchor-settings", "1x1,,2x1", "--dry-run", "-o", directory},
                "--anchor-settings: \"1x1,,2x1\" has an empty item");
  check_refused({"calibrate", "--model", "resnet18", "--anchor-settings", "2x1,2x1", "--dry-run", "-o", directory},
                "--anchor-settings: \"2x1\" is listed twice");
  const auto distinct = run_dnntune(with(gpu, {"--precision", "fp32,bf16", "--json"}));
  INFO(distinct.err);
  CHECK(distinct.exit_code == 0);
}

// Issue 61: compare took --machine 300 times (2.3 s each, no limit), and recommend's lists, each
// within its limit, multiplied into millions of candidates ("about 97 minutes") with no refusal.
TEST_CASE("work is bounded: compare's machines by a list limit, recommend's search by an estimate of minutes") {
  const std::string directory = dnntune::test::make_temporary_directory();
  json profile = read_json(source_path("data/machines/skylake-8180.json"));
  std::string machines;
  for (int index = 0; index < 17; ++index) {
    profile["name"] = "node-" + std::to_string(index);
    machines += (index ? "," : "") + write_json(directory, "node-" + std::to_string(index) + ".json", profile);
  }
  check_refused({"compare", "--model", "resnet50", "--machine", machines}, "--machine: more than 16 values");
  check_refused({"compare", "--model", "resnet50", "--machine", "skylake-8180,skylake-8180"},
                "--machine: \"skylake-8180\" is listed twice");

  std::string sixteen;
  for (int value = 1; value <= 16; ++value) sixteen += (value > 1 ? "," : "") + std::to_string(value);
  // 21 node counts x 16 batches x 16 fusion sizes x every layout of a 56-core node: millions of
  // candidates, hours on any machine; refused at once, with the way out.
  check_refused({"recommend", "--model", "resnet152", "--machine", "skylake-8180", "--nodes", "1..1048576", "--batch",
                 sixteen, "--fusion-mb", sixteen},
                "minutes on this machine, past the limit of 10 minutes: shorten the lists (node counts, batches, "
                "fusion sizes) or raise --max-minutes");
  check_refused({"recommend", "--model", "resnet152", "--machine", "skylake-8180", "--max-minutes", "0"},
                "--max-minutes: Value 0 not in range 0 (excluded) to 10000000");
  const auto small =
      run_dnntune({"recommend", "--model", "resnet18", "--machine", "skylake-8180", "--max-minutes", "0.5", "--json"});
  INFO(small.err);
  CHECK(small.exit_code == 0);  // a few hundred candidates are never timed, never refused
}

// Issue 61: a newline inside a word after `--` was taken; a profile's name printed raw (ESC, OSC);
// the commands an answer prints were not quoted as its scripts are.
TEST_CASE("text: control characters refused after -- and in a profile's name, printed commands quoted") {
  const std::string calibration = reference_calibration();
  check_refused({"recommend", "--model", "resnet18", "--calibration", calibration, "--format", "slurm", "--", "python",
                 "train.py\nrm -rf ~"},
                "holds a control character");
  check_refused({"recommend", "--model", "resnet18", "--calibration", calibration, "--", "python", "\x1b[31m"},
                "holds a control character");

  const std::string directory = dnntune::test::make_temporary_directory();
  json profile = read_json(source_path("data/machines/skylake-8180.json"));
  profile["name"] = "evil\x1b]0;title\x07\x1b[31mred";
  const std::string evil = write_json(directory, "evil.json", profile);
  for (const char* command : {"predict", "recommend", "scale"})
    check_refused({command, "--model", "resnet50", "--machine", evil},
                  "evil.json: (/name) the machine name is empty or holds control characters");
  check_refused({"compare", "--model", "resnet50", "--machine", evil + ",v100"}, "the machine name is empty or holds");

  // A network file whose path holds a space: the command to settle a tie is one a shell reads back.
  const std::string spaced = directory + "/my nets/tiny net.json";
  REQUIRE(std::system(("mkdir -p '" + directory + "/my nets'").c_str()) == 0);
  std::ofstream(spaced) << std::ifstream(source_path("tests/fixtures/tiny_network.json")).rdbuf();
  const auto answer = run_dnntune({"recommend", "--model", spaced, "--machine", "skylake-8180", "--json"});
  INFO(answer.err);
  REQUIRE(answer.exit_code == 0);
  const std::string settle = json::parse(answer.out)["how_to_settle"].get<std::string>();
  CHECK(settle.find("--model '" + spaced + "'") != std::string::npos);
  CHECK(settle.find("--model " + spaced) == std::string::npos);
}
