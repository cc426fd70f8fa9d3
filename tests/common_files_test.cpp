// tests/common_files_test.cpp — atomic output files (also on a full disk), guarded input files,
// non-throwing integer parsing.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/files.hpp"
#include "common/parse_number.hpp"

using namespace dnntune;

namespace {

std::string make_directory() {
  std::string pattern = "/tmp/dnntune-files-test-XXXXXX";
  REQUIRE(mkdtemp(pattern.data()));
  return pattern;
}

std::vector<std::string> entries(const std::string& directory) {
  std::vector<std::string> names;
  DIR* listing = opendir(directory.c_str());
  while (const dirent* entry = readdir(listing))
    if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") names.push_back(entry->d_name);
  closedir(listing);
  return names;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("an output file is replaced whole, and only its own file is left") {
  const std::string directory = make_directory();
  const std::string path = directory + "/out.txt";
  REQUIRE(write_file_atomically(path, "first\n"));
  REQUIRE(write_file_atomically(path, "second\n"));
  CHECK(read(path) == "second\n");
  CHECK(entries(directory) == std::vector<std::string>{"out.txt"});
  const auto missing = write_file_atomically("/nonexistent/folder/x.json", "x");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == ErrorKind::bad_input);
  CHECK(missing.error().message == "/nonexistent/folder/x.json: cannot write (no folder /nonexistent/folder)");
  CHECK(write_file_atomically(directory, "x").error().kind == ErrorKind::bad_input);
  CHECK(write_file_atomically("/dev/null", "nothing"));  // written in place, never renamed over
}

TEST_CASE("on a full disk a write fails with the reason, keeps the old file and leaves no temporary") {
  const std::string directory = make_directory();
  if (mount("tmpfs", directory.c_str(), "tmpfs", 0, "size=64k") != 0) {
    rmdir(directory.c_str());
    WARN("cannot mount a small tmpfs here (not root?): skipped");
    return;
  }
  const std::string path = directory + "/out.json";
  REQUIRE(write_file_atomically(path, "old\n"));
  const auto full = write_file_atomically(path, std::string(1 << 20, 'x'));
  const std::string content = read(path);
  const auto left = entries(directory);
  umount(directory.c_str());
  rmdir(directory.c_str());
  REQUIRE_FALSE(full);
  CHECK(full.error().kind == ErrorKind::failure);
  CHECK(full.error().message == path + ": write failed (no space left on the device: disk full?)");
  CHECK(content == "old\n");
  CHECK(left == std::vector<std::string>{"out.json"});
}

TEST_CASE("input files are regular files of bounded size") {
  CHECK(check_input_file("/dev/zero").error().message == "/dev/zero: not a regular file");
  CHECK(check_input_file("/tmp").error().message == "/tmp: not a regular file");
  CHECK(check_input_file("/nonexistent.json").error().kind == ErrorKind::bad_input);
  const std::string directory = make_directory();
  const std::string large = directory + "/large.json";
  std::ofstream(large).close();
  REQUIRE(truncate(large.c_str(), static_cast<off_t>(max_input_bytes + 1)) == 0);  // sparse
  CHECK(check_input_file(large).error().message == large + ": larger than 256 MiB, not a dnntune input");
  std::remove(large.c_str());
  rmdir(directory.c_str());
}

TEST_CASE("parse_int64 takes a whole decimal integer or nothing") {
  CHECK(parse_int64("42") == 42);
  CHECK(parse_int64("-7") == -7);
  CHECK(parse_int64("9223372036854775807") == INT64_MAX);
  CHECK_FALSE(parse_int64("9223372036854775808"));
  CHECK_FALSE(parse_int64("abc"));
  CHECK_FALSE(parse_int64("12abc"));
  CHECK_FALSE(parse_int64(""));
  CHECK_FALSE(parse_int64(" 1"));
  CHECK_FALSE(parse_int64("+1"));
  CHECK_FALSE(parse_int64("1e3"));
}
