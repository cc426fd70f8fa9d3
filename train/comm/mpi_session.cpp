// train/comm/mpi_session.cpp — see mpi_session.hpp.
#include "train/comm/mpi_session.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>

namespace dnntune::train::comm {
namespace {

bool has_environment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value;
}

// Strings travel as a length, then the bytes.
std::string broadcast_text(const std::string& text, int root, MPI_Comm communicator) {
  int rank = 0;
  MPI_Comm_rank(communicator, &rank);
  long long length = static_cast<long long>(text.size());
  MPI_Bcast(&length, 1, MPI_LONG_LONG, root, communicator);
  std::string received = rank == root ? text : std::string(static_cast<std::size_t>(length), '\0');
  if (length > 0) MPI_Bcast(received.data(), static_cast<int>(length), MPI_CHAR, root, communicator);
  return received;
}

}  // namespace

bool started_by_mpi_launcher() {
  return has_environment("OMPI_COMM_WORLD_SIZE") || has_environment("PMI_SIZE") || has_environment("PMIX_RANK") ||
         has_environment("SLURM_STEP_NUM_TASKS");
}

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (has_environment(name)) return std::atoi(std::getenv(name));
  return 0;
}

Expected<std::unique_ptr<MpiSession>> MpiSession::start() {
  int already = 0;
  MPI_Initialized(&already);
  if (already) return failure("MPI was already started in this process");
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    return failure("MPI_Init_thread failed");
  std::unique_ptr<MpiSession> session(new MpiSession());
  if (provided < MPI_THREAD_SERIALIZED)
    return failure("the MPI library gives thread level " + std::to_string(provided) +
                   ", the trainer needs MPI_THREAD_SERIALIZED or better (its communication runs "
                   "on a thread of its own)");
  MPI_Comm_rank(MPI_COMM_WORLD, &session->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &session->size_);

  MPI_Comm node_communicator;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, session->rank_, MPI_INFO_NULL, &node_communicator);
  MPI_Comm_rank(node_communicator, &session->local_rank_);
  MPI_Comm_size(node_communicator, &session->local_size_);
  // Nodes are numbered by their lowest rank: each node's local rank 0 counts the leaders before it.
  const int is_leader = session->local_rank_ == 0 ? 1 : 0;
  int leaders_up_to_me = 0;
  MPI_Scan(&is_leader, &leaders_up_to_me, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int node_index = leaders_up_to_me - 1;
  MPI_Bcast(&node_index, 1, MPI_INT, 0, node_communicator);
  session->node_index_ = node_index;
  MPI_Allreduce(&is_leader, &session->node_count_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&node_communicator);

  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<std::size_t>(length));
  // Open MPI: "Open MPI v4.1.4, package: ..."; keep the part before the first comma.
  text = text.substr(0, text.find(','));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  session->library_version_ = text;
  return session;
}

MpiSession::~MpiSession() { MPI_Finalize(); }

std::optional<Error> MpiSession::first_error_of_any_rank(const std::optional<Error>& mine) const {
  const int my_rank_if_failed = mine ? rank_ : size_;
  int first_failed = size_;
  MPI_Allreduce(&my_rank_if_failed, &first_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_failed == size_) return std::nullopt;
  int kind = mine ? static_cast<int>(mine->kind) : 0;
  MPI_Bcast(&kind, 1, MPI_INT, first_failed, MPI_COMM_WORLD);
  const std::string message = broadcast_text(mine ? mine->message : "", first_failed, MPI_COMM_WORLD);
  return Error{message, static_cast<ErrorKind>(kind)};
}

std::vector<std::string> MpiSession::gather_to_rank0(const std::string& text) const {
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(rank_ == 0 ? size_ : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size(), 0);
  std::string all;
  if (rank_ == 0) {
    for (std::size_t i = 1; i < lengths.size(); ++i) offsets[i] = offsets[i - 1] + lengths[i - 1];
    all.resize(static_cast<std::size_t>(offsets.back() + lengths.back()));
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < lengths.size(); ++i)
    texts.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  return texts;
}

std::string MpiSession::broadcast_from_rank0(const std::string& text) const {
  return broadcast_text(text, 0, MPI_COMM_WORLD);
}

void MpiSession::broadcast_from_rank0(float* values, std::size_t count) const {
  // MPI counts are int: send large arrays in pieces.
  constexpr std::size_t piece = std::size_t{1} << 28;
  for (std::size_t offset = 0; offset < count; offset += piece) {
    const std::size_t length = std::min(piece, count - offset);
    MPI_Bcast(values + offset, static_cast<int>(length), MPI_FLOAT, 0, MPI_COMM_WORLD);
  }
}

void MpiSession::barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

void MpiSession::abort_job(int exit_code) const {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();
}

}  // namespace dnntune::train::comm
