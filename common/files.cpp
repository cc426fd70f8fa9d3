// common/files.cpp — see files.hpp.
#include "common/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
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

Expected<void> write_in_place(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) return bad_input(path + ": cannot write (" + std::strerror(errno) + ")");
  const int error_number = write_all(fd, content);
  ::close(fd);
  if (error_number != 0) return failure(path + ": write failed (" + write_error_reason(error_number) + ")");
  return {};
}

}  // namespace

std::string write_error_reason(int error_number) {
  if (error_number == 0 || error_number == ENOSPC) return "no space left on the device: disk full?";
  if (error_number == EDQUOT) return "disk quota exceeded";
  return std::strerror(error_number);
}

Expected<void> check_output_file(const std::string& path) {
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode))
    return bad_input(path + ": is a folder, expected a file name");
  const std::string folder = folder_of(path);
  struct stat folder_status {};
  if (::stat(folder.c_str(), &folder_status) != 0 || !S_ISDIR(folder_status.st_mode))
    return bad_input(path + ": cannot write (no folder " + folder + ")");
  return {};
}

Expected<void> write_file_atomically(const std::string& path, const std::string& content) {
  if (auto usable = check_output_file(path); !usable) return usable;
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode)) return write_in_place(path, content);
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
  if (auto usable = check_input_file(path); !usable) return usable.error();
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad_input(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return bad_input(path + ": read error");
  return text.str();
}

}  // namespace dnntune
