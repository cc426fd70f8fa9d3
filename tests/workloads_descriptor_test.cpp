// tests/workloads_descriptor_test.cpp — canonical layer descriptors: every kind prints and
// parses back identically, lenient forms print canonically, bad ones are refused clearly.
#include <catch2/catch.hpp>

#include "workloads/builder.hpp"
#include "workloads/layer.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune::workloads;

namespace {

std::string error_of(const std::string& descriptor) {
  const auto parsed = parse_descriptor(descriptor);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().kind == dnntune::ErrorKind::bad_input);
  return parsed.error().message;
}

}  // namespace

TEST_CASE("a canonical descriptor of every kind parses and prints back identically") {
  const char* canonical[] = {
      "input:ic3ih224iw224",
      "conv:ic64ih56iw56oc64kh3kw3sh1ph1",  // the example
      "conv:ic3ih224iw224oc64kh7kw7sh2ph3",
      "conv:g96ic96ih112iw112oc96kh3kw3sh2ph1",
      "conv:ic192ih17iw17oc192kh1kw7sh1ph0pw3",
      "conv:ic16ih20iw30oc8kh3kw5sh2sw1ph1pw2dh2dw3bias1",
      "bnorm:ic64ih56iw56",
      "bnorm:ic192ih35iw35eps0.001",
      "relu:ic64ih56iw56",
      "relu6:ic32ih112iw112",
      "maxpool:ic64ih112iw112kh3kw3sh2ph1",
      "maxpool:ic64ih55iw55kh3kw3sh2ph0ceil1",
      "avgpool:ic384ih35iw35kh3kw3sh1ph1exclpad1",
      "avgpool:ic768ih17iw17kh5kw5sh3ph0",
      "adaptavgpool:ic2048ih7iw7oh1ow1",
      "adaptavgpool:ic256ih13iw13oh6ow6",
      "linear:ic2048oc1000bias1",
      "linear:ic512oc10",
      "add:ic256ih56iw56",
      "add:ic8ih4iw4n3",
      "concat:ic64+64+96+32ih35iw35",
      "flatten:ic512ih7iw7",
      "dropout:ic4096ih1iw1p0.5",
      "dropout:ic1280ih1iw1p0.2",
      "softmaxloss:ic1000",
  };
  for (const std::string descriptor : canonical) {
    INFO(descriptor);
    const auto spec = parse_descriptor(descriptor);
    REQUIRE(spec);
    CHECK(to_descriptor(*spec) == descriptor);
    const auto again = parse_descriptor(to_descriptor(*spec));
    REQUIRE(again);
    CHECK(*again == *spec);
  }
}

TEST_CASE("every layer of every built-in network round-trips through its descriptor") {
  for (const std::string& name : known_network_names()) {
    const auto network = build_network(name);
    REQUIRE(network);
    for (const Layer& layer : network->layers) {
      INFO(name << " " << layer.name << " " << layer.descriptor);
      const auto spec = parse_descriptor(layer.descriptor);
      REQUIRE(spec);
      CHECK(*spec == layer.spec);
      CHECK(to_descriptor(*spec) == layer.descriptor);
      CHECK(spec->batch_norm_epsilon == layer.spec.batch_norm_epsilon);
    }
  }
}

TEST_CASE("lenient descriptors take benchdnn's defaults and print canonically") {
  const std::pair<const char*, const char*> cases[] = {
      {"conv:oc64ic64kh3ih56ph1", "conv:ic64ih56iw56oc64kh3kw3sh1ph1"},
      {"conv:ic64ih56oc64kh3sh1sw1ph1pw1g1dh1bias0", "conv:ic64ih56iw56oc64kh3kw3sh1ph1"},
      {"maxpool:ic8ih9kh3sh2", "maxpool:ic8ih9iw9kh3kw3sh2ph0"},
      {"avgpool:ic8ih9kh3exclpad0", "avgpool:ic8ih9iw9kh3kw3sh1ph0"},
      {"bnorm:ic8ih4eps0.00001", "bnorm:ic8ih4iw4"},
      {"bnorm:ic8ih4eps0.0010", "bnorm:ic8ih4iw4eps0.001"},
      {"adaptavgpool:ic8ih7oh1", "adaptavgpool:ic8ih7iw7oh1ow1"},
      {"add:ic8ih4iw4n2", "add:ic8ih4iw4"},
      {"dropout:ic8ih1", "dropout:ic8ih1iw1p0.5"},
      {"concat:ih5ic1+2+3", "concat:ic1+2+3ih5iw5"},
  };
  for (const auto& [lenient, canonical] : cases) {
    INFO(lenient);
    const auto spec = parse_descriptor(lenient);
    REQUIRE(spec);
    CHECK(to_descriptor(*spec) == canonical);
  }
}

TEST_CASE("descriptors of specs built in code follow the same rules") {
  LayerSpec spec = conv2d(64, 3, 1, 1);
  spec.input = {64, 56, 56};
  CHECK(to_descriptor(spec) == "conv:ic64ih56iw56oc64kh3kw3sh1ph1");
  // Fields that do not apply to a kind are ignored by the descriptor and by ==.
  LayerSpec same = spec;
  same.dropout_probability = 0.1;
  same.ceil_mode = true;
  CHECK(same == spec);
  same.groups = 2;
  CHECK(same != spec);
  LayerSpec tiny_epsilon = batch_norm2d(1e-12);
  tiny_epsilon.input = {4, 2, 2};
  CHECK(to_descriptor(tiny_epsilon) == "bnorm:ic4ih2iw2eps0.000000000001");
  CHECK(*parse_descriptor(to_descriptor(tiny_epsilon)) == tiny_epsilon);
}

TEST_CASE("malformed descriptors are refused with what is wrong") {
  CHECK(error_of("conv64").find("expected KIND:KEYVALUES") != std::string::npos);
  CHECK(error_of("deconv:ic1").find("unknown kind 'deconv' (known: input, conv,") != std::string::npos);
  CHECK(error_of("conv:ic64ih56oc64").find("missing key 'kh'") != std::string::npos);
  CHECK(error_of("conv:ic64ih56oc64kh3xy2").find("unknown key 'xy' for conv") != std::string::npos);
  CHECK(error_of("conv:ic64ic32ih56oc64kh3").find("key 'ic' given twice") != std::string::npos);
  CHECK(error_of("conv:ih56oc64kh3ic").find("key 'ic' has no value") != std::string::npos);
  CHECK(error_of("conv:icih56oc64kh3").find("unknown key 'icih'") != std::string::npos);
  CHECK(error_of("conv:ic64ih56oc64kh3-").find("expected a key") != std::string::npos);
  CHECK(error_of("conv:ic6.4ih56oc64kh3").find("'ic' needs a whole number") != std::string::npos);
  CHECK(error_of("conv:ic99999999999ih5oc1kh1").find("'ic' needs a whole number") != std::string::npos);
  CHECK(error_of("conv:ic64ih56oc64kh3bias2").find("'bias' must be 0 or 1") != std::string::npos);
  CHECK(error_of("bnorm:ic8ih4eps1.2.3").find("'eps' needs a decimal number") != std::string::npos);
  CHECK(error_of("linear:ic8ih7oc2").find("unknown key 'ih' for linear") != std::string::npos);
  CHECK(error_of("concat:ic8ih4").find("concat needs 2 to 64 inputs") != std::string::npos);
}

TEST_CASE("descriptors of impossible layers are refused with PyTorch's reasons") {
  CHECK(error_of("conv:ic64ih3oc64kh7").find("kernel 7 (with dilation) is larger than the input height 3") !=
        std::string::npos);
  CHECK(error_of("conv:g3ic64ih8oc64kh3").find("groups 3 must divide") != std::string::npos);
  CHECK(error_of("conv:ic0ih8oc64kh3").find("between 1 and 2^24") != std::string::npos);
  CHECK(error_of("conv:ic64ih8oc64kh3sh0").find("stride 0 out of range") != std::string::npos);
  CHECK(error_of("maxpool:ic8ih8kh3ph2").find("at most half the kernel") != std::string::npos);
  CHECK(error_of("dropout:ic8ih1p1").find("dropout probability must be in [0, 1)") != std::string::npos);
  CHECK(error_of("bnorm:ic8ih1eps0").find("epsilon must be in (0, 1)") != std::string::npos);
  CHECK(error_of("add:ic8ih1n1").find("add needs 2 to 64 inputs") != std::string::npos);
  CHECK(error_of("conv:ic65536ih1024oc65536kh3ph1").find("layer too large") != std::string::npos);
}

TEST_CASE("output shapes follow PyTorch's floor and ceil_mode rules") {
  const auto shape_of = [](const std::string& descriptor) {
    const auto spec = parse_descriptor(descriptor);
    REQUIRE(spec);
    return *infer_output_shape(*spec);
  };
  CHECK(shape_of("conv:ic3ih224iw224oc64kh7kw7sh2ph3") == Shape{64, 112, 112});
  CHECK(shape_of("conv:ic3ih299iw299oc32kh3kw3sh2ph0") == Shape{32, 149, 149});
  CHECK(shape_of("conv:ic8ih10iw10oc4kh3kw3sh1ph0dh2") == Shape{4, 6, 6});
  CHECK(shape_of("maxpool:ic64ih112iw112kh3kw3sh2ph1") == Shape{64, 56, 56});
  CHECK(shape_of("maxpool:ic8ih6iw6kh3kw3sh2ph0") == Shape{8, 2, 2});
  CHECK(shape_of("maxpool:ic8ih6iw6kh3kw3sh2ph0ceil1") == Shape{8, 3, 3});
  // ceil_mode never starts a window past the input and its left padding: (7+2-2+1)/2+1 = 5
  // windows, but the 5th would start at 8-1 = 7, in the right padding.
  CHECK(shape_of("maxpool:ic8ih7iw7kh2kw2sh2ph1ceil1") == Shape{8, 4, 4});
  CHECK(shape_of("avgpool:ic768ih17iw17kh5kw5sh3ph0") == Shape{768, 5, 5});
  CHECK(shape_of("adaptavgpool:ic8ih7iw7oh3ow2") == Shape{8, 3, 2});
  CHECK(shape_of("flatten:ic512ih7iw7") == Shape{25088, 1, 1});
  CHECK(shape_of("concat:ic64+64+96+32ih35iw35") == Shape{256, 35, 35});
  CHECK(shape_of("linear:ic2048oc1000bias1") == Shape{1000, 1, 1});
}
