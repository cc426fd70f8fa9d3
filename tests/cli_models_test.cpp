// tests/cli_models_test.cpp — end-to-end tests of `dnntune models` and `dnntune models show`:
// the list of every built-in network, one network's totals and layers, its JSON written and
// read back as a user-defined network, and bad input (exit 2, one line naming the problem).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli_support.hpp"

using dnntune::test::check_bad_input;
using dnntune::test::run_dnntune;
using nlohmann::json;

namespace {

const char* const all_networks[] = {"resnet18",  "resnet34",     "resnet50",           "resnet101",
                                    "resnet152", "inception_v3", "inception_v3_noaux", "inception_v4",
                                    "vgg16",     "alexnet",      "mobilenet_v2"};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

TEST_CASE("dnntune models lists every built-in network with its figures") {
  const auto result = run_dnntune({"models"});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  for (const char* name : all_networks) CHECK(result.out.find(std::string(name) + " ") != std::string::npos);
  CHECK(result.out.find("25,557,032") != std::string::npos);  // ResNet-50's parameters
  CHECK(result.out.find("3x299x299") != std::string::npos);

  const auto listed = run_dnntune({"models", "--json"});
  REQUIRE(listed.exit_code == 0);
  const json document = json::parse(listed.out);
  CHECK(document["schema"] == "dnntune-model-list");
  REQUIRE(document["models"].size() == std::size(all_networks));
  CHECK(document["models"][2]["name"] == "resnet50");
  CHECK(document["models"][2]["forward_macs_per_image"] == 4089184256);
  CHECK(document["models"][7]["parameters"] == 42679816);
}

TEST_CASE("dnntune models show prints the totals, and every layer with --layers") {
  const auto totals = run_dnntune({"models", "show", "resnet152"});
  INFO(totals.err);
  REQUIRE(totals.exit_code == 0);
  CHECK(totals.out.find("resnet152: ") == 0);
  CHECK(totals.out.find("parameters 60,192,808") != std::string::npos);
  for (const char* row :
       {"forward", "backward-data", "backward-weights", "gradient sums", "training total", "optimizer update"})
    CHECK(totals.out.find(row) != std::string::npos);
  CHECK(totals.out.find("layer4.2.conv3") == std::string::npos);

  const auto layers = run_dnntune({"models", "show", "resnet152", "--layers", "--batch", "32"});
  REQUIRE(layers.exit_code == 0);
  CHECK(layers.out.find("layer4.2.conv3") != std::string::npos);
  CHECK(layers.out.find("conv:ic64ih56iw56oc64kh3kw3sh1ph1") != std::string::npos);
  CHECK(layers.out.find("batch 32") != std::string::npos);
}

TEST_CASE("dnntune models show --json writes a network file that models show reads back") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string path = directory + "/inception.json";
  const auto written = run_dnntune({"models", "show", "inception_v3", "--json", "--batch", "8", "-o", path});
  INFO(written.err);
  REQUIRE(written.exit_code == 0);
  std::ifstream in(path);
  const json document = json::parse(in);
  CHECK(document["schema"] == "dnntune.network");
  CHECK(document["batch"] == 8);
  CHECK(document["totals"]["parameters"] == 27161264);

  const auto from_file = run_dnntune({"models", "show", path, "--json", "--batch", "8"});
  REQUIRE(from_file.exit_code == 0);
  CHECK(json::parse(from_file.out) == document);
  std::remove(path.c_str());
  std::remove(directory.c_str());
}

TEST_CASE("dnntune models refuses bad input with exit 2 and a one-line message") {
  check_bad_input(run_dnntune({"models", "show", "resnet1000"}),
                  "unknown network 'resnet1000' (built-in: resnet18, resnet34");
  const auto zero_batch = run_dnntune({"models", "show", "resnet50", "--batch", "0"});
  CHECK(zero_batch.exit_code == 2);  // an option error: CLI11's message and a --help hint
  CHECK(zero_batch.err.find("--batch: Value 0 not in range 1 to 65536") != std::string::npos);
  check_bad_input(run_dnntune({"models", "show", "/nonexistent/net.json"}), "/nonexistent/net.json: cannot open");

  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string mismatched = directory + "/mismatched.json";
  write_text(mismatched, R"({"schema": "dnntune.network", "schema_version": 1, "name": "bad",
    "layers": [
      {"name": "image", "descriptor": "input:ic3ih8iw8", "inputs": []},
      {"name": "wide", "descriptor": "conv:ic3ih8iw8oc8kh1kw1sh1ph0", "inputs": ["image"]},
      {"name": "narrow", "descriptor": "conv:ic3ih8iw8oc4kh1kw1sh1ph0", "inputs": ["image"]},
      {"name": "sum", "descriptor": "add:ic8ih8iw8", "inputs": ["wide", "narrow"]}]})");
  check_bad_input(run_dnntune({"models", "show", mismatched}),
                  "layer 'sum' (add:ic8ih8iw8): inputs 'wide' (8x8x8) and 'narrow' (4x8x8) differ in shape");

  const std::string cyclic = directory + "/cyclic.json";
  write_text(cyclic, R"({"schema": "dnntune.network", "schema_version": 1, "name": "loop",
    "layers": [
      {"name": "image", "descriptor": "input:ic3ih8iw8", "inputs": []},
      {"name": "a", "descriptor": "add:ic3ih8iw8", "inputs": ["image", "b"]},
      {"name": "b", "descriptor": "relu:ic3ih8iw8", "inputs": ["a"]}]})");
  check_bad_input(run_dnntune({"models", "show", cyclic}), "has a cycle: 'a' -> 'b' -> 'a'");

  const std::string not_json = directory + "/broken.json";
  write_text(not_json, "{\"schema\": ");
  check_bad_input(run_dnntune({"models", "show", not_json}), "not valid JSON");
  for (const std::string& file : {mismatched, cyclic, not_json}) std::remove(file.c_str());
  std::remove(directory.c_str());
}
