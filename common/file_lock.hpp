// common/file_lock.hpp — an exclusive advisory lock on a file (flock), so that several dnntune
// processes started at once on one cache entry take turns: one calibrates, the others wait for
// it and then answer from what it made. The kernel releases the lock when its holder exits,
// however it exits (SIGKILL included), so a killed run never leaves a stale lock behind.
#pragma once

#include <functional>
#include <string>

#include "common/expected.hpp"

namespace dnntune {

class FileLock {
 public:
  // Takes the lock on `path` (created if absent), waiting for another holder when there is one:
  // `on_wait` is called once first with the holder's description (the pid it wrote).
  static Expected<FileLock> acquire(const std::string& path, const std::function<void(const std::string&)>& on_wait);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int descriptor) : descriptor_(descriptor) {}
  int descriptor_ = -1;
};

}  // namespace dnntune
