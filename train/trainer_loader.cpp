// train/trainer_loader.cpp — train() as the torch-free libraries reach it: the trainer runs in the
// libtorch module (torch_module/), loaded on the first call.
#include "torch_module/torch_module.hpp"
#include "train/comm/mpi_session.hpp"
#include "train/trainer.hpp"

namespace dnntune::train {

Expected<TrainingOutcome> train(const TrainOptions& options) {
  // One process refuses bad input before libtorch loads. A rank of a launched job leaves it to the
  // trainer, where every rank agrees on the first problem and rank 0 reports it (a rank that exited
  // alone would end the job before its message is out).
  if (!comm::started_by_mpi_launcher()) {
    if (auto refused = check_train_request(options); !refused) return refused.error();
  }
  auto run = torch_module::entry<Expected<TrainingOutcome>(const TrainOptions&)>("dnntune_torch_train");
  if (!run) return run.error();
  return (*run)(options);
}

}  // namespace dnntune::train
