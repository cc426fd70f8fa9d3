// tests/common_files_test.cpp — atomic output files (also on a full disk), guarded input files,
// non-throwing integer parsing.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/files.hpp"
#include "common/parse_number.hpp"
#include "tests/temporary_files.hpp"

using namespace dnntune;

namespace {

std::string make_directory() { return dnntune::test::temporary_directory("files-test"); }

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

TEST_CASE("a FIFO is refused as an output and as an input at once, never waited on") {
  const std::string directory = make_directory();
  const std::string fifo = directory + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  const auto output = check_output_file(fifo);
  REQUIRE_FALSE(output);
  CHECK(output.error().kind == ErrorKind::bad_input);
  CHECK(output.error().message.rfind(fifo + ": is a FIFO, not a regular file", 0) == 0);
  CHECK_FALSE(write_file_atomically(fifo, "x"));  // no reader: the old code hung here
  const auto input = read_input_file(fifo);
  REQUIRE_FALSE(input);
  CHECK(input.error().message == fifo + ": not a regular file");
  // A file dnntune owns (its cache) is replaced by the rename, whatever stood there.
  REQUIRE(write_file_atomically(fifo, "calibration\n", WrittenFile::owned));
  CHECK(read(fifo) == "calibration\n");
  std::remove(fifo.c_str());
  rmdir(directory.c_str());
}

TEST_CASE("an owned file that is a link is replaced, and the file it pointed to is left alone") {
  const std::string directory = make_directory();
  const std::string victim = directory + "/precious.txt";
  std::ofstream(victim) << "measured\n";
  const std::string link = directory + "/calibration.json";
  REQUIRE(symlink(victim.c_str(), link.c_str()) == 0);
  REQUIRE(write_file_atomically(link, "fitted\n", WrittenFile::owned));
  CHECK(read(victim) == "measured\n");
  CHECK(read(link) == "fitted\n");
  struct stat status {};
  REQUIRE(lstat(link.c_str(), &status) == 0);
  CHECK(S_ISREG(status.st_mode));
  std::remove(link.c_str());
  std::remove(victim.c_str());
  rmdir(directory.c_str());
}

TEST_CASE("same_file compares by identity, and by canonical path when a file does not exist") {
  const std::string directory = make_directory();
  const std::string file = directory + "/layers.jsonl";
  std::ofstream(file) << "x\n";
  const std::string link = directory + "/alias.jsonl";
  REQUIRE(symlink(file.c_str(), link.c_str()) == 0);
  CHECK(same_file(file, link));
  CHECK(same_file(file, directory + "/./sub/../layers.jsonl"));
  CHECK(same_file(directory + "/new.json", directory + "/../" + directory.substr(5) + "/new.json"));
  CHECK_FALSE(same_file(file, directory + "/new.json"));
  CHECK(is_inside(directory + "/entry/calibration.json", directory));
  CHECK(is_inside(link, directory + "/"));
  CHECK_FALSE(is_inside(directory + "-other/x", directory));
  std::remove(link.c_str());
  std::remove(file.c_str());
  rmdir(directory.c_str());
}
