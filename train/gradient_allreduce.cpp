// train/gradient_allreduce.cpp — see gradient_allreduce.hpp.
// The communication thread is the only one that calls MPI while training steps run, and the
// main thread calls MPI only while that thread waits on the mutex, so MPI_THREAD_SERIALIZED is
// enough.
#include "train/gradient_allreduce.hpp"

#include <mpi.h>

#include <algorithm>

#include "probe/timing.hpp"

namespace dnntune::train {

struct GradientAllreduce::Communicator {
  MPI_Comm communicator = MPI_COMM_NULL;  // gradients' own: never mixed with the job's other traffic
  int ranks = 1;
};

GradientAllreduce::GradientAllreduce(const std::vector<std::size_t>& gradient_elements, std::size_t bucket_bytes)
    : bucket_of_(gradient_elements.size()),
      offset_of_(gradient_elements.size()),
      gradient_is_ready_(gradient_elements.size(), false),
      communicator_(std::make_unique<Communicator>()) {
  MPI_Comm_dup(MPI_COMM_WORLD, &communicator_->communicator);
  MPI_Comm_size(communicator_->communicator, &communicator_->ranks);
  std::size_t filled_bytes = bucket_bytes;  // start a new bucket with the first gradient
  for (std::size_t gradient = 0; gradient < gradient_elements.size(); ++gradient) {
    if (filled_bytes >= bucket_bytes) {
      buckets_.emplace_back();
      filled_bytes = 0;
    }
    Bucket& bucket = buckets_.back();
    bucket_of_[gradient] = buckets_.size() - 1;
    offset_of_[gradient] = bucket.values.size();
    bucket.gradients.push_back(gradient);
    bucket.values.resize(bucket.values.size() + gradient_elements[gradient]);
    filled_bytes += gradient_elements[gradient] * sizeof(float);
  }
  if (!buckets_.empty()) thread_ = std::thread([this] { communicate(); });
}

GradientAllreduce::~GradientAllreduce() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  MPI_Comm_free(&communicator_->communicator);
}

float* GradientAllreduce::gradient_slot(std::size_t gradient) {
  return buckets_[bucket_of_[gradient]].values.data() + offset_of_[gradient];
}

void GradientAllreduce::gradient_ready(std::size_t gradient) {
  bool bucket_complete = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (gradient_is_ready_[gradient]) return;
    gradient_is_ready_[gradient] = true;
    Bucket& bucket = buckets_[bucket_of_[gradient]];
    bucket_complete = ++bucket.ready == bucket.gradients.size();
  }
  if (bucket_complete) changed_.notify_all();
}

void GradientAllreduce::wait_until_reduced() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (std::size_t gradient = 0; gradient < gradient_is_ready_.size(); ++gradient) {
    if (gradient_is_ready_[gradient]) continue;
    Bucket& bucket = buckets_[bucket_of_[gradient]];
    const std::size_t next_offset = gradient + 1 < offset_of_.size() && bucket_of_[gradient + 1] == bucket_of_[gradient]
                                        ? offset_of_[gradient + 1]
                                        : bucket.values.size();
    std::fill(bucket.values.begin() + static_cast<std::ptrdiff_t>(offset_of_[gradient]),
              bucket.values.begin() + static_cast<std::ptrdiff_t>(next_offset), 0.0f);
    gradient_is_ready_[gradient] = true;
    ++bucket.ready;
  }
  changed_.notify_all();
  changed_.wait(lock, [this] { return buckets_reduced_ == buckets_.size(); });
  // Next step: the communication thread waits for bucket 0 with buckets_reduced_ back at 0.
  for (Bucket& bucket : buckets_) bucket.ready = 0;
  std::fill(gradient_is_ready_.begin(), gradient_is_ready_.end(), false);
  buckets_reduced_ = 0;
}

std::size_t GradientAllreduce::largest_bucket_bytes() const {
  std::size_t largest = 0;
  for (const Bucket& bucket : buckets_) largest = std::max(largest, bucket.values.size() * sizeof(float));
  return largest;
}

void GradientAllreduce::communicate() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::size_t next = 0;
  for (;;) {
    changed_.wait(lock, [&] {
      return stopping_ || (buckets_reduced_ == next && buckets_[next].ready == buckets_[next].gradients.size());
    });
    if (stopping_) return;
    lock.unlock();
    Bucket& bucket = buckets_[next];
    const double start = probe::now_seconds();
    MPI_Allreduce(MPI_IN_PLACE, bucket.values.data(), static_cast<int>(bucket.values.size()), MPI_FLOAT, MPI_SUM,
                  communicator_->communicator);
    const float average = 1.0f / static_cast<float>(communicator_->ranks);
    for (float& value : bucket.values) value *= average;
    step_communication_seconds_ += probe::now_seconds() - start;
    lock.lock();
    if (++next == buckets_.size()) {
      last_step_communication_seconds_ = step_communication_seconds_;
      step_communication_seconds_ = 0;
      next = 0;
    }
    ++buckets_reduced_;
    changed_.notify_all();
  }
}

}  // namespace dnntune::train
