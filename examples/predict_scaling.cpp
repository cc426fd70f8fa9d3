// examples/predict_scaling.cpp — using the cost model as a C++ library: load a calibration
// (made by `dnntune fit`) and predict how training a network scales over nodes.
//
//   predict_scaling calibration.json resnet152 [processes-per-node threads batch]
#include <cstdio>
#include <iostream>
#include <string>

#include "model/calibration.hpp"
#include "model/predictor.hpp"
#include "model/scaling.hpp"
#include "workloads/zoo.hpp"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 6) {
    std::cerr << "usage: predict_scaling CALIBRATION.json NETWORK [PROCESSES_PER_NODE THREADS BATCH]\n";
    return 2;
  }
  using namespace dnntune;
  auto calibration = model::read_calibration(argv[1]);
  if (!calibration) return std::cerr << "error: " << calibration.error().message << "\n", 2;
  auto network = workloads::load_network(argv[2]);
  if (!network) return std::cerr << "error: " << network.error().message << "\n", 2;
  auto predictor = model::Predictor::from_calibration(std::move(*calibration));
  if (!predictor) return std::cerr << "error: " << predictor.error().message << "\n", 2;

  model::TrainingConfiguration configuration;
  if (argc == 6) {
    configuration.processes_per_node = std::stoi(argv[3]);
    configuration.threads_per_process = std::stoi(argv[4]);
    configuration.batch_per_process = std::stoll(argv[5]);
  } else {
    configuration.threads_per_process = predictor->rates().cores();
  }
  configuration.fabric = "hdr";
  const auto rows = model::predict_scaling(*predictor, *network, configuration, {1, 4, 16, 64, 256, 1024});
  if (!rows) return std::cerr << "error: " << rows.error().message << "\n", 2;
  for (const auto& row : *rows)
    std::printf("%5d nodes: %10.1f images/s [%.1f, %.1f], %5.1f%% efficiency\n", row.nodes,
                row.prediction.images_per_second, row.prediction.images_per_second_low,
                row.prediction.images_per_second_high, 100 * row.efficiency);
  return 0;
}
