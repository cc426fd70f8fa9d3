// train/trainer_loader.cpp — train() as the torch-free libraries reach it: the trainer runs in the
// libtorch module (torch_module/), loaded on the first call.
#include "torch_module/torch_module.hpp"
#include "train/comm/mpi_session.hpp"
#include "train/trainer.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::train {

Expected<TrainingOutcome> train(const TrainOptions& options) {
  // One process refuses bad options and an unknown network before libtorch loads (about a second).
  // A rank of a launched job leaves it to the trainer, where every rank agrees on the first problem
  // and rank 0 reports it (a rank that exited alone would end the job before its message is out).
  if (!comm::started_by_mpi_launcher()) {
    if (auto valid = check_train_options(options); !valid) return valid.error();
    if (auto network = workloads::load_network(options.model); !network) return network.error();
  }
  auto run = torch_module::entry<Expected<TrainingOutcome>(const TrainOptions&)>("dnntune_torch_train");
  if (!run) return run.error();
  return (*run)(options);
}

}  // namespace dnntune::train
