// tests/cli_model_test.cpp — end-to-end: `dnntune fit` on recorded measurements, then
// `predict` and `scale` from the saved calibration; their bad inputs.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "records/machine_profile.hpp"
#include "tests/cli_support.hpp"
#include "tests/model_fixtures.hpp"

using dnntune::test::run_dnntune;
using nlohmann::json;

namespace {

// A directory like `dnntune calibrate -o` makes: machine.json and layers.jsonl.
std::string write_calibration_directory() {
  const std::string directory = dnntune::test::make_temporary_directory();
  dnntune::test::write_measurement_directory(directory);
  return directory;
}

}  // namespace

TEST_CASE("fit, then predict and scale from the saved calibration") {
  const std::string directory = write_calibration_directory();
  const std::string calibration = directory + "/calibration.json";
  const auto fit = run_dnntune({"fit", directory, "-o", calibration, "--bootstrap", "4"});
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.out.find("held-out error") != std::string::npos);
  CHECK(fit.out.find("conv_spatial.efficiency.forward") != std::string::npos);
  CHECK(fit.out.find("pinned") != std::string::npos);

  const auto predict = run_dnntune({"predict", "--model", "resnet18", "--ppn", "2", "--threads", "2", "--batch", "8",
                                    "--calibration", calibration, "--json"});
  INFO(predict.err);
  REQUIRE(predict.exit_code == 0);
  const auto prediction = json::parse(predict.out);
  CHECK(prediction["images_per_second"].get<double>() > 0);
  CHECK(prediction["band"]["low"].get<double>() < prediction["images_per_second"].get<double>());
  CHECK(prediction["terms_seconds"]["communication"].get<double>() > 0);
  CHECK(prediction["configuration"]["processes_per_node"] == 2);

  const std::string plot = directory + "/scaling.svg";
  const auto scale = run_dnntune({"scale", "--model", "resnet50", "--nodes", "1..64", "--ppn", "2", "--threads", "2",
                                  "--calibration", calibration, "--plot", plot});
  INFO(scale.err);
  REQUIRE(scale.exit_code == 0);
  CHECK(scale.out.find("efficiency") != std::string::npos);
  CHECK(std::count(scale.out.begin(), scale.out.end(), '\n') == 2 + 7);  // title, header, 1..64
  const std::string picture = dnntune::test::read_whole_file(plot);
  CHECK(picture.find("<svg") == 0);
  CHECK(picture.find("<polyline") != std::string::npos);
}

TEST_CASE("a spec machine is predicted from the built-in reference calibration, at lower confidence") {
  const auto result = run_dnntune({"predict", "--model", "resnet152", "--machine", "skylake-8180", "--ppn", "2",
                                   "--threads", "28", "--batch", "32", "--json"});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto prediction = json::parse(result.out);
  CHECK(prediction["confidence"] == "spec");
  CHECK(prediction["machine"] == "skylake-8180");
  const double rate = prediction["images_per_second"].get<double>();
  CHECK(prediction["band"]["low"].get<double>() < 0.8 * rate);  // a wide band
  CHECK(prediction["band"]["high"].get<double>() > 1.2 * rate);
}

TEST_CASE("the predict_scaling example loads a calibration and predicts over nodes") {
  const std::string directory = write_calibration_directory();
  const std::string calibration = directory + "/calibration.json";
  REQUIRE(run_dnntune({"fit", directory, "-o", calibration, "--bootstrap", "2"}).exit_code == 0);
  const auto result =
      dnntune::test::run_program(DNNTUNE_EXAMPLES_DIR "/predict_scaling", {calibration, "resnet50", "2", "2", "8"});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(std::count(result.out.begin(), result.out.end(), '\n') == 6);  // 1, 4, 16, 64, 256, 1024 nodes
  CHECK(result.out.find(" 1024 nodes:") != std::string::npos);
  CHECK(dnntune::test::run_program(DNNTUNE_EXAMPLES_DIR "/predict_scaling", {calibration, "resnet9000"}).exit_code ==
        2);
}

TEST_CASE("model commands: bad input is exit 2 with a clear message") {
  const std::string directory = write_calibration_directory();
  const std::string calibration = directory + "/calibration.json";
  REQUIRE(run_dnntune({"fit", directory, "-o", calibration, "--bootstrap", "2"}).exit_code == 0);
  auto check = [](const dnntune::test::CommandResult& result, const std::string& text) {
    INFO(result.err);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find(text) != std::string::npos);
  };
  check(run_dnntune({"predict", "--model", "resnet9000", "--calibration", calibration}), "resnet50");
  check(run_dnntune({"predict", "--model", "resnet18", "--ppn", "4", "--threads", "2", "--calibration", calibration}),
        "the node has 4");
  check(run_dnntune({"predict", "--model", "resnet18", "--async", "--calibration", calibration}), "--ps");
  check(run_dnntune({"predict", "--model", "resnet18", "--ppn", "2", "--ps", "2", "--calibration", calibration}),
        "servers");
  check(run_dnntune({"predict", "--model", "resnet18", "--nodes", "4", "--network", "carrier-pigeon", "--calibration",
                     calibration}),
        "edr");
  std::ofstream(directory + "/corrupt.json") << "{\"schema\": \"dnntune.calibration\", \"schema_version\": 1";
  check(run_dnntune({"predict", "--model", "resnet18", "--calibration", directory + "/corrupt.json"}),
        "not valid JSON");
  check(run_dnntune({"scale", "--model", "resnet18", "--nodes", "64..2", "--calibration", calibration}), "backwards");
  // validate trains here: a calibration of another machine (the test machine) is not judged by it.
  check(run_dnntune({"validate", "--quick", "--calibration", calibration}), "validate trains on this one");
  // Records of one machine cannot calibrate another.
  check(run_dnntune({"fit", directory + "/layers.jsonl", "--machine", "skylake-8180"}), "measured on machine");
  std::ofstream(directory + "/empty.jsonl") << "";
  check(run_dnntune({"fit", directory + "/empty.jsonl", "--machine", directory + "/machine.json"}), "no measurement");
}

TEST_CASE("the scaling plot escapes the network's name and shows efficiency against an ideal 100% line") {
  std::ifstream tiny(dnntune::test::source_path("tests/fixtures/tiny_network.json"));
  json network = json::parse(tiny);
  network["name"] = "tiny <net> & \"friends\"";
  const std::string directory = dnntune::test::make_temporary_directory();
  std::ofstream(directory + "/network.json") << network.dump();
  const std::string plot = directory + "/scaling.svg";
  const auto scale = run_dnntune({"scale", "--model", directory + "/network.json", "--machine", "skylake-8180", "--ppn",
                                  "2", "--threads", "28", "--nodes", "1..16", "--plot", plot});
  INFO(scale.err);
  REQUIRE(scale.exit_code == 0);
  const std::string picture = dnntune::test::read_whole_file(plot);
  CHECK(picture.find("tiny &lt;net&gt; &amp; &quot;friends&quot;") != std::string::npos);
  CHECK(picture.find("<net>") == std::string::npos);
  CHECK(picture.find("efficiency") != std::string::npos);
  CHECK(picture.find(">100%</text>") != std::string::npos);
}

// Recorded on a 2-vCPU VM: `dnntune calibrate --model resnet18 --backend torch --batch 8 --batch 16
// --threads 1 --processes 1 --no-smt --anchor`: its layers, and 3 real steps at each batch.
TEST_CASE("fit on a recorded calibration with anchors: predict reproduces the real step within its band") {
  const std::string recorded = dnntune::test::source_path("tests/fixtures/anchored_resnet18_calibration");
  const std::string calibration = dnntune::test::make_temporary_directory() + "/calibration.json";
  const auto fit = run_dnntune({"fit", recorded, "-o", calibration, "--bootstrap", "4"});
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  double anchor_images_per_second = 0;
  std::ifstream anchors(recorded + "/network.jsonl");
  for (std::string line; std::getline(anchors, line);) {
    const auto record = json::parse(line);
    if (record["pass"] == "iteration" && record["batch"] == 8)
      anchor_images_per_second = record["batch"].get<double>() / record["median_seconds"].get<double>();
  }
  REQUIRE(anchor_images_per_second > 0);
  const auto predict = [&](const std::string& threads, bool json_output) {
    std::vector<std::string> arguments = {"predict", "--model", "resnet18", "--ppn",         "1",        "--threads",
                                          threads,   "--batch", "8",        "--calibration", calibration};
    if (json_output) arguments.push_back("--json");
    return run_dnntune(arguments);
  };

  const auto checked = predict("1", true);
  INFO(checked.err);
  REQUIRE(checked.exit_code == 0);
  const auto prediction = json::parse(checked.out);
  CHECK(prediction["confidence"] == "measured");
  CHECK(prediction["anchor"]["exact"] == true);
  CHECK(prediction["band"]["low"].get<double>() <= anchor_images_per_second);
  CHECK(prediction["band"]["high"].get<double>() >= anchor_images_per_second);
  CHECK(predict("1", false).out.find("anchor        trained 3 steps at 1x1 b8: ") != std::string::npos);

  const auto carried = predict("2", true);  // no anchor at two threads: the one-thread one is carried
  INFO(carried.err);
  REQUIRE(carried.exit_code == 0);
  CHECK(json::parse(carried.out)["confidence"] != "measured");
  CHECK(json::parse(carried.out)["anchor"]["exact"] == false);
}

TEST_CASE("an emulated cluster's inter-node records calibrate the link and numbers replace it") {
  const std::string directory = write_calibration_directory();
  {
    // One rank on each of 2 nodes over a 200 Mb/s link: alpha 60 us, 25 MB/s.
    std::ofstream comm(directory + "/comm.jsonl");
    for (const std::int64_t bytes : {4096, 65536, 1 << 20, 4 << 20}) {
      dnntune::records::Measurement record;
      record.kind = dnntune::records::MeasurementKind::communication;
      record.backend = "mpi";
      record.machine_fingerprint = dnntune::records::fingerprint(dnntune::test::test_machine());
      record.descriptor = "allreduce";
      record.processes = record.nodes = 2;
      record.message_bytes = bytes;
      record.median_seconds = 2 * 60e-6 + bytes / 25e6;
      record.repetitions = 5;
      comm << dnntune::records::to_json_line(record) << "\n";
    }
  }
  const std::string calibration = directory + "/calibration.json";
  const auto fit = run_dnntune({"fit", directory, "-o", calibration, "--bootstrap", "2"});
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.out.find("inter-node link: 60.00 us, 0.0250 GB/s") != std::string::npos);
  const auto predict = [&](std::vector<std::string> extra) {
    std::vector<std::string> arguments{"predict", "--model", "resnet18",      "--batch",   "8",
                                       "--nodes", "2",       "--calibration", calibration, "--json"};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    const auto result = run_dnntune(arguments);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return json::parse(result.out)["terms_seconds"]["communication"].get<double>();
  };
  // resnet18's 46.8 MB of gradients over 2 nodes at 25 MB/s: about 1.9 s, whatever --network says.
  const double measured = predict({});
  CHECK(measured == Approx(46.8e6 / 25e6).epsilon(0.05));
  CHECK(predict({"--network", "hdr"}) == measured);
  // Numbers are a what-if that replaces the measured link: 1 Gb/s line rate, 90% usable.
  CHECK(predict({"--link-gbps", "1", "--link-latency-us", "60"}) == Approx(46.8e6 / (0.9 * 125e6)).epsilon(0.05));
  for (const auto& bad : std::vector<std::vector<std::string>>{{"--link-gbps", "0", "--link-latency-us", "1"},
                                                               {"--link-gbps", "nan", "--link-latency-us", "1"},
                                                               {"--link-gbps", "1", "--link-latency-us", "-5"},
                                                               {"--link-gbps", "fast", "--link-latency-us", "1"},
                                                               {"--link-gbps", "1"}}) {
    std::vector<std::string> arguments{"predict", "--model", "resnet18", "--nodes", "2", "--calibration", calibration};
    arguments.insert(arguments.end(), bad.begin(), bad.end());
    const auto result = run_dnntune(arguments);
    INFO(result.err);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find("--link") != std::string::npos);
  }
}

// Defaults users mean (issue 39): a layout nobody asked for is the recommended one, said so; an
// empty --machine is a mistake; a job script's --time stays within what the partition allows.
TEST_CASE("scale without --ppn and --threads answers for the recommended layout, not 1 x 1, and says so") {
  const auto scale =
      run_dnntune({"scale", "--model", "resnet152", "--machine", "skylake-8180", "--nodes", "1..256", "--json"});
  INFO(scale.err);
  REQUIRE(scale.exit_code == 0);
  const auto rows = json::parse(scale.out)["rows"];
  const auto& layout = rows.front()["configuration"];
  CHECK(layout["processes_per_node"].get<int>() * layout["threads_per_process"].get<int>() > 1);
  CHECK(json::parse(scale.out)["layout_basis"].get<std::string>().find("the one `dnntune recommend` picks") !=
        std::string::npos);
  CHECK(rows.back()["efficiency"].get<double>() < 1.0);

  const auto empty = run_dnntune({"predict", "--model", "resnet50", "--machine", ""});
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.find("--machine: an empty value (leave the option out for its default)") != std::string::npos);
  CHECK(empty.err.find("calibrating") == std::string::npos);
  const auto both = run_dnntune({"recommend", "--model", "resnet50", "--machine", "skylake-8180", "--topology",
                                 dnntune::test::source_path("tests/fixtures/tiny_network.json")});
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--topology and --machine both describe the node") != std::string::npos);
}

TEST_CASE("the SLURM script's --time stays within the limit and says the whole training must checkpoint") {
  // No SLURM that answers (a sinfo that fails, as on a machine without a controller): the default day.
  const std::string folder = dnntune::test::make_temporary_directory();
  std::ofstream(folder + "/sinfo") << "#!/bin/sh\necho 'sinfo: error: no controller' >&2\nexit 1\n";
  REQUIRE(std::system(("chmod +x " + folder + "/sinfo").c_str()) == 0);
  const std::string path = std::getenv("PATH");
  setenv("PATH", (folder + ":" + path).c_str(), 1);
  const auto script = run_dnntune(
      {"recommend", "--model", "resnet152", "--nodes", "4", "--format", "slurm", "--machine", "skylake-8180"});
  setenv("PATH", path.c_str(), 1);
  INFO(script.err);
  REQUIRE(script.exit_code == 0);
  CHECK(script.out.find("#SBATCH --time=1-00:00:00\n#SBATCH --requeue\n") != std::string::npos);
  CHECK(script.out.find("# --time: the whole training takes about ") != std::string::npos);
  CHECK(script.out.find("dnntune's default limit") != std::string::npos);
  CHECK(script.out.find("must checkpoint") != std::string::npos);
}
