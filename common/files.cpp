// common/files.cpp — see files.hpp.
#include "common/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

// A descriptor this process holds open for writing on the file `status` describes, else -1:
// `-o /dev/stdout`, `-o /dev/fd/3`, `-o >(cat)` name a file (a pipe, a terminal, a file behind
// `> FILE`) that the caller opened for this process, and the output goes there as `>` would send it.
int descriptor_open_for_writing(const struct stat& status) {
  DIR* listing = ::opendir("/proc/self/fd");
  if (!listing) return -1;
  int found = -1;
  while (const dirent* entry = ::readdir(listing)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == ::dirfd(listing)) continue;
    struct stat open_file {};
    const int flags = ::fcntl(static_cast<int>(fd), F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY || ::fstat(static_cast<int>(fd), &open_file) != 0) continue;
    if (open_file.st_dev == status.st_dev && open_file.st_ino == status.st_ino) {
      found = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(listing);
  return found;
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

// Writes to a descriptor this process holds, after what stdio has buffered for it.
Expected<void> write_to_descriptor(int fd, const std::string& path, const std::string& content) {
  std::fflush(nullptr);
  const int error_number = write_all(fd, content);
  if (error_number != 0) return failure(path + ": write failed (" + write_error_reason(error_number) + ")");
  return {};
}

// A character device (/dev/null, a terminal), or a file a link names that cannot be renamed over
// (/proc/PID/fd/N of another process), is written in place, as `>` writes it. Opened without
// blocking, and checked to be what was opened, so that a FIFO swapped in after the check cannot
// hang the write.
Expected<void> write_in_place(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return bad_input(path + ": cannot write (" + std::strerror(errno) + ")");
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || !(S_ISCHR(opened.st_mode) || S_ISREG(opened.st_mode))) {
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

// Where a chain of symbolic links ends: the path `>` would create or truncate ("" after 40 links,
// a loop).
std::string link_end(std::string path) {
  for (int links = 0; links < 40; ++links) {
    struct stat status {};
    if (::lstat(path.c_str(), &status) != 0 || !S_ISLNK(status.st_mode)) return path;
    std::vector<char> target(PATH_MAX + 1);
    const ssize_t length = ::readlink(path.c_str(), target.data(), PATH_MAX);
    if (length <= 0) return path;
    const std::string next(target.data(), static_cast<std::size_t>(length));
    path = next.front() == '/' ? next : folder_of(path) + "/" + next;
  }
  return "";
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

// `content` replaces the file at `path` whole: a temporary beside it, written, fsync'ed and renamed
// over it, so that a full disk or a crash leaves the old file or none, never half of one. A file
// replaced keeps its mode and owner (a mode-600 file stays 600); a new one gets 0666 less the umask.
Expected<void> replace_file(const std::string& path, const std::string& content) {
  // mkstemp creates its name with O_CREAT | O_EXCL: never through a link, never an existing file.
  std::string temporary = path + ".XXXXXX";
  std::vector<char> name(temporary.begin(), temporary.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return bad_input(path + ": cannot write (" + std::strerror(errno) + ")");
  temporary = name.data();
  const mode_t mask = ::umask(0);
  ::umask(mask);
  mode_t mode = 0666 & ~mask;
  if (struct stat old{}; ::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    mode = old.st_mode & 07777;
    // Root replacing a user's file leaves it the user's; anyone else cannot give a file away, and
    // the file is then theirs, as one they wrote anew would be.
    if (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) {
      [[maybe_unused]] const int kept_owner = ::fchown(fd, old.st_uid, old.st_gid);
    }
  }
  int error_number = ::fchmod(fd, mode) == 0 ? 0 : errno;
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

// A user's output goes where the shell's `>` would send it: a descriptor this process holds
// (/dev/stdout, /dev/fd/N) is written to; a character device is written in place; a link is
// followed and the file at its end replaced (the link stays a link); a regular file is replaced.
Expected<void> write_user_output(const std::string& path, const std::string& content) {
  struct stat link {
  }, target{};
  const bool is_link = ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  const bool exists = ::stat(path.c_str(), &target) == 0;
  if (exists && (is_link || !S_ISREG(target.st_mode)))
    if (const int fd = descriptor_open_for_writing(target); fd >= 0) return write_to_descriptor(fd, path, content);
  if (exists && !S_ISREG(target.st_mode)) return write_in_place(path, content);
  if (!is_link) return replace_file(path, content);
  const std::string end = link_end(path);
  if (end.empty()) return bad_input(path + ": cannot write (too many levels of symbolic links)");
  struct stat at_end {};
  const bool end_exists = ::stat(end.c_str(), &at_end) == 0;
  // A link the kernel resolves otherwise than its text reads (/proc/PID/fd/N): written through.
  if (exists && (!end_exists || at_end.st_dev != target.st_dev || at_end.st_ino != target.st_ino))
    return write_in_place(path, content);
  if (auto no_folder = folder_check(end); !no_folder.empty()) return bad_input(no_folder);
  return replace_file(end, content);
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
    if ((S_ISFIFO(target.st_mode) || S_ISSOCK(target.st_mode)) && descriptor_open_for_writing(target) < 0)
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
    return write_user_output(path, content);
  }
  // Whatever stands at the path (a link, a FIFO) is replaced by the rename; only a folder stops it.
  struct stat target {};
  if (::lstat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode))
    return bad_input(path + ": is a folder, expected a file name");
  if (auto no_folder = folder_check(path); !no_folder.empty()) return bad_input(no_folder);
  return replace_file(path, content);
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
  if (::fstat(fd, &status) != 0)
    refused = path + ": cannot open (" + std::strerror(errno) + ")";
  else if (!S_ISREG(status.st_mode))
    refused = path + ": not a regular file";
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

std::string written_path(const std::string& path) {
  const std::string end = link_end(path);
  return end.empty() ? path : end;
}

bool same_file(const std::string& first, const std::string& second) {
  struct stat first_status {
  }, second_status{};
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
