// tests/tuner_gpu_job_script_test.cpp — the job script and launch line of a GPU pick: the #SBATCH
// header (one task per GPU, --gres=gpu:N), and what the training script must set per precision as
// variables it reads and comments (autocast and channels_last for bf16, a GradScaler for fp16,
// TF32 off for strict fp32, TF32 convolutions for tf32), quoting of the user's words, and a GPU
// without TF32 or bf16 (V100) never told to set them.
#include <catch2/catch.hpp>

#include <limits>

#include "data/builtin_machines.hpp"
#include "tests/expected_support.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_predictor.hpp"
#include "tuner/gpu_recommendation.hpp"
#include "tuner/job_script.hpp"
#include "tuner/launch_policy.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using dnntune::test::must;

namespace {

model::GpuPrediction predicted(const std::string& machine, int gpus, model::GpuPrecision precision,
                               model::GpuMemoryFormat memory_format, int nodes = 1) {
  const auto network = must(workloads::load_network("resnet50"));
  const auto node = must(model::gpu_node(must(data::load_machine(machine))));
  model::GpuConfiguration configuration;
  configuration.gpus_per_node = gpus;
  configuration.batch_per_gpu = 64;
  configuration.nodes = nodes;
  configuration.precision = precision;
  configuration.memory_format = memory_format;
  return must(model::predict_gpu(network, node, model::gpu_efficiency_priors(), configuration));
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

tuner::JobScriptOptions job() {
  tuner::JobScriptOptions options;
  options.job_name = "dnntune-resnet50";
  options.time_limit = "0-02:00:00";
  options.train_command = {"python", "train.py", "--arch", "resnet50"};
  return options;
}

}  // namespace

TEST_CASE("the GPU job script: one task per GPU, --gres, the whole node, srun with each task's rank") {
  const auto script = tuner::gpu_slurm_script(
      predicted("h200", 8, model::GpuPrecision::bf16, model::GpuMemoryFormat::channels_last, 2), job());
  CHECK(script.rfind("#!/bin/bash\n#SBATCH --job-name=dnntune-resnet50\n#SBATCH --nodes=2\n"
                     "#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:8\n#SBATCH --exclusive\n"
                     "#SBATCH --time=0-02:00:00\n",
                     0) == 0);
  CHECK(has(script, "export DNNTUNE_CPUS_PER_GPU=$(( SLURM_CPUS_ON_NODE / 8 > 0 ? SLURM_CPUS_ON_NODE / 8 : 1 ))\n"));
  CHECK(has(script, "srun --cpus-per-task=\"$DNNTUNE_CPUS_PER_GPU\""));
  CHECK(has(script,
            "'export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID; exec \"$@\"' dnntune-rank python train.py "
            "--arch resnet50\n"));
  CHECK(has(script, "export DNNTUNE_BATCH_PER_PROCESS=64\n"));
  CHECK(has(script, "export DNNTUNE_DDP_BUCKET_MB=25\n"));
  CHECK(has(script, "init_process_group('nccl')"));
  // What the hook dnntune.observe records: the network and the prediction made before the job.
  for (const std::string& text : {script, tuner::gpu_torchrun_text(predicted("h200", 8, model::GpuPrecision::bf16,
                                                                             model::GpuMemoryFormat::channels_last, 2),
                                                                   job())}) {
    CHECK(has(text, "export DNNTUNE_NETWORK=resnet50\n"));
    CHECK(has(text, "export DNNTUNE_PREDICTED_IMAGES_PER_SECOND="));
  }
}

TEST_CASE("the GPU job script says what the training script must set, per precision") {
  const auto script_for = [](model::GpuPrecision precision, model::GpuMemoryFormat memory_format) {
    return tuner::gpu_slurm_script(predicted("h200", 8, precision, memory_format), job());
  };
  SECTION("bf16 channels_last: autocast to bfloat16, channels_last, no GradScaler") {
    const auto script = script_for(model::GpuPrecision::bf16, model::GpuMemoryFormat::channels_last);
    CHECK(has(script, "export DNNTUNE_PRECISION=bf16\n"));
    CHECK(has(script, "export DNNTUNE_MEMORY_FORMAT=channels_last\n"));
    CHECK(has(script, "#   with torch.autocast('cuda', dtype=torch.bfloat16)"));
    CHECK(has(script, "#   model = model.to(memory_format=torch.channels_last)"));
    CHECK_FALSE(has(script, "GradScaler()"));
  }
  SECTION("fp16: autocast to float16 and a GradScaler") {
    const auto script = script_for(model::GpuPrecision::fp16, model::GpuMemoryFormat::channels_last);
    CHECK(has(script, "export DNNTUNE_PRECISION=fp16\n"));
    CHECK(has(script, "dtype=torch.float16"));
    CHECK(has(script, "#   scaler = torch.cuda.amp.GradScaler()"));
  }
  SECTION("strict fp32: both TF32 switches off, contiguous, no autocast") {
    const auto script = script_for(model::GpuPrecision::fp32, model::GpuMemoryFormat::contiguous);
    CHECK(has(script, "export DNNTUNE_PRECISION=fp32\n"));
    CHECK(has(script, "export DNNTUNE_MEMORY_FORMAT=contiguous\n"));
    CHECK(has(script, "#   torch.backends.cudnn.allow_tf32 = False; torch.backends.cuda.matmul.allow_tf32 = False"));
    CHECK_FALSE(has(script, "autocast"));
    CHECK_FALSE(has(script, "channels_last"));
  }
  SECTION("tf32: TF32 convolutions on, as predicted") {
    const auto script = script_for(model::GpuPrecision::tf32, model::GpuMemoryFormat::contiguous);
    CHECK(has(script, "export DNNTUNE_PRECISION=tf32\n"));
    CHECK(has(script, "#   torch.backends.cudnn.allow_tf32 = True"));
    CHECK_FALSE(has(script, "autocast"));
  }
}

TEST_CASE("a V100's script and answer never ask for TF32 or bf16") {
  for (auto precision : {model::GpuPrecision::fp32, model::GpuPrecision::fp16}) {
    const auto script =
        tuner::gpu_slurm_script(predicted("v100", 8, precision, model::GpuMemoryFormat::contiguous), job());
    CHECK_FALSE(has(script, "tf32"));
    CHECK_FALSE(has(script, "bf16"));
    CHECK_FALSE(has(script, "bfloat16"));
  }
  const auto network = must(workloads::load_network("resnet50"));
  const auto v100 = must(model::gpu_node(must(data::load_machine("v100"))));
  const auto recommendation = must(tuner::recommend_gpu(network, v100, model::gpu_efficiency_priors(), {}));
  const std::string text = tuner::gpu_recommendation_text(recommendation, true);
  const std::string json = tuner::gpu_recommendation_json(recommendation, true).dump();
  for (const std::string& answer : {text, json}) {
    CHECK_FALSE(has(answer, "tf32"));
    CHECK_FALSE(has(answer, "bfloat16"));
  }
}

TEST_CASE("the GPU recommendation: what the script must set beside the strict and the mixed answer") {
  const auto network = must(workloads::load_network("resnet50"));
  const auto h200 = must(model::gpu_node(must(data::load_machine("h200"))));
  tuner::GpuSearchOptions search;
  search.gpus_per_node = {1};
  const auto recommendation = must(tuner::recommend_gpu(network, h200, model::gpu_efficiency_priors(), search));
  REQUIRE(recommendation.best_strict);
  REQUIRE(recommendation.best_mixed);
  const std::string text = tuner::gpu_recommendation_text(recommendation, false);
  const auto strict = text.find("best strict precision: ");
  const auto mixed = text.find("best mixed precision: ");
  REQUIRE(strict != std::string::npos);
  REQUIRE(mixed != std::string::npos);
  CHECK(text.find("your training script must set: ", strict) < mixed);
  CHECK(text.find("your training script must set: ", mixed) != std::string::npos);
  CHECK(has(text.substr(mixed), "autocast"));
  const auto json = tuner::gpu_recommendation_json(recommendation, false);
  const std::string precision = *recommendation.best.configuration.precision == model::GpuPrecision::bf16   ? "bf16"
                                : *recommendation.best.configuration.precision == model::GpuPrecision::fp16 ? "fp16"
                                : *recommendation.best.configuration.precision == model::GpuPrecision::tf32 ? "tf32"
                                                                                                            : "fp32";
  CHECK(json.at("script_environment").at("DNNTUNE_PRECISION") == precision);
  CHECK(json.at("best_mixed_precision").at("script_settings").dump().find("autocast") != std::string::npos);
  CHECK_FALSE(json.at("best_strict_precision").at("script_settings").empty());
}

TEST_CASE("the GPU job script and torchrun line quote the user's words") {
  tuner::JobScriptOptions options = job();
  options.train_command = {"python", "train.py", "--name", "it's $HOME; rm -rf /"};
  auto prediction = predicted("a100", 4, model::GpuPrecision::bf16, model::GpuMemoryFormat::channels_last);
  prediction.network = "odd\nname";
  const auto script = tuner::gpu_slurm_script(prediction, options);
  CHECK(has(script, "'it'\\''s $HOME; rm -rf /'"));
  CHECK(has(script, "# dnntune: odd?name on a100"));  // a newline in a comment would start a shell line
  const auto torchrun = tuner::gpu_torchrun_text(prediction, options);
  CHECK(has(torchrun, "torchrun --nnodes=1 --nproc_per_node=4 "));
  CHECK(has(torchrun, "--no_python python train.py --name 'it'\\''s $HOME; rm -rf /'\n"));
  CHECK(has(torchrun, "export DNNTUNE_PRECISION=bf16\n"));
  CHECK(has(torchrun, "# dnntune: odd?name on a100"));
  options.train_command.clear();
  CHECK(has(tuner::gpu_slurm_script(prediction, options), "true  # put your training command here"));
  CHECK(has(tuner::gpu_torchrun_text(prediction, options), "--no_python YOUR_TRAINING_COMMAND\n"));
}

// Issue 61: a GPU pick's job script takes its --time from the one launch policy: the product of a
// million epochs of 1e12 images over the predicted rate, under a partition sinfo calls UNLIMITED,
// is the stated day with --requeue and the comment, never the whole (overflowing) training.
TEST_CASE("the GPU job script's --time: an overflowing training capped at the stated day, and said") {
  const auto prediction = predicted("h200", 8, model::GpuPrecision::bf16, model::GpuMemoryFormat::channels_last);
  tuner::LaunchRequest request;
  request.partition = "gpu";
  tuner::LaunchFacts facts;
  facts.partition_limit_seconds = std::numeric_limits<double>::infinity();  // sinfo: UNLIMITED
  auto options =
      must(tuner::job_script_options(request, prediction.network, 1e6 * 1e12 / prediction.images_per_second, facts));
  options.train_command = job().train_command;
  const auto script = tuner::gpu_slurm_script(prediction, options);
  CHECK(has(script, "#SBATCH --time=1-00:00:00\n#SBATCH --requeue\n#SBATCH --partition=gpu\n"));
  CHECK(has(script, "# --time: the whole training takes about "));
  CHECK(has(script, "partition gpu has none: sinfo says UNLIMITED"));
  CHECK(has(script, "must checkpoint"));
  CHECK(has(options.time_note, "--time capped at 1-00:00:00"));
}
