// tests/model_keys_test.cpp — the typed key of a calibration's measured layers
// (MeasuredLayerKey): the file keeps its "descriptor|pass|batch" text, reads back the same keys,
// and refuses a key that is not one.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "model/calibration.hpp"
#include "model/fit.hpp"
#include "tests/model_fixtures.hpp"

using namespace dnntune;
using namespace dnntune::model;

TEST_CASE("a measured layer key is descriptor|pass|batch on disk") {
  const MeasuredLayerKey key = measured_layer_key("conv:ic64ih56iw56oc64kh3kw3sh1ph1", 2, 32);
  CHECK(key.to_text() == "conv:ic64ih56iw56oc64kh3kw3sh1ph1|2|32");
  const auto read = MeasuredLayerKey::from_text(key.to_text());
  REQUIRE(read);
  CHECK(*read == key);
  CHECK(measured_layer_key("a", 0, 8) < measured_layer_key("a", 1, 1));
  for (const char* bad : {"conv:ic64ih56iw56oc64kh3kw3sh1ph1", "|0|8", "relu:ic8ih8iw8|3|8", "relu:ic8ih8iw8|0|0",
                          "relu:ic8ih8iw8|x|8", "relu:ic8ih8iw8|0|", "relu:ic8ih8iw8||8", "relu:ic8ih8iw8|0|65537"}) {
    INFO(bad);
    const auto refused = MeasuredLayerKey::from_text(bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::bad_input);
  }
}

TEST_CASE("a calibration's measured layers survive saving, and a bad key is refused") {
  const auto machine = test::test_machine();
  const FitOptions options = test::fixture_fit_options(2);
  const auto calibration =
      fit_calibration(test::synthetic_records(machine, 0.01, 3), machine, "torch", {"synthetic"}, options);
  REQUIRE(calibration);
  REQUIRE_FALSE(calibration->measured_layers.empty());
  const std::string text = to_json_text(*calibration);
  auto document = nlohmann::json::parse(text);
  for (const auto& [key, layers] : calibration->measured_layers)
    CHECK(document.at("measured_layers").contains(key.to_text()));
  const auto loaded = calibration_from_json_text(text, "saved.json");
  REQUIRE(loaded);
  CHECK(loaded->measured_layers.size() == calibration->measured_layers.size());
  for (const auto& [key, layers] : calibration->measured_layers) {
    REQUIRE(loaded->measured_layers.count(key));
    CHECK(loaded->measured_layers.at(key).size() == layers.size());
  }

  document["measured_layers"]["relu:ic8ih8iw8|0|zero"] = nlohmann::json::array({{1, false, 1, 1e-3, 0.01, 3}});
  const auto refused = calibration_from_json_text(document.dump(), "edited.json");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::bad_input);
  CHECK(refused.error().message.find("relu:ic8ih8iw8|0|zero") != std::string::npos);
}
