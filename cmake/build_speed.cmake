# cmake/build_speed.cmake — how a clean build of the `dnntune` command stays short (a fresh
# clone's first command builds it: README). Figures: docs/results.md, "Build time".
#
# Unity builds: each listed target compiles its files in batches of 10 joined into one source (the
# command's 20 files in two, model's 27 in three), so
# the heavy headers every file includes (CLI11, whose header-only library is compiled again in
# every file that includes it; nlohmann/json; libtorch's torch/torch.h, about 15 CPU-seconds to
# parse) are compiled once per batch instead of once per file. The rule this puts on the files of
# these targets: a name in an anonymous namespace (or a `static` function) must be unique within
# its target, since the batch sees every file's. The build fails with "redefinition of ..." when
# two clash: rename one. data/ (three generated files of embedded text) is not built this way.
# -DDNNTUNE_UNITY_BUILD=OFF compiles each file alone (to check a file on its own, or for the
# shortest rebuild after editing one file).
option(DNNTUNE_UNITY_BUILD "Compile the targets listed in cmake/build_speed.cmake as unity builds" ON)
set(dnntune_unity_targets common workloads records probe train train_torch calibrate model pipeline scheduler tuner frontend dnntune)
# The test executables (tests/, which `./run-tests` builds and `./dnntune` does not) are one unity
# build each (Catch2's header, the fixtures and the libraries' headers parsed once per executable).
get_property(dnntune_test_targets DIRECTORY tests PROPERTY BUILDSYSTEM_TARGETS)
set(dnntune_test_executables "")
foreach(target IN LISTS dnntune_test_targets)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    list(APPEND dnntune_test_executables ${target})
  endif()
endforeach()
if(DNNTUNE_UNITY_BUILD)
  set_target_properties(${dnntune_unity_targets} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 10)
  set_target_properties(${dnntune_test_executables} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
  # GCC warns when a class of one file holds a type of that file's anonymous namespace, except in
  # the file it compiles; in a unity build every file is an included one.
  foreach(target IN LISTS dnntune_unity_targets dnntune_test_executables)
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endforeach()
endif()

# Optimisation levels. probe/ and train/ keep the Release -O3: their own loops are what a
# measurement times (the FMA and STREAM kernels, whose vector loops -O3's vectorizer shapes) or what
# a training step waits on (the gradient sums of the allreduce). Every other target of every folder
# compiles at -O1, a new one too: it spends its time in oneDNN, libtorch and MPI, or runs once per
# command (the fit, the search, the records: a recommend from a filled cache takes a tenth of a
# second), or asserts on what the libraries return (the tests), while -O2 and -O3 spend the
# optimizer's time on the inlining and unrolling of templates (nlohmann/json, Eigen, CLI11,
# libtorch's headers) that nothing times. A fresh clone's first command builds all of this on the
# user's machine: docs/results.md, "Build time", has what each level costs. The targets of tests/
# compile at -O0: their code asserts on what the libraries (built as above) return and runs once,
# and `./run-tests` on a fresh clone builds them before any test starts (-O0 takes about 30% less
# compile time than -O1 there: docs/results.md). (A sanitizer build keeps its -O1 everywhere:
# CMakeLists.txt.)
set(dnntune_measured_loop_targets probe train)
if(NOT DNNTUNE_SANITIZE)
  get_property(dnntune_folders DIRECTORY PROPERTY SUBDIRECTORIES)
  foreach(folder IN LISTS dnntune_folders)
    set(level -O1)
    if(folder STREQUAL "${PROJECT_SOURCE_DIR}/tests")
      set(level -O0)
    endif()
    get_property(targets DIRECTORY ${folder} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY)$" AND
         NOT target IN_LIST dnntune_measured_loop_targets)
        target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:${level}>)
      endif()
    endforeach()
  endforeach()
endif()
