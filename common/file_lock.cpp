// common/file_lock.cpp — see file_lock.hpp.
#include "common/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace dnntune {

Expected<FileLock> FileLock::acquire(const std::string& path, const std::function<void(const std::string&)>& on_wait) {
  // Never through a link (a lock that is a link to another file would get that file's content
  // replaced by the pid below) and never blocking on a FIFO: only a regular file is a lock.
  const int descriptor = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
  if (descriptor < 0) {
    if (errno == ELOOP) return failure(path + ": the lock file is a symbolic link; remove it");
    return failure(path + ": cannot open the lock file (" + std::strerror(errno) + ")");
  }
  struct stat status {};
  if (::fstat(descriptor, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(descriptor);
    return failure(path + ": the lock file is not a regular file; remove it");
  }
  if (::flock(descriptor, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      const std::string reason = std::strerror(errno);
      ::close(descriptor);
      return failure(path + ": cannot lock (" + reason + ")");
    }
    char holder[64] = {};
    const ssize_t length = ::pread(descriptor, holder, sizeof holder - 1, 0);
    if (on_wait)
      on_wait(length > 0 ? "process " + std::string(holder, static_cast<std::size_t>(length)) : "another process");
    while (::flock(descriptor, LOCK_EX) != 0)
      if (errno != EINTR) {
        const std::string reason = std::strerror(errno);
        ::close(descriptor);
        return failure(path + ": cannot lock (" + reason + ")");
      }
  }
  // Who holds it, for the message of the next one to wait (best effort: the lock is what counts).
  const std::string pid = std::to_string(::getpid());
  const bool noted = ::ftruncate(descriptor, 0) == 0 && ::pwrite(descriptor, pid.data(), pid.size(), 0) > 0;
  static_cast<void>(noted);
  return FileLock(descriptor);
}

FileLock::FileLock(FileLock&& other) noexcept : descriptor_(std::exchange(other.descriptor_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = std::exchange(other.descriptor_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (descriptor_ >= 0) ::close(descriptor_);  // closing the last descriptor releases the lock
}

}  // namespace dnntune
