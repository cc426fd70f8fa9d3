// tests/common_file_lock_test.cpp — the cache lock: a second holder waits for the first, and a
// holder that dies (even by SIGKILL) releases it.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "common/file_lock.hpp"
#include "tests/temporary_files.hpp"

using dnntune::FileLock;

TEST_CASE("a second process waits for the lock, and a killed holder releases it") {
  const std::string folder = dnntune::test::temporary_directory("lock");
  const std::string path = folder + "/entry.lock";

  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t holder = fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    auto lock = FileLock::acquire(path, {});
    if (!lock) _exit(1);
    if (write(ready[1], "x", 1) != 1) _exit(1);
    pause();  // holds the lock until killed
    _exit(0);
  }
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);

  std::string waited_for;
  std::thread killer([holder] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(holder, SIGKILL);
  });
  const auto start = std::chrono::steady_clock::now();
  auto lock = FileLock::acquire(path, [&](const std::string& who) { waited_for = who; });
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  killer.join();
  waitpid(holder, nullptr, 0);
  REQUIRE(lock);
  CHECK(waited_for == "process " + std::to_string(holder));
  CHECK(waited > 0.1);  // it did wait for the holder (a lower bound, never a speed assertion)

  // Released when its holder object goes: the next one takes it at once, without waiting.
  { FileLock released = std::move(*lock); }
  bool second_waited = false;
  auto again = FileLock::acquire(path, [&](const std::string&) { second_waited = true; });
  CHECK(again);
  CHECK_FALSE(second_waited);
  unlink(path.c_str());
  rmdir(folder.c_str());
}

TEST_CASE("a lock file that is a link or a FIFO is refused, and what it points to is left alone") {
  const std::string directory = dnntune::test::temporary_directory("lock");
  const std::string victim = directory + "/precious.txt";
  {
    FILE* file = std::fopen(victim.c_str(), "w");
    REQUIRE(file);
    std::fputs("measured records\n", file);
    std::fclose(file);
  }
  const std::string link = directory + "/entry.lock";
  REQUIRE(symlink(victim.c_str(), link.c_str()) == 0);
  const auto through_link = FileLock::acquire(link, {});
  REQUIRE_FALSE(through_link);
  CHECK(through_link.error().message == link + ": the lock file is a symbolic link; remove it");
  char content[64] = {};
  FILE* file = std::fopen(victim.c_str(), "r");
  REQUIRE(file);
  const std::size_t length = std::fread(content, 1, sizeof content - 1, file);
  std::fclose(file);
  CHECK(std::string(content, length) == "measured records\n");

  const std::string fifo = directory + "/fifo.lock";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  const auto on_fifo = FileLock::acquire(fifo, {});  // returns at once: no reader needed
  REQUIRE_FALSE(on_fifo);
  CHECK(on_fifo.error().message == fifo + ": the lock file is not a regular file; remove it");
  std::remove(link.c_str());
  std::remove(fifo.c_str());
  std::remove(victim.c_str());
  rmdir(directory.c_str());
}
