// tests/expected_support.hpp — the value of an Expected that a test requires to hold.
#pragma once

#include <catch2/catch.hpp>

#include <utility>

#include "common/expected.hpp"

namespace dnntune::test {

template <class T>
T must(Expected<T> result) {
  REQUIRE(result);
  return std::move(*result);
}

}  // namespace dnntune::test
