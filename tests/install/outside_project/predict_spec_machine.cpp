// tests/install/outside_project/predict_spec_machine.cpp — uses the installed library as a user
// would: a built-in spec machine with the built-in reference calibration, one prediction.
//   predict_spec_machine MACHINE NETWORK
#include <cstdio>
#include <iostream>

#include <dnntune/data/builtin_machines.hpp>
#include <dnntune/model/calibration.hpp>
#include <dnntune/model/predictor.hpp>
#include <dnntune/workloads/zoo.hpp>

int main(int argc, char** argv) {
  if (argc != 3) return std::cerr << "usage: predict_spec_machine MACHINE NETWORK\n", 2;
  using namespace dnntune;
  auto machine = data::load_machine(argv[1]);
  if (!machine) return std::cerr << machine.error().message << "\n", 2;
  auto reference = model::calibration_from_json_text(data::builtin_reference_calibration("torch"), "reference");
  if (!reference) return std::cerr << reference.error().message << "\n", 2;
  auto predictor = model::Predictor::from_spec(*machine, *reference);
  if (!predictor) return std::cerr << predictor.error().message << "\n", 2;
  auto network = workloads::load_network(argv[2]);
  if (!network) return std::cerr << network.error().message << "\n", 2;
  model::TrainingConfiguration configuration;
  configuration.processes_per_node = 2;
  configuration.threads_per_process = predictor->rates().cores() / 2;
  auto prediction = predictor->predict(*network, configuration);
  if (!prediction) return std::cerr << prediction.error().message << "\n", 2;
  std::printf("%s on %s: %.1f images/s [%.1f, %.1f]\n", argv[2], argv[1], prediction->images_per_second,
              prediction->images_per_second_low, prediction->images_per_second_high);
  return 0;
}
