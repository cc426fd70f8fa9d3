// train/trainer_loader.cpp — train() as the torch-free libraries reach it: the trainer runs in the
// libtorch module (torch_module/), loaded on the first call.
#include "torch_module/torch_module.hpp"
#include "train/trainer.hpp"

namespace dnntune::train {

Expected<TrainingOutcome> train(const TrainOptions& options) {
  auto run = torch_module::entry<Expected<TrainingOutcome>(const TrainOptions&)>("dnntune_torch_train");
  if (!run) return run.error();
  return (*run)(options);
}

}  // namespace dnntune::train
