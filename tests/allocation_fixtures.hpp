// tests/allocation_fixtures.hpp — what the allocator term's tests (tests/model_allocation_test.cpp)
// and the close calls' (tests/model_allocation_close_call_test.cpp) both start from.
#pragma once

#include "model/allocation.hpp"

namespace dnntune::test {

// 4096 ns per page with one thread (1 ns per byte), 8192 with every core at once.
inline model::AllocationModel one_ns_per_byte() {
  model::AllocationModel model;
  model.fault_ns_per_page = 4096;
  model.fault_ns_per_page_all_cores = 8192;
  return model;
}

}  // namespace dnntune::test
