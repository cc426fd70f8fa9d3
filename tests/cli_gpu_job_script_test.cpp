// tests/cli_gpu_job_script_test.cpp — `recommend --machine GPU --format slurm|torchrun` end to
// end: a ready job script for the pick with the settings the training must use, the training
// command after `--` quoted into it, --time/--partition/--account as on CPU nodes, and the CPU-only
// launch format and options refused with one line, exit 2, nothing written.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using dnntune::test::run_dnntune;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("dnntune recommend --machine GPU --format slurm writes the pick's job script") {
  const auto answer = run_dnntune({"recommend", "--model", "resnet50", "--machine", "h200", "--json"});
  REQUIRE(answer.exit_code == 0);
  const auto document = nlohmann::json::parse(answer.out);
  const auto& best = document.at("best").at("configuration");
  const auto result =
      run_dnntune({"recommend", "--model", "resnet50", "--machine", "h200", "--format", "slurm", "--partition", "gpu",
                   "--account", "proj1", "--", "python", "train.py", "--tag", "a b"});
  REQUIRE(result.exit_code == 0);
  const std::string& script = result.out;
  const std::string gpus = std::to_string(best.at("gpus_per_node").get<int>());
  CHECK(script.rfind("#!/bin/bash\n", 0) == 0);
  CHECK(has(script, "#SBATCH --ntasks-per-node=" + gpus + "\n"));
  CHECK(has(script, "#SBATCH --gres=gpu:" + gpus + "\n"));
  CHECK(has(script, "#SBATCH --partition=gpu\n"));
  CHECK(has(script, "#SBATCH --account=proj1\n"));
  CHECK(has(script, "#SBATCH --time="));
  CHECK(has(script, "# --time: the predicted training"));
  CHECK(has(script, "export DNNTUNE_PRECISION=" + best.at("precision").get<std::string>() + "\n"));
  CHECK(has(script, "export DNNTUNE_MEMORY_FORMAT=" + best.at("memory_format").get<std::string>() + "\n"));
  CHECK(has(script, "# Your training script must set"));
  for (const auto& setting : document.at("script_settings")) CHECK(has(script, "#   " + setting.get<std::string>()));
  for (const auto& [name, value] : document.at("script_environment").items())
    CHECK(has(script, "export " + name + "=" + value.get<std::string>() + "\n"));
  CHECK(has(script, "dnntune-rank python train.py --tag 'a b'\n"));

  const auto torchrun = run_dnntune(
      {"recommend", "--model", "resnet50", "--machine", "h200", "--format", "torchrun", "--", "python", "train.py"});
  REQUIRE(torchrun.exit_code == 0);
  CHECK(has(torchrun.out, "torchrun --nnodes=1 --nproc_per_node=" + gpus + " "));
  CHECK(has(torchrun.out, "export DNNTUNE_PRECISION=" + best.at("precision").get<std::string>() + "\n"));
}

TEST_CASE("dnntune recommend --machine v100 --format slurm never asks for TF32 or bf16") {
  const auto result = run_dnntune({"recommend", "--model", "resnet50", "--machine", "v100", "--format", "slurm"});
  REQUIRE(result.exit_code == 0);
  CHECK(has(result.out, "#SBATCH --gres=gpu:"));
  CHECK_FALSE(has(result.out, "tf32"));
  CHECK_FALSE(has(result.out, "bf16"));
  CHECK_FALSE(has(result.out, "bfloat16"));
  const auto strict = run_dnntune(
      {"recommend", "--model", "resnet50", "--machine", "v100", "--precision", "fp32", "--format", "slurm"});
  REQUIRE(strict.exit_code == 0);
  CHECK(has(strict.out, "export DNNTUNE_PRECISION=fp32\n"));
  CHECK_FALSE(has(strict.out, "tf32"));
}

TEST_CASE("dnntune recommend --machine GPU: what a GPU job cannot take is refused with one line") {
  for (const std::vector<std::string>& arguments : {std::vector<std::string>{"--format", "mpirun"},
                                                    {"--format", "slurm", "--allocator", "jemalloc"},
                                                    {"--format", "slurm", "--partition", "a b"},
                                                    {"--format", "slurm", "--time", "soon"}}) {
    std::vector<std::string> command = {"recommend", "--model", "resnet50", "--machine", "h200"};
    command.insert(command.end(), arguments.begin(), arguments.end());
    const auto result = run_dnntune(command);
    INFO(arguments.back());
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(result.err.rfind("dnntune: error: ", 0) == 0);
  }
  const auto mpirun = run_dnntune({"recommend", "--model", "resnet50", "--machine", "h200", "--format", "mpirun"});
  CHECK(has(mpirun.err, "--format slurm"));
  CHECK(has(mpirun.err, "--format torchrun"));
}
