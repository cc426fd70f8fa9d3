// tests/cli_support.cpp — see cli_support.hpp.
#include "tests/cli_support.hpp"
#include "tests/temporary_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace dnntune::test {

void check_bad_input(const CommandResult& result, const std::string& text) {
  INFO(result.err);
  CHECK(result.exit_code == 2);
  CHECK(result.out.empty());
  CHECK(result.err.find("dnntune: error: ") == 0);
  CHECK(result.err.find(text) != std::string::npos);
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
}

void write_file(const std::string& path, const std::string& content) {
  std::remove(path.c_str());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string make_temporary_directory() { return temporary_directory("test"); }

std::string source_path(const std::string& relative) { return std::string(DNNTUNE_SOURCE_DIR) + "/" + relative; }

std::string seed_cache(const std::string& cache_directory) {
  const auto seeded =
      run_program("/usr/bin/python3", {source_path("tests/fixtures/seed_cache.py"), DNNTUNE_BINARY, cache_directory});
  INFO(seeded.err);
  REQUIRE(seeded.exit_code == 0);
  return seeded.out.substr(0, seeded.out.find('\n'));
}

CommandResult run_dnntune(const std::vector<std::string>& args) { return run_program(DNNTUNE_BINARY, args); }

void write_machine_profile_with_stated_peaks(const std::string& directory) {
  const std::string path = directory + "/machine.json";
  const auto described = run_dnntune({"probe", "--quick", "--json", "-o", path});
  INFO(described.err);
  REQUIRE(described.exit_code == 0);
  nlohmann::json profile = nlohmann::json::parse(read_whole_file(path));
  nlohmann::json& performance = profile["performance"];
  performance["peak_fp32_gflops_per_core"] = {{"value", 50.0}, {"provenance", "spec"}};
  performance["triad_scaling"] = nlohmann::json::array({{{"cores", 1},
                                                         {"threads", 1},
                                                         {"smt", false},
                                                         {"median", 10.0},
                                                         {"coefficient_of_variation", 0.0},
                                                         {"repetitions", 0}}});
  write_file(path, profile.dump(2) + "\n");
}

FakeSinfo::FakeSinfo(const std::string& output, int code)
    : path_(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin") {
  const std::string folder = make_temporary_directory();
  write_file(folder + "/sinfo", "#!/bin/sh\nprintf '" + output + "'\nexit " + std::to_string(code) + "\n");
  if (::chmod((folder + "/sinfo").c_str(), 0755) != 0) throw std::runtime_error("chmod failed");
  ::setenv("PATH", (folder + ":" + path_).c_str(), 1);
}

FakeSinfo::~FakeSinfo() { ::setenv("PATH", path_.c_str(), 1); }

CommandResult run_program(const std::string& program, const std::vector<std::string>& args) {
  // Output goes through files, not pipes, so a large output can never dead-lock the child.
  const std::string directory = make_temporary_directory();
  const std::string out_path = directory + "/stdout", err_path = directory + "/stderr";

  std::vector<std::string> argv_storage{program};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error(std::string("cannot run ") + argv[0]);

  int status = 0;
  waitpid(pid, &status, 0);
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_whole_file(out_path);
  result.err = read_whole_file(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  rmdir(directory.c_str());
  return result;
}

}  // namespace dnntune::test
