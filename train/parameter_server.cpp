// train/parameter_server.cpp — see parameter_server.hpp.
// Messages: a worker first posts its receives for the servers' answers, then sends; so a
// server's blocking send of the weights always finds its receive. Asynchronous messages carry a
// version header (the server's update count) ahead of the floats, on their own tag.
#include "train/parameter_server.hpp"

#include <mpi.h>

#include <algorithm>

namespace dnntune::train {
namespace {

constexpr int version_tag = 1;
constexpr int gradient_tag = 2;
constexpr int weights_tag = 3;

int count_of(std::size_t begin, std::size_t end) { return static_cast<int>(end - begin); }

}  // namespace

struct ParameterServer::Communicator {
  MPI_Comm communicator = MPI_COMM_NULL;
};

std::size_t ParameterServerLayout::shard_begin(int server) const {
  return parameters * static_cast<std::size_t>(server) / static_cast<std::size_t>(servers);
}

std::size_t ParameterServerLayout::shard_end(int server) const { return shard_begin(server + 1); }

ParameterServer::ParameterServer(ParameterServerLayout layout, bool asynchronous, SgdSettings sgd)
    : layout_(layout),
      asynchronous_(asynchronous),
      sgd_(sgd),
      communicator_(std::make_unique<Communicator>()),
      pulled_versions_(static_cast<std::size_t>(layout.servers), 0) {
  MPI_Comm_dup(MPI_COMM_WORLD, &communicator_->communicator);
}

ParameterServer::~ParameterServer() { MPI_Comm_free(&communicator_->communicator); }

void ParameterServer::push_and_pull(const float* gradients, float* weights) {
  const MPI_Comm comm = communicator_->communicator;
  std::vector<MPI_Request> requests;
  std::vector<std::int64_t> answered_versions(pulled_versions_.size());
  for (int server = 0; server < layout_.servers; ++server) {
    const int rank = layout_.workers + server;
    const std::size_t begin = layout_.shard_begin(server), end = layout_.shard_end(server);
    if (asynchronous_) {
      requests.emplace_back();
      MPI_Irecv(&answered_versions[static_cast<std::size_t>(server)], 1, MPI_INT64_T, rank, version_tag, comm,
                &requests.back());
    }
    requests.emplace_back();
    MPI_Irecv(weights + begin, count_of(begin, end), MPI_FLOAT, rank, weights_tag, comm, &requests.back());
  }
  for (int server = 0; server < layout_.servers; ++server) {
    const int rank = layout_.workers + server;
    const std::size_t begin = layout_.shard_begin(server), end = layout_.shard_end(server);
    if (asynchronous_) {
      requests.emplace_back();
      MPI_Isend(&pulled_versions_[static_cast<std::size_t>(server)], 1, MPI_INT64_T, rank, version_tag, comm,
                &requests.back());
    }
    requests.emplace_back();
    MPI_Isend(gradients + begin, count_of(begin, end), MPI_FLOAT, rank, gradient_tag, comm, &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  if (asynchronous_) pulled_versions_ = answered_versions;
}

ServerStatistics ParameterServer::serve(int server, const float* initial_weights, int steps) {
  const MPI_Comm comm = communicator_->communicator;
  const std::size_t begin = layout_.shard_begin(server), end = layout_.shard_end(server);
  const int count = count_of(begin, end);
  std::vector<float> weights(initial_weights + begin, initial_weights + end);
  std::vector<float> velocity(weights.size(), 0.0f);
  std::vector<float> received(weights.size()), gradient(weights.size());
  ServerStatistics statistics;

  const auto apply = [&](float scale) {
    for (std::size_t i = 0; i < weights.size(); ++i) {
      velocity[i] = sgd_.momentum * velocity[i] + scale * gradient[i];
      weights[i] -= sgd_.learning_rate * velocity[i];
    }
    ++statistics.updates;
  };
  const auto count_staleness = [&](std::int64_t staleness) {
    if (statistics.staleness_counts.size() <= static_cast<std::size_t>(staleness))
      statistics.staleness_counts.resize(static_cast<std::size_t>(staleness) + 1, 0);
    ++statistics.staleness_counts[static_cast<std::size_t>(staleness)];
  };

  if (!asynchronous_) {
    for (int step = 0; step < steps; ++step) {
      // Summed in worker order, so the result does not depend on who arrived first.
      std::fill(gradient.begin(), gradient.end(), 0.0f);
      for (int worker = 0; worker < layout_.workers; ++worker) {
        MPI_Recv(received.data(), count, MPI_FLOAT, worker, gradient_tag, comm, MPI_STATUS_IGNORE);
        for (std::size_t i = 0; i < gradient.size(); ++i) gradient[i] += received[i];
      }
      apply(1.0f / static_cast<float>(layout_.workers));
      count_staleness(0);
      std::vector<MPI_Request> sends(static_cast<std::size_t>(layout_.workers));
      for (int worker = 0; worker < layout_.workers; ++worker)
        MPI_Isend(weights.data(), count, MPI_FLOAT, worker, weights_tag, comm,
                  &sends[static_cast<std::size_t>(worker)]);
      MPI_Waitall(layout_.workers, sends.data(), MPI_STATUSES_IGNORE);
    }
    return statistics;
  }

  std::int64_t version = 0;
  const std::int64_t pushes = static_cast<std::int64_t>(steps) * layout_.workers;
  for (std::int64_t push = 0; push < pushes; ++push) {
    std::int64_t pulled_version = 0;
    MPI_Status status;
    MPI_Recv(&pulled_version, 1, MPI_INT64_T, MPI_ANY_SOURCE, version_tag, comm, &status);
    const int worker = status.MPI_SOURCE;
    MPI_Recv(gradient.data(), count, MPI_FLOAT, worker, gradient_tag, comm, MPI_STATUS_IGNORE);
    count_staleness(version - pulled_version);
    apply(1.0f);
    ++version;
    MPI_Send(&version, 1, MPI_INT64_T, worker, version_tag, comm);
    MPI_Send(weights.data(), count, MPI_FLOAT, worker, weights_tag, comm);
  }
  return statistics;
}

}  // namespace dnntune::train
