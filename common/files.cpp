// common/files.cpp — see files.hpp.
#include "common/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace dnntune {
namespace {

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Writes all of `content` to `fd`; 0 on success, else the errno (ENOSPC for a write of 0 bytes).
int write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t written = ::write(fd, content.data() + done, content.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return written < 0 && errno != 0 ? errno : ENOSPC;
    done += static_cast<std::size_t>(written);
  }
  return 0;
}

// Whether `status` is the file this process's standard output is (`-o /dev/stdout` in a pipe).
bool is_standard_output(const struct stat& status) {
  struct stat output {};
  return ::fstat(STDOUT_FILENO, &output) == 0 && output.st_dev == status.st_dev && output.st_ino == status.st_ino;
}

// The kind of a file that is not regular, for messages.
std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISCHR(mode)) return "a character device";
  return "not a regular file";
}

// A character device (/dev/null, a terminal) is written in place: there is nothing to rename
// over. Opened without blocking, and checked to be what was opened, so that a FIFO swapped in
// after the check cannot hang the write.
Expected<void> write_in_place(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return bad_input(path + ": cannot write (" + std::strerror(errno) + ")");
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || !S_ISCHR(opened.st_mode)) {
    ::close(fd);
    return bad_input(path + ": cannot write (" + file_kind(opened.st_mode) + ", not a regular file)");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const int error_number = write_all(fd, content);
  ::close(fd);
  if (error_number != 0) return failure(path + ": write failed (" + write_error_reason(error_number) + ")");
  return {};
}

std::string folder_check(const std::string& path) {
  const std::string folder = folder_of(path);
  struct stat folder_status {};
  if (::stat(folder.c_str(), &folder_status) != 0 || !S_ISDIR(folder_status.st_mode))
    return path + ": cannot write (no folder " + folder + ")";
  return "";
}

std::filesystem::path normalised(const std::string& path) {
  std::error_code error;
  auto absolute = std::filesystem::absolute(path, error);
  if (error) return std::filesystem::path(path).lexically_normal();
  auto canonical = std::filesystem::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal() : canonical.lexically_normal();
}

}  // namespace

std::string write_error_reason(int error_number) {
  if (error_number == 0 || error_number == ENOSPC) return "no space left on the device: disk full?";
  if (error_number == EDQUOT) return "disk quota exceeded";
  return std::strerror(error_number);
}

Expected<void> check_output_file(const std::string& path) {
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0) {
    if (S_ISDIR(target.st_mode)) return bad_input(path + ": is a folder, expected a file name");
    if ((S_ISFIFO(target.st_mode) || S_ISSOCK(target.st_mode)) && !is_standard_output(target))
      return bad_input(path + ": is " + file_kind(target.st_mode) +
                       ", not a regular file (to pipe the output, leave -o out or give -o -)");
    if (S_ISBLK(target.st_mode)) return bad_input(path + ": is a block device, not a regular file");
  }
  if (auto no_folder = folder_check(path); !no_folder.empty()) return bad_input(no_folder);
  return {};
}

Expected<void> write_file_atomically(const std::string& path, const std::string& content, WrittenFile kind) {
  if (kind == WrittenFile::user_output) {
    if (auto usable = check_output_file(path); !usable) return usable;
    struct stat target {};
    if (::stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode)) {
      if (!is_standard_output(target)) return write_in_place(path, content);
      const int error_number = write_all(STDOUT_FILENO, content);
      if (error_number != 0) return failure(path + ": write failed (" + write_error_reason(error_number) + ")");
      return {};
    }
  } else {
    // Whatever stands at the path (a link, a FIFO) is replaced by the rename; only a folder stops it.
    struct stat target {};
    if (::lstat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode))
      return bad_input(path + ": is a folder, expected a file name");
    if (auto no_folder = folder_check(path); !no_folder.empty()) return bad_input(no_folder);
  }
  // mkstemp creates its name with O_CREAT | O_EXCL: never through a link, never an existing file.
  std::string temporary = path + ".XXXXXX";
  std::vector<char> name(temporary.begin(), temporary.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return bad_input(path + ": cannot write (" + std::strerror(errno) + ")");
  temporary = name.data();
  const mode_t mask = ::umask(0);
  ::umask(mask);
  int error_number = ::fchmod(fd, 0666 & ~mask) == 0 ? 0 : errno;
  if (error_number == 0) error_number = write_all(fd, content);
  if (error_number == 0 && ::fsync(fd) != 0) error_number = errno;
  if (::close(fd) != 0 && error_number == 0) error_number = errno;
  if (error_number == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) error_number = errno;
  if (error_number != 0) {
    std::remove(temporary.c_str());
    return failure(path + ": write failed (" + write_error_reason(error_number) + ")");
  }
  return {};
}

Expected<void> check_input_file(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return bad_input(path + ": cannot open (" + std::strerror(errno) + ")");
  if (!S_ISREG(status.st_mode)) return bad_input(path + ": not a regular file");
  if (static_cast<std::uint64_t>(status.st_size) > max_input_bytes)
    return bad_input(path + ": larger than " + std::to_string(max_input_bytes >> 20) + " MiB, not a dnntune input");
  return {};
}

Expected<std::string> read_input_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return bad_input(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat status {};
  std::string refused;
  if (::fstat(fd, &status) != 0) refused = path + ": cannot open (" + std::strerror(errno) + ")";
  else if (!S_ISREG(status.st_mode)) refused = path + ": not a regular file";
  else if (static_cast<std::uint64_t>(status.st_size) > max_input_bytes)
    refused = path + ": larger than " + std::to_string(max_input_bytes >> 20) + " MiB, not a dnntune input";
  if (!refused.empty()) {
    ::close(fd);
    return bad_input(refused);
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(status.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      return bad_input(path + ": read error (" + reason + ")");
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > max_input_bytes) {  // grew while read
      ::close(fd);
      return bad_input(path + ": larger than " + std::to_string(max_input_bytes >> 20) + " MiB, not a dnntune input");
    }
  }
  ::close(fd);
  return text;
}

bool same_file(const std::string& first, const std::string& second) {
  struct stat first_status {}, second_status {};
  if (::stat(first.c_str(), &first_status) == 0 && ::stat(second.c_str(), &second_status) == 0)
    return first_status.st_dev == second_status.st_dev && first_status.st_ino == second_status.st_ino;
  return normalised(first) == normalised(second);
}

bool is_inside(const std::string& path, const std::string& folder) {
  const auto inner = normalised(path), outer = normalised(folder);
  auto outer_part = outer.begin();
  for (auto inner_part = inner.begin(); outer_part != outer.end(); ++inner_part, ++outer_part) {
    if (outer_part->empty()) break;  // a trailing separator
    if (inner_part == inner.end() || *inner_part != *outer_part) return false;
  }
  return true;
}

}  // namespace dnntune
