// tests/torch_catch.hpp — libtorch's headers, then Catch2's: libtorch's glog defines CHECK(condition)
// and Catch's must win. One header for every test file that uses both, so that it holds in whatever
// order a unity build joins those files (a second `#undef CHECK` after Catch2 would remove Catch's).
#pragma once

#include <torch/torch.h>
#undef CHECK
#include <catch2/catch.hpp>
