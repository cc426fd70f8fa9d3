// calibrate/calibration_anchors.cpp — the anchors of a calibration (runner.hpp,
// train/anchor.hpp): each network of the request trained for real at each batch, in the
// plan's base setting, unless DIR/network.jsonl already has that run.
#include <filesystem>

#include "calibrate/runner.hpp"
#include "probe/memory_budget.hpp"
#include "train/anchor.hpp"
#include "train/trainer.hpp"
#include "workloads/costs.hpp"

namespace dnntune::calibrate {

namespace {

bool anchored(const std::vector<records::Measurement>& records, const std::string& fingerprint, const std::string& network,
              std::int64_t batch, const Setting& setting) {
  for (const records::Measurement& record : records)
    if (record.kind == records::MeasurementKind::network && record.pass == "iteration" &&
        record.status == records::MeasurementStatus::ok && record.machine_fingerprint == fingerprint &&
        record.network == network && record.batch == batch && record.threads == setting.threads &&
        record.smt == setting.smt && record.processes == setting.processes && record.nodes == 1)
      return true;
  return false;
}

}  // namespace

Expected<int> run_anchors(const PreparedCalibration& calibration, const std::function<void(const std::string&)>& progress) {
  const std::string path = calibration.request.directory + "/" + train::anchor_records_file;
  std::vector<records::Measurement> recorded;
  if (std::filesystem::exists(path)) {
    if (auto dropped = records::drop_unterminated_last_line(path); !dropped) return dropped.error();
    auto file = records::read_measurements(path);
    if (!file) return file.error();
    recorded = std::move(file->records);
  }
  const Setting base = calibration.plan_request.settings.empty() ? Setting{} : calibration.plan_request.settings.front();
  int trained = 0;
  // plan_request.networks are the request's models loaded, in order; the trainer takes the
  // model as given (a network file's path), records carry the network's name.
  const auto& networks = calibration.plan_request.networks;
  for (std::size_t index = 0; index < networks.size() && index < calibration.request.models.size(); ++index)
    for (const std::int64_t batch : calibration.plan_request.batches) {
      const workloads::Network& network = networks[index];
      if (anchored(recorded, calibration.fingerprint, network.name, batch, base)) continue;
      // Like every calibration step, the anchor stays within what the machine can spare: a
      // network that does not fit is left unanchored (its predictions then say so), not OOM-killed.
      const auto cost = workloads::network_cost(network, batch);
      const double needed = cost ? cost->training_memory_bytes() * base.processes : 0;
      if (const auto spare = probe::spare_memory_bytes(); spare && needed > 0.8 * static_cast<double>(*spare)) {
        if (progress)
          progress("anchor of " + network.name + " mb" + std::to_string(batch) + " skipped: training it needs about " +
                   std::to_string(static_cast<long long>(needed / 1e9 + 0.5)) + " GB, this machine can spare " +
                   std::to_string(static_cast<long long>(static_cast<double>(*spare) / 1e9)) + " GB");
        continue;
      }
      if (progress) progress("anchor: training " + network.name + " mb" + std::to_string(batch) + " for real (" +
                             to_string(base) + ")");
      train::AnchorRequest request;
      request.executable = calibration.request.executable;
      // A network file by its absolute path: the fit finds the network again from the record's command.
      const std::string& model = calibration.request.models[index];
      std::error_code error;
      request.model = std::filesystem::is_regular_file(model, error) ? std::filesystem::absolute(model).string() : model;
      request.batch = batch;
      request.threads = base.threads;
      request.processes = base.processes;
      request.directory = calibration.request.directory;
      request.warmup = calibration.request.anchor_warmup;
      request.iterations = calibration.request.anchor_iterations;
      if (auto done = train::run_anchor(request); !done) return done.error();
      ++trained;
    }
  return trained;
}

}  // namespace dnntune::calibrate
