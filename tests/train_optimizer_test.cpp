// tests/train_optimizer_test.cpp — the trainer's SGD with momentum (train/optimizer.hpp): the
// multi-tensor update the trainer runs on a GPU gives what libtorch's one-tensor-at-a-time SGD
// gives, step after step (checked on the CPU, where both run).
#include "tests/torch_catch.hpp"

#include "train/optimizer.hpp"

using dnntune::train::SgdWithMomentum;

namespace {

std::vector<at::Tensor> fresh_parameters() {
  torch::manual_seed(7);
  return {torch::randn({4, 3}).requires_grad_(), torch::randn({5}).requires_grad_(),
          torch::randn({2, 2, 3, 3}).requires_grad_()};
}

// A step's gradients: the same for both optimizers, different each step.
void set_gradients(std::vector<at::Tensor>& parameters, int step) {
  for (std::size_t index = 0; index < parameters.size(); ++index)
    parameters[index].mutable_grad() =
        torch::full(parameters[index].sizes(), 0.1 * (step + 1)) + parameters[index].detach() * (0.01 * index);
}

}  // namespace

TEST_CASE("the multi-tensor SGD step is libtorch's SGD with momentum, step after step") {
  for (const double momentum : {0.9, 0.0}) {
    auto one_at_a_time = fresh_parameters();
    auto multi = fresh_parameters();
    SgdWithMomentum reference(one_at_a_time, 0.05, momentum, false);
    SgdWithMomentum foreach_update(multi, 0.05, momentum, true);
    for (int step = 0; step < 4; ++step) {
      set_gradients(one_at_a_time, step);
      set_gradients(multi, step);
      reference.step();
      foreach_update.step();
      for (std::size_t index = 0; index < multi.size(); ++index)
        CHECK(torch::allclose(one_at_a_time[index], multi[index], 1e-6, 1e-7));
    }
    // The update moved the parameters (a step that did nothing would also agree).
    CHECK_FALSE(torch::allclose(multi[0], fresh_parameters()[0]));
  }
}
