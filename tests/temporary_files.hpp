// tests/temporary_files.hpp — the folders a test writes its files in under /tmp, removed with
// everything in them when the test's process exits. ctest runs each Catch2 test case in a process of
// its own, and a failed REQUIRE ends the case by an exception Catch2 catches: the process still
// exits normally, so a failing test leaves nothing behind in /tmp either (only a killed one does).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace dnntune::test {

namespace detail {

// The folders made by this process, removed when it exits (a static's destructor).
class TemporaryFolders {
 public:
  ~TemporaryFolders() {
    for (const auto& folder : folders_) {
      std::error_code ignored;
      std::filesystem::remove_all(folder, ignored);
    }
  }
  void add(const std::string& folder) { folders_.push_back(folder); }

 private:
  std::vector<std::string> folders_;
};

inline TemporaryFolders& temporary_folders() {
  static TemporaryFolders folders;
  return folders;
}

}  // namespace detail

// A fresh empty folder /tmp/dnntune-WHAT-XXXXXX, removed when the process exits.
inline std::string temporary_directory(const std::string& what) {
  std::string pattern = "/tmp/dnntune-" + what + "-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
  detail::temporary_folders().add(pattern);
  return pattern;
}

}  // namespace dnntune::test
