#!/usr/bin/env bash
# benchmarks/gpu_bundle_env.sh — sourced by gpu_node.sh and device_node.sh: `use_gpu_bundle DEBS
# DEPS` unpacks the dependency bundle (benchmarks/gpu_bundle.sh's .deb files in DEBS) into DEPS and
# points the build at it, for a GPU node with no package registry. It appends to the caller's
# `prefix_paths` (a CMake prefix list) and `cmake_extra` (an array), and exports what Open MPI,
# pkg-config and the loader need to find the unpacked tree.
use_gpu_bundle() {
  local debs=$1 deps=$2 deb
  mkdir -p "$deps"
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$deps"; done
  # Debian's alternatives are not unpacked: name Open MPI's wrapper, and let it find its data
  # files under the prefix. pkg-config reads hwloc.pc with the prefix as its root.
  local multiarch="$deps/usr/lib/x86_64-linux-gnu"
  export OPAL_PREFIX="$deps/usr" PATH="$deps/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$multiarch:$multiarch/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_PATH="$multiarch/pkgconfig:$deps/usr/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$deps"
  command -v pkg-config > /dev/null || cmake_extra+=("-DPKG_CONFIG_EXECUTABLE=$deps/usr/bin/pkgconf")
  prefix_paths="$prefix_paths;$deps/usr"
  # Debian's multiarch headers (hwloc's autogen/config.h) are where the compiler looks under /usr only.
  cmake_extra+=("-DMPI_CXX_COMPILER=$deps/usr/bin/mpicxx.openmpi" "-DCMAKE_CXX_FLAGS=-isystem $deps/usr/include/x86_64-linux-gnu")
}
