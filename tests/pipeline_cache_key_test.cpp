// tests/pipeline_cache_key_test.cpp — how a cache entry names the networks it covers
// (pipeline/cache_entry.hpp): one network file named by another path is the same network, and a
// seeded entry answers it without a first run.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pipeline/cache_entry.hpp"
#include "pipeline/default_calibration.hpp"

using namespace dnntune::pipeline;
namespace fs = std::filesystem;

namespace {

// A fresh folder under /tmp, the working directory while it lives; removed with all it holds.
struct WorkingDirectory {
  std::string path;
  fs::path before = fs::current_path();
  WorkingDirectory() {
    std::string pattern = "/tmp/dnntune-cache-key-test-XXXXXX";
    REQUIRE(mkdtemp(pattern.data()));
    path = pattern;
    fs::current_path(path);
  }
  ~WorkingDirectory() {
    fs::current_path(before);
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

const std::string tiny_network = std::string(DNNTUNE_SOURCE_DIR) + "/tests/fixtures/tiny_network.json";

}  // namespace

TEST_CASE("a network file is the same network in the cache by any path, and another network once edited") {
  const WorkingDirectory work;
  fs::create_directories(work.path + "/dir");
  fs::copy_file(tiny_network, work.path + "/dir/net.json");
  fs::create_symlink("dir/net.json", work.path + "/link.json");
  const std::string key = covered_network_key(work.path + "/dir/net.json");
  CHECK(covered_network_key("dir/net.json") == key);
  CHECK(covered_network_key("./dir/../dir/net.json") == key);
  CHECK(covered_network_key("link.json") == key);
  // A copy elsewhere holds the same network.
  fs::copy_file(tiny_network, work.path + "/copy.json");
  CHECK(covered_network_key("copy.json") == key);
  // An edited file is another network: its new layers are measured.
  std::ofstream(work.path + "/copy.json", std::ios::app) << "\n";
  CHECK(covered_network_key("copy.json") != key);
  // A built-in network keeps its name (the entries made before stay covered).
  CHECK(covered_network_key("resnet50") == "resnet50");
}

TEST_CASE("a cache entry seeded for one path of a network file answers another path without a first run") {
  const WorkingDirectory work;
  setenv("DNNTUNE_CACHE_DIR", (work.path + "/cache").c_str(), 1);
  fs::copy_file(tiny_network, work.path + "/net.json");
  fs::create_symlink("net.json", work.path + "/link.json");
  const auto directory = default_calibration_entry("torch");
  REQUIRE(directory);
  const Entry entry(*directory);
  fs::create_directories(entry.measurements);
  fs::copy_file(std::string(DNNTUNE_SOURCE_DIR) + "/data/reference_calibrations/torch.json", entry.calibration);
  REQUIRE(write_coverage(entry.coverage, {{covered_network_key(work.path + "/net.json"), 4}}));
  for (const std::string& model : std::vector<std::string>{"./net.json", "link.json", work.path + "/net.json"}) {
    INFO(model);
    DefaultCalibrationRequest request;
    request.models = {model};
    request.batches = {4};
    // A first run would need this; an answer from the entry never runs it.
    request.executable = "/nonexistent/dnntune";
    const auto answer = default_calibration(request);
    REQUIRE(answer);
    CHECK(answer->calibration_path == entry.calibration);
    CHECK(answer->note.empty());
  }
  unsetenv("DNNTUNE_CACHE_DIR");
}
