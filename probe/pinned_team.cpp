// probe/pinned_team.cpp — see pinned_team.hpp.
#include "probe/pinned_team.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include "probe/timing.hpp"

namespace dnntune::probe {

PinnedTeam::PinnedTeam(std::vector<int> cpus) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (std::size_t index = 0; index < cpus.size(); ++index)
    threads_.emplace_back(&PinnedTeam::thread_main, this, static_cast<int>(index), cpus[index]);
}

PinnedTeam::~PinnedTeam() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_signal_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void PinnedTeam::thread_main(int index, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const bool pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
  long seen_generation = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!pinned) all_pinned_ = false;
  for (;;) {
    start_signal_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
    if (stopping_) return;
    seen_generation = generation_;
    const auto* work = work_;
    lock.unlock();
    (*work)(index);
    const double finish = now_seconds();
    lock.lock();
    last_finish_ = std::max(last_finish_, finish);
    if (--running_ == 0) done_signal_.notify_one();
  }
}

double PinnedTeam::run(const std::function<void(int)>& work) {
  std::unique_lock<std::mutex> lock(mutex_);
  work_ = &work;
  running_ = size();
  last_finish_ = 0;
  ++generation_;
  const double start = now_seconds();
  start_signal_.notify_all();
  done_signal_.wait(lock, [&] { return running_ == 0; });
  work_ = nullptr;
  return last_finish_ - start;
}

}  // namespace dnntune::probe
