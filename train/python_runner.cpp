// train/python_runner.cpp — see python_runner.hpp.
#include "train/python_runner.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "common/json_file.hpp"
#include "common/text_format.hpp"
#include "train/launch.hpp"

namespace dnntune::train {

// train/python/torchvision_training.py, embedded by train/CMakeLists.txt.
extern const char* const torchvision_training_script;

namespace {

// A temporary file for one run's report (the script writes it; removed when this goes).
class ReportFile {
 public:
  ReportFile() {
    std::string pattern = "/tmp/dnntune-python-XXXXXX";
    const int descriptor = mkstemp(pattern.data());
    if (descriptor >= 0) {
      close(descriptor);
      path_ = pattern;
    }
  }
  ~ReportFile() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove(path_, ignored);
  }
  ReportFile(const ReportFile&) = delete;
  ReportFile& operator=(const ReportFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs the script with `arguments` and reads its report; exit 2 is a refusal the report explains.
Expected<nlohmann::json> run_script(std::vector<std::string> arguments) {
  ReportFile report;
  if (report.path().empty()) return failure("cannot create a temporary file under /tmp for the python runner");
  std::vector<std::string> argv = {python_executable(), "-c", torchvision_training_script};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.insert(argv.end(), {"--output", report.path()});
  const auto code = run_and_wait(argv);
  if (!code)
    return bad_input(code.error().message +
                     ": install python3-torch and python3-torchvision, or set DNNTUNE_PYTHON "
                     "to a Python that has them");
  std::error_code error;
  const bool wrote = std::filesystem::file_size(report.path(), error) > 0 && !error;
  auto written =
      wrote ? read_json_file(report.path()) : Expected<nlohmann::json>(failure("the python runner wrote no report"));
  if (*code == 2 && written && written->contains("error")) return bad_input(written->at("error").get<std::string>());
  if (*code != 0)
    return failure("the python runner (" + python_executable() + ") failed with exit code " + std::to_string(*code) +
                   " (its messages are above)");
  if (!written) return written.error();
  return std::move(*written);
}

}  // namespace

std::string python_executable() {
  const char* chosen = std::getenv("DNNTUNE_PYTHON");
  return chosen && *chosen ? chosen : "/usr/bin/python3";
}

Expected<void> check_python_runner(const std::string& network_name) {
  auto checked = run_script({"--model", network_name, "--check"});
  if (!checked) return checked.error();
  return {};
}

Expected<std::string> python_rendezvous_address(bool one_node) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) return failure("cannot open a socket for the python ranks' rendezvous");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;  // the kernel picks a free port; rank 0's torch.distributed store binds it next
  socklen_t length = sizeof address;
  const bool bound = bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(listener);
  if (!bound) return failure("cannot find a free port for the python ranks' rendezvous");
  std::string host = "127.0.0.1";
  if (!one_node) {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return failure("cannot read this host's name for the rendezvous");
    host = name;
  }
  return host + ":" + std::to_string(ntohs(address.sin_port));
}

std::vector<std::string> python_training_arguments(const TrainOptions& options, const workloads::Network& network,
                                                   int threads) {
  const workloads::Shape image = network.input_shape();
  return {"--model",
          network.name,
          "--batch",
          std::to_string(options.batch),
          "--image-size",
          std::to_string(image.height),  // the zoo's (299 for Inception), 1000 classes as its
          "--threads",
          std::to_string(threads),
          "--iters",
          std::to_string(options.iterations),
          "--warmup",
          std::to_string(options.warmup),
          "--time-limit",
          format_fixed(options.time_limit_seconds, 3),
          "--lr",
          format_fixed(options.learning_rate, 6),
          "--momentum",
          format_fixed(options.momentum, 6),
          "--bucket-mb",
          format_fixed(options.bucket_megabytes, 3),
          "--seed",
          std::to_string(options.seed),
          "--device",
          options.device,
          "--precision",
          options.precision,
          "--memory-format",
          options.memory_format};
}

Expected<nlohmann::json> train_python_rank(const TrainOptions& options, const workloads::Network& network,
                                           const PythonRank& rank) {
  if (rank.ranks > 1) {
    const auto colon = rank.rendezvous.rfind(':');
    if (colon == std::string::npos) return failure("no rendezvous address for the python ranks");
    // The child inherits them: torch.distributed's environment initialization reads these.
    setenv("MASTER_ADDR", rank.rendezvous.substr(0, colon).c_str(), 1);
    setenv("MASTER_PORT", rank.rendezvous.substr(colon + 1).c_str(), 1);
  }
  setenv("RANK", std::to_string(rank.rank).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank.local_rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(rank.ranks).c_str(), 1);
  setenv("OMP_NUM_THREADS", std::to_string(rank.threads).c_str(), 1);
  auto report = run_script(python_training_arguments(options, network, rank.threads));
  if (!report) return report.error();
  try {
    nlohmann::json samples = report->at("samples");
    const std::size_t steps = samples.at("iteration").size();
    // What the C++ trainer measures apart and DDP does not: its all-reduce ends inside backward.
    for (const char* phase : {"exposed_communication", "communication", "forward_page_faults", "backward_page_faults"})
      samples[phase] = std::vector<double>(steps, 0.0);
    return nlohmann::json{{"samples", samples},
                          {"losses", report->at("losses")},
                          {"cpus", report->at("cpus")},
                          {"torch_threads", report->at("threads")},
                          {"parameters", report->at("parameters")},
                          {"device", report->value("device", "cpu")},
                          {"precision", report->value("precision", "fp32")},
                          {"memory_format", report->value("memory_format", "contiguous")},
                          {"skipped_steps", report->value("skipped_steps", 0)},
                          {"versions", "PyTorch " + report->at("torch_version").get<std::string>() + " from Python " +
                                           report->at("python_version").get<std::string>() + ", torchvision " +
                                           report->at("torchvision_version").get<std::string>()}};
  } catch (const nlohmann::json::exception& exception) {
    return failure(std::string("the python runner's report is not as expected: ") + exception.what());
  }
}

}  // namespace dnntune::train
