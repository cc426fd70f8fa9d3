// tests/workloads_kernel_class_test.cpp — the one kernel taxonomy (workloads/kernel_class.hpp),
// the backend registry (workloads/backends.hpp) and the typed network-at-batch key.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "workloads/backends.hpp"
#include "workloads/kernel_class.hpp"
#include "workloads/network_at_batch.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune::workloads;

namespace {

KernelShape shape_of(const std::string& descriptor) {
  const auto spec = parse_descriptor(descriptor);
  REQUIRE(spec);
  return kernel_shape(*spec);
}

}  // namespace

TEST_CASE("every kernel shape and class has one name, and names lead back") {
  std::set<std::string> shape_names, class_names;
  for (int index = 0; index < kernel_shape_count; ++index) {
    const auto shape = static_cast<KernelShape>(index);
    CHECK(shape_names.insert(std::string(shape_name(shape))).second);
    CHECK(shape_class(shape) != KernelClass::count_);
  }
  for (int index = 0; index < kernel_class_count; ++index) {
    const auto kernel_class = static_cast<KernelClass>(index);
    CHECK(class_names.insert(std::string(kernel_class_name(kernel_class))).second);
    CHECK(kernel_class_named(kernel_class_name(kernel_class)) == kernel_class);
  }
  CHECK_FALSE(kernel_class_named("conv"));
  CHECK(shape_name(KernelShape::count_) == "?");
  CHECK(kernel_class_name(KernelClass::count_) == "?");
}

TEST_CASE("a shape refines its cost class where kernels differ") {
  CHECK(shape_of("conv:ic64ih56iw56oc256kh1kw1sh1ph0") == KernelShape::conv1x1);
  CHECK(shape_class(shape_of("conv:ic256ih56iw56oc512kh1kw1sh2ph0")) == KernelClass::conv_pointwise);
  CHECK(shape_class(shape_of("conv:ic64ih56iw56oc64kh3kw3sh2ph1")) == KernelClass::conv_spatial);
  CHECK(shape_class(shape_of("conv:ic3ih224iw224oc64kh7kw7sh2ph3")) == KernelClass::conv_spatial);
  CHECK(shape_class(shape_of("conv:g32ic32ih112iw112oc32kh3kw3sh1ph1")) == KernelClass::conv_grouped);
  CHECK(shape_class(shape_of("relu6:ic32ih112iw112")) == KernelClass::eltwise);
  CHECK(shape_class(shape_of("linear:ic2048oc1000bias1")) == KernelClass::inner_product);
  CHECK(shape_class(shape_of("dropout:ic4096ih1iw1p0.5")) == KernelClass::reshape);
  CHECK(shape_class(shape_of("flatten:ic512ih7iw7")) == KernelClass::reshape);
  CHECK(shape_class(shape_of("softmaxloss:ic1000")) == KernelClass::loss);
  // conv_native is no shape's class: only a dispatch rule picks it.
  for (int index = 0; index < kernel_shape_count; ++index)
    CHECK(shape_class(static_cast<KernelShape>(index)) != KernelClass::conv_native);
}

TEST_CASE("the registry names each backend once, with its device") {
  CHECK(backend_names() == std::vector<std::string>{"onednn", "torch", "torch-cuda"});
  CHECK(backend_names(Device::cpu) == std::vector<std::string>{"onednn", "torch"});
  CHECK(backend_names(Device::cuda) == std::vector<std::string>{"torch-cuda"});
  REQUIRE(find_backend("torch-cuda"));
  CHECK(find_backend("torch-cuda")->library == KernelLibrary::libtorch);
  CHECK(find_backend("onednn")->library == KernelLibrary::onednn);
  CHECK_FALSE(find_backend("tensorflow"));
  const auto unknown = backend_named("tensorflow");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().kind == dnntune::ErrorKind::bad_input);
  CHECK(unknown.error().message == "unknown backend 'tensorflow' (known: onednn, torch, torch-cuda)");
  REQUIRE(backend_named("torch"));
  CHECK((*backend_named("torch"))->device == Device::cpu);
}

TEST_CASE("only libtorch on the CPU runs convolutions on its own kernel") {
  const auto spec = parse_descriptor("conv:ic256ih56iw56oc64kh1kw1sh1ph0");
  REQUIRE(spec);
  CHECK(dispatched_class(*spec, *find_backend("torch"), 8, 1) == KernelClass::conv_native);
  CHECK(dispatched_class(*spec, *find_backend("torch-cuda"), 8, 1) == KernelClass::conv_pointwise);
  CHECK(dispatched_class(*spec, *find_backend("onednn"), 8, 1) == KernelClass::conv_pointwise);
}

TEST_CASE("every backend classifies every zoo layer into a class it lists") {
  for (const auto& name : known_network_names()) {
    const auto network = build_network(name);
    REQUIRE(network);
    for (const auto& backend : backend_registry())
      for (const auto& layer : network->layers)
        for (const std::int64_t batch : {1, 8, 32})
          for (const int threads : {1, 4}) {
            const auto kernel_class = dispatched_class(layer.spec, backend, batch, threads);
            INFO(name << " " << layer.descriptor << " on " << backend.name << ": " << kernel_class_name(kernel_class));
            CHECK(backend.kernel_classes.test(static_cast<std::size_t>(kernel_class)));
          }
  }
}

TEST_CASE("a network at a batch reads back from its covered.json text") {
  CHECK(NetworkAtBatch{"resnet152", 32}.to_text() == "resnet152@32");
  CHECK(NetworkAtBatch::from_text("resnet152@32") == NetworkAtBatch{"resnet152", 32});
  // A network file's path may hold '@': the batch follows the last one.
  CHECK(NetworkAtBatch::from_text("/tmp/a@b/net.json@8") == NetworkAtBatch{"/tmp/a@b/net.json", 8});
  for (const char* bad : {"resnet152", "@32", "resnet152@", "resnet152@0", "resnet152@-1", "resnet152@abc",
                          "resnet152@65537", "resnet152@3 "})
    CHECK_FALSE(NetworkAtBatch::from_text(bad));
}
