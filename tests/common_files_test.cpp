// tests/common_files_test.cpp — atomic output files (also on a full disk), guarded input files,
// non-throwing integer parsing.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/files.hpp"
#include "common/parse_number.hpp"
#include "tests/temporary_files.hpp"

using namespace dnntune;

namespace {

std::string make_directory() { return dnntune::test::temporary_directory("files-test"); }

// A fresh folder under /tmp, removed with all it holds when the test ends, passed or failed.
struct TemporaryDirectory {
  std::string path = make_directory();
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

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
  const TemporaryDirectory temporary;
  const std::string& directory = temporary.path;
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

TEST_CASE("a user's output through a link replaces the file at its end, and the link stays a link") {
  const TemporaryDirectory temporary;
  const std::string& directory = temporary.path;
  const std::string target = directory + "/answer.txt";
  std::ofstream(target) << "old\n";
  REQUIRE(chmod(target.c_str(), 0600) == 0);
  const std::string link = directory + "/latest.txt";
  REQUIRE(symlink("answer.txt", link.c_str()) == 0);  // relative, as `ln -s` makes them
  REQUIRE(write_file_atomically(link, "new\n"));
  CHECK(read(target) == "new\n");
  struct stat status {};
  REQUIRE(lstat(link.c_str(), &status) == 0);
  CHECK(S_ISLNK(status.st_mode));
  REQUIRE(stat(target.c_str(), &status) == 0);
  CHECK((status.st_mode & 07777) == 0600);  // a replaced file keeps its mode
  // A link to a file not made yet: `>` makes it, and so does -o.
  const std::string dangling = directory + "/next.txt";
  REQUIRE(symlink((directory + "/made.txt").c_str(), dangling.c_str()) == 0);
  REQUIRE(write_file_atomically(dangling, "made\n"));
  CHECK(read(directory + "/made.txt") == "made\n");
  REQUIRE(lstat(dangling.c_str(), &status) == 0);
  CHECK(S_ISLNK(status.st_mode));
  // A plain file replaced keeps its mode too, and no temporary is left beside it.
  const std::string secret = directory + "/secret.txt";
  std::ofstream(secret) << "old\n";
  REQUIRE(chmod(secret.c_str(), 0600) == 0);
  REQUIRE(write_file_atomically(secret, "new\n"));
  REQUIRE(stat(secret.c_str(), &status) == 0);
  CHECK((status.st_mode & 07777) == 0600);
  CHECK(entries(directory).size() == 5);
}

TEST_CASE("a user's output that names a file this process holds open is written to it, as `>` would") {
  const TemporaryDirectory temporary;
  const std::string& directory = temporary.path;
  // `-o /dev/stdout > res.txt`: a link to /proc/self/fd/N of a regular file (here a private link,
  // never the system's /dev/stdout, which a failing test must not turn into a file).
  const std::string result = directory + "/res.txt";
  const int fd = open(result.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  const std::string standard_output = directory + "/stdout";
  REQUIRE(symlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), standard_output.c_str()) == 0);
  REQUIRE(write_file_atomically(standard_output, "answer\n"));
  close(fd);
  CHECK(read(result) == "answer\n");
  struct stat status {};
  REQUIRE(lstat(standard_output.c_str(), &status) == 0);
  CHECK(S_ISLNK(status.st_mode));
  // A pipe this process holds (`-o /dev/stdout | cat`, `-o >(cat)`): written to, never refused.
  int pipe_ends[2];
  REQUIRE(pipe(pipe_ends) == 0);
  const std::string pipe_path = "/proc/self/fd/" + std::to_string(pipe_ends[1]);
  CHECK(check_output_file(pipe_path));
  REQUIRE(write_file_atomically(pipe_path, "piped\n"));
  close(pipe_ends[1]);
  char buffer[16] = {};
  CHECK(std::string(buffer, static_cast<std::size_t>(::read(pipe_ends[0], buffer, sizeof buffer))) == "piped\n");
  close(pipe_ends[0]);
  CHECK(entries(directory).size() == 2);
}
