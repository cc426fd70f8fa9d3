#!/usr/bin/env bash
# benchmarks/gpu_bundle.sh [DIR] — makes the dependency bundle that benchmarks/gpu_node.sh needs
# on a GPU node without a package registry (the accelerator machine: nothing outside it can be
# reached): every build dependency of dnntune except libtorch (the node's own CUDA one is used),
# as the Debian 12 .deb files this machine's apt-get downloads, into DIR (default .gpu-bundle/debs,
# ignored by git and carried to the node). gpu_node.sh unpacks them with `dpkg -x` into a prefix.
# The node needs glibc >= 2.36 (Debian 12, Ubuntu 24.04), a C++17 compiler, CMake and make or ninja.
# Prints the bundle's size: everything that travels with the working tree must stay under 64 MiB.
set -euo pipefail
directory=${1:-"$(cd "$(dirname "$0")/.." && pwd)/.gpu-bundle/debs"}
# The libraries and headers each dependency needs, with the runtime libraries Open MPI loads.
packages=(
  libhwloc-dev libhwloc15 libhwloc-plugins libnuma1 libnuma-dev libltdl7       # hwloc
  libdnnl-dev libdnnl2                                                          # oneDNN
  libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common libpmix2 libpmix-dev    # Open MPI
  libevent-2.1-7 libevent-core-2.1-7 libevent-pthreads-2.1-7 libevent-dev
  libfabric1 libucx0 libpsm2-2 libpsm-infinipath1 libibverbs1 libibverbs-dev librdmacm1 libmunge2
  libnlopt-dev libnlopt0 libnlopt-cxx-dev libnlopt-cxx0                         # NLopt
  libeigen3-dev libcli11-dev catch2 nlohmann-json3-dev                          # header-only
  pkgconf pkgconf-bin libpkgconf3                                               # hwloc's .pc file
)
mkdir -p "$directory"
cd "$directory"
rm -f ./*.deb
apt-get download "${packages[@]}" > /dev/null
count=$(ls ./*.deb | wc -l)
if [ "$count" -ne "${#packages[@]}" ]; then
  echo "gpu_bundle: downloaded $count of ${#packages[@]} packages" >&2
  exit 1
fi
bytes=$(du -cb ./*.deb | tail -1 | cut -f1)
echo "gpu_bundle: $count packages, $((bytes / 1024 / 1024)) MiB in $directory"
if [ "$bytes" -gt $((48 * 1024 * 1024)) ]; then
  echo "gpu_bundle: over 48 MiB: with the working tree it would not fit the 64 MiB a device run carries" >&2
  exit 1
fi
