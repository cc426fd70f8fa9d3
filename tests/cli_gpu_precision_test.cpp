// tests/cli_gpu_precision_test.cpp — the GPU commands' --precision and --memory-format end to
// end: a precision the GPU lacks is bad input (exit 2, nothing written), the answer names its
// numerics, what it rests on and what the script sets, and recommend shows strict beside mixed.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using dnntune::test::run_dnntune;

TEST_CASE("dnntune GPU commands: precision rules") {
  SECTION("no TF32 or bf16 on a V100") {
    for (const char* precision : {"tf32", "bf16"}) {
      const auto result =
          run_dnntune({"predict", "--model", "resnet50", "--machine", "v100", "--precision", precision});
      CHECK(result.exit_code == 2);
      CHECK(result.out.empty());
      CHECK(result.err.find("v100") != std::string::npos);
    }
    CHECK(run_dnntune({"predict", "--model", "resnet50", "--machine", "v100", "--precision", "fp16"}).exit_code == 0);
    CHECK(run_dnntune({"predict", "--model", "resnet50", "--machine", "v100", "--precision", "fp8"}).exit_code == 2);
    CHECK(
        run_dnntune({"predict", "--model", "resnet50", "--machine", "skylake-8180", "--precision", "bf16"}).exit_code ==
        2);
  }
  SECTION("an H200 in bf16 channels_last answers with a band, what it rests on and the script's settings") {
    const auto result = run_dnntune({"predict", "--model", "resnet50", "--machine", "h200", "--batch", "256",
                                     "--precision", "bf16", "--memory-format", "channels_last", "--json"});
    REQUIRE(result.exit_code == 0);
    const auto document = nlohmann::json::parse(result.out);
    CHECK(document.at("configuration").at("precision") == "bf16");
    CHECK(document.at("configuration").at("memory_format") == "channels_last");
    CHECK(document.at("band").at("low") < document.at("images_per_second"));
    CHECK(document.at("confidence") != "spec");  // the built-in reference was measured on an H200
    CHECK_FALSE(document.at("confidence_reason").get<std::string>().empty());
    CHECK(document.at("script_settings").dump().find("bfloat16") != std::string::npos);
    const auto fp16 = run_dnntune({"predict", "--model", "resnet50", "--machine", "h200", "--precision", "fp16"});
    CHECK(fp16.out.find("GradScaler") != std::string::npos);
  }
  SECTION("recommend on an H200 shows strict and mixed precision side by side") {
    const auto result = run_dnntune({"recommend", "--model", "resnet50", "--machine", "h200", "--gpus", "1"});
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("best strict precision") != std::string::npos);
    CHECK(result.out.find("best mixed precision") != std::string::npos);
    CHECK(result.out.find("your training script must set:") != std::string::npos);
    CHECK(run_dnntune({"recommend", "--model", "resnet50", "--machine", "v100", "--precision", "bf16"}).exit_code == 2);
  }
}
