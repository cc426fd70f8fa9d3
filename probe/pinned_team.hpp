// probe/pinned_team.hpp — a team of threads, each pinned to its own set of OS CPUs, that run
// the same piece of work together from a common start. The peak-FLOP/s and bandwidth kernels
// use it to load exactly the cores (and SMT siblings) a setting names.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dnntune::probe {

class PinnedTeam {
 public:
  // One thread per entry; thread i may run only on the OS CPU `cpus[i]`.
  explicit PinnedTeam(std::vector<int> cpus);
  ~PinnedTeam();
  PinnedTeam(const PinnedTeam&) = delete;
  PinnedTeam& operator=(const PinnedTeam&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }

  // Runs work(thread_index) on every thread; returns the seconds from the common start to the
  // moment the last thread finished (the time a bandwidth or FLOP/s figure must divide by).
  double run(const std::function<void(int)>& work);

  // After the first run(): false if the OS refused to pin a thread (e.g. the CPU is outside
  // this process's cpuset).
  bool all_pinned() const { return all_pinned_; }

 private:
  void thread_main(int index, int cpu);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_signal_, done_signal_;
  const std::function<void(int)>* work_ = nullptr;
  long generation_ = 0;
  int running_ = 0;
  double last_finish_ = 0;
  bool stopping_ = false;
  bool all_pinned_ = true;
};

}  // namespace dnntune::probe
