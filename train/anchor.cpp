// train/anchor.cpp — see anchor.hpp.
#include "train/anchor.hpp"

#include <cmath>
#include <filesystem>
#include <vector>

#include "common/text_format.hpp"

#include "train/launch.hpp"

namespace dnntune::train {

Expected<std::vector<records::Measurement>> read_anchor_records(const std::string& directory) {
  const std::string path = directory + "/" + anchor_records_file;
  if (!std::filesystem::exists(path)) return std::vector<records::Measurement>{};
  if (auto dropped = records::drop_unterminated_last_line(path); !dropped) return dropped.error();
  auto file = records::read_measurements(path);
  if (!file) return file.error();
  return std::move(file->records);
}

Expected<void> run_anchor(const AnchorRequest& request) {
  if (request.batch < 1 || request.threads < 1 || request.processes < 1 || request.iterations < 1 || request.warmup < 0)
    return bad_input("an anchor needs a batch, threads, processes and timed steps of at least 1");
  // One process needs no launcher (nor Open MPI's mpirun installed): it runs on the CPUs this one
  // may use, as the calibration's base setting does.
  std::vector<std::string> argv = {request.executable, "train"};
  if (request.processes > 1) argv.insert(argv.end(), {"--launch", "--ppn", std::to_string(request.processes)});
  argv.insert(argv.end(), {"--threads", std::to_string(request.threads),
                           "--model", request.model,
                           "--batch", std::to_string(request.batch),
                           "--iters", std::to_string(request.iterations),
                           "--warmup", std::to_string(request.warmup),
                           "--record", request.directory + "/" + anchor_records_file,
                           "--json", "--output", "/dev/null"});
  // Each layer's time inside the step: the fit's context correction (model/context_correction.hpp)
  // and `calibrate --report --modules`; the zoo's layers are the C++ trainer's alone.
  if (request.runner == records::kCppTrainer) argv.push_back("--module-times");
  else argv.insert(argv.end(), {"--runner", request.runner});
  if (request.time_limit_seconds > 0)
    argv.insert(argv.end(), {"--time-limit", format_fixed(std::ceil(request.time_limit_seconds), 0)});
  if (request.allocator != "default") argv.insert(argv.end(), {"--allocator", request.allocator});
  auto code = run_and_wait(argv);
  if (!code) return code.error();
  if (*code != 0)
    return failure("the anchor run (training " + request.model + " for real) failed with exit code " +
                   std::to_string(*code));
  return {};
}

}  // namespace dnntune::train
