// tests/model_validation_test.cpp — the validate summary: mean absolute percentage errors, and
// whether the predicted ranking is the measured one, telling a real disagreement from one the
// measurement's own spread cannot resolve.
#include <catch2/catch.hpp>

#include "model/validation.hpp"

using namespace dnntune::model;

namespace {

ValidationRow row(int ppn, int threads, double measured, double low, double high, double predicted) {
  ValidationRow result;
  result.network = "resnet18";
  result.configuration.processes_per_node = ppn;
  result.configuration.threads_per_process = threads;
  result.configuration.batch_per_process = 8;
  result.measured_images_per_second = measured;
  result.measured_low = low;
  result.measured_high = high;
  result.prediction.images_per_second = predicted;
  return result;
}

}  // namespace

TEST_CASE("validation: errors and the ranking") {
  SECTION("the same order, and the MAPE of the runs") {
    const auto summary = summarise_validation({row(1, 1, 10, 9.9, 10.1, 11), row(1, 2, 20, 19.8, 20.2, 19)});
    REQUIRE(summary.rankings.size() == 1);
    CHECK(summary.rankings[0].same_order);
    CHECK_FALSE(summary.rankings[0].differs_only_within_spread);
    CHECK(summary.rankings[0].regret_percent == Approx(0));
    CHECK(summary.mape_overall == Approx(7.5));  // (10% + 5%) / 2
  }
  SECTION("a different order where the measured ranges overlap is a tie at the measurement's precision") {
    const auto summary = summarise_validation({row(1, 2, 6.01, 5.97, 6.19, 5.89), row(2, 1, 5.90, 5.60, 6.00, 6.21)});
    CHECK_FALSE(summary.rankings[0].same_order);
    CHECK(summary.rankings[0].differs_only_within_spread);
    CHECK(summary.rankings[0].predicted_best == "2x1");
    CHECK(summary.rankings[0].measured_best == "1x2");
    CHECK(summary.rankings[0].regret_percent == Approx(100 * (6.01 / 5.90 - 1)));
    CHECK(validation_text({}, summary).find("a tie at this measurement's precision") != std::string::npos);
  }
  SECTION("a different order the measurement resolves is a real disagreement") {
    const auto summary = summarise_validation(
        {row(1, 1, 10, 9.9, 10.1, 11), row(1, 2, 20, 19.8, 20.2, 19), row(2, 1, 18, 17.5, 18.5, 21)});
    CHECK_FALSE(summary.rankings[0].same_order);
    CHECK_FALSE(summary.rankings[0].differs_only_within_spread);
  }
}
