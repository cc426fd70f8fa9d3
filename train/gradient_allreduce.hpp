// train/gradient_allreduce.hpp — synchronous data parallelism's gradient exchange, the way
// Horovod and PyTorch DDP do it: gradients are copied into fused buckets as the backward pass
// produces them, and a communication thread all-reduces (sums, then averages) each bucket over
// MPI as soon as it is complete, while the rest of the backward pass still runs. What is left to
// wait for after backward is the exposed communication.
//
// Buckets are reduced strictly in their order (0, 1, ...), the same on every rank, so that the
// collectives of all ranks match; they are laid out in the order gradients are expected to
// become ready (the reverse of the forward pass). A light header: no libtorch, no <mpi.h>.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dnntune::train {

class GradientAllreduce {
 public:
  // `gradient_elements[i]`: the size (floats) of gradient i, numbered in the order gradients
  // are expected to become ready. A bucket is closed once it holds at least `bucket_bytes`
  // (one large gradient may make a bucket of its own). Must be constructed on every rank at
  // once, from an MPI session (it duplicates MPI_COMM_WORLD).
  GradientAllreduce(const std::vector<std::size_t>& gradient_elements, std::size_t bucket_bytes);
  ~GradientAllreduce();
  GradientAllreduce(const GradientAllreduce&) = delete;
  GradientAllreduce& operator=(const GradientAllreduce&) = delete;

  // Where gradient i is copied; after wait_until_reduced() it holds the average over ranks.
  float* gradient_slot(std::size_t gradient);
  // Gradient i is in its slot. The bucket's all-reduce starts once all its gradients are in.
  void gradient_ready(std::size_t gradient);
  // Called after the backward pass: gradients that never became ready (a parameter that took
  // no part in this step) count as zero; then waits until every bucket is reduced and resets
  // for the next step.
  void wait_until_reduced();

  int bucket_count() const { return static_cast<int>(buckets_.size()); }
  std::size_t largest_bucket_bytes() const;
  // Seconds the communication thread spent in all-reduces during the last step (overlapped and
  // exposed together).
  double last_step_communication_seconds() const { return last_step_communication_seconds_; }

 private:
  struct Bucket {
    std::vector<float> values;
    std::vector<std::size_t> gradients;  // which gradients it holds
    std::size_t ready = 0;               // how many of them are in (under mutex_)
  };
  struct Communicator;

  void communicate();  // the communication thread

  std::vector<Bucket> buckets_;
  std::vector<std::size_t> bucket_of_;   // by gradient
  std::vector<std::size_t> offset_of_;   // by gradient, in floats within its bucket
  std::vector<bool> gradient_is_ready_;  // by gradient (under mutex_)
  std::unique_ptr<Communicator> communicator_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t buckets_reduced_ = 0;             // this step (under mutex_)
  bool stopping_ = false;                       // under mutex_
  double step_communication_seconds_ = 0;       // communication thread only
  double last_step_communication_seconds_ = 0;  // written before buckets_reduced_ completes
  std::thread thread_;
};

}  // namespace dnntune::train
