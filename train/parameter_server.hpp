// train/parameter_server.hpp — data parallelism through parameter servers (the second
// architecture Krisilias et al. compare with all-reduce): the last S ranks of the job are
// servers, each holding one contiguous shard of the flattened parameters and its SGD momentum;
// the other ranks are workers that push their gradients to every server and pull the updated
// weights back.
//
// * synchronous: a server waits for every worker's gradient of the step, applies their average
//   once, and sends every worker the same weights (so all workers hold identical weights);
// * asynchronous: a server applies each gradient as it arrives, with no barrier, and answers
//   that worker alone. The staleness of an update is how many other updates the server applied
//   between the worker's pull of the weights and its push of the gradient.
// A light header: no libtorch, no <mpi.h>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace dnntune::train {

struct ParameterServerLayout {
  int workers = 0;             // ranks 0 .. workers-1
  int servers = 0;             // ranks workers .. workers+servers-1
  std::size_t parameters = 0;  // floats in the flattened parameter vector

  bool is_server(int rank) const { return rank >= workers; }
  // The contiguous slice [shard_begin, shard_end) of the parameters server s holds.
  std::size_t shard_begin(int server) const;
  std::size_t shard_end(int server) const;
};

struct SgdSettings {
  float learning_rate = 0.01f;
  float momentum = 0.9f;  // PyTorch's SGD: v = momentum * v + g; w -= learning_rate * v
};

// What a server saw: staleness_counts[k] = updates applied k versions late.
struct ServerStatistics {
  std::int64_t updates = 0;
  std::vector<std::int64_t> staleness_counts;
};

class ParameterServer {
 public:
  // Collective: every rank of the job constructs it at once (it duplicates MPI_COMM_WORLD).
  ParameterServer(ParameterServerLayout layout, bool asynchronous, SgdSettings sgd);
  ~ParameterServer();
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  // Worker: pushes this step's gradients (layout.parameters floats) to every server and pulls
  // the weights they answer with into `weights`.
  void push_and_pull(const float* gradients, float* weights);

  // Server `server` (0 .. servers-1): holds its shard of `initial_weights` (all parameters)
  // and serves until every worker has pushed `steps` times.
  ServerStatistics serve(int server, const float* initial_weights, int steps);

 private:
  struct Communicator;
  ParameterServerLayout layout_;
  bool asynchronous_;
  SgdSettings sgd_;
  std::unique_ptr<Communicator> communicator_;
  std::vector<std::int64_t> pulled_versions_;  // worker, async: by server, the version last pulled
};

}  // namespace dnntune::train
