// train/comm/mpi_session.hpp — one MPI job as the trainer and the communication calibration
// see it: MPI started once (thread level SERIALIZED at least, for the trainer's communication
// thread), this process's rank, the ranks on its node, the node count, and the few whole-job
// exchanges the reports need. A light header: no <mpi.h>, so callers stay free of MPI.
//
// MPI is started only when a launcher started this process (mpirun, srun): a plain `dnntune
// train` is one process without MPI, because a singleton MPI_Init was seen to leave the process
// with one OpenMP thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::train::comm {

// Whether a launcher started this process as one rank of a job (Open MPI's OMPI_COMM_WORLD_SIZE,
// PMI's PMI_SIZE / PMIX_RANK, or a SLURM job step's SLURM_STEP_NUM_TASKS).
bool started_by_mpi_launcher();

// This process's rank as the launcher's environment tells it, before MPI starts (0 when none).
int launcher_rank();

class MpiSession {
 public:
  // MPI_Init_thread; fails when MPI gives less than MPI_THREAD_SERIALIZED. At most one session
  // lives in a process (MPI cannot start twice); MPI_Finalize runs when it is destroyed.
  static Expected<std::unique_ptr<MpiSession>> start();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int node_count() const { return node_count_; }
  int node_index() const { return node_index_; }  // 0 .. node_count-1, nodes in order of their lowest rank
  int local_rank() const { return local_rank_; }  // rank among the processes of this node
  int local_size() const { return local_size_; }
  const std::string& library_version() const { return library_version_; }  // "Open MPI 4.1.4"

  // Every rank calls this with its own problem (or none); every rank gets the same answer:
  // the error of the lowest rank that had one. Lets all ranks of a job stop together on bad
  // input instead of leaving the others blocked in a collective.
  std::optional<Error> first_error_of_any_rank(const std::optional<Error>& mine) const;

  // Rank 0 gets every rank's `text`, in rank order; the others get an empty vector.
  std::vector<std::string> gather_to_rank0(const std::string& text) const;
  // Every rank gets rank 0's `text`.
  std::string broadcast_from_rank0(const std::string& text) const;
  // Rank 0's floats overwrite everyone's.
  void broadcast_from_rank0(float* values, std::size_t count) const;
  void barrier() const;

  // Ends the whole job at once: for a failure in the middle of training, where the other ranks
  // would otherwise wait forever in a collective.
  [[noreturn]] void abort_job(int exit_code) const;

 private:
  MpiSession() = default;
  int rank_ = 0, size_ = 1, node_count_ = 1, node_index_ = 0, local_rank_ = 0, local_size_ = 1;
  std::string library_version_;
};

}  // namespace dnntune::train::comm
