#!/usr/bin/env bash
# tests/install/gpu_bundle_test.sh SOURCE_DIR [TARGET...] — the dependency bundle of
# benchmarks/gpu_node.sh builds dnntune on a machine that has none of the dependencies installed:
# in a private mount namespace every file of the bundled packages that this machine has installed
# is hidden (an empty file or folder mounted over it), the bundle is unpacked with `dpkg -x` into
# a prefix as gpu_node.sh does, and dnntune configures and builds TARGETs (default: dnntune and
# common_tests) against it, with this machine's CPU libtorch standing in for the node's CUDA one.
# Skips (77) without root, mount namespaces or apt-get download, and unless
# DNNTUNE_TEST_GPU_BUNDLE=1: a from-scratch build against the bundle takes 10-35 minutes on 2
# cores, more than the whole suite may (run it before changing the bundle or gpu_node.sh).
set -euo pipefail
[ "${DNNTUNE_TEST_GPU_BUNDLE:-0}" = 1 ] || { echo "set DNNTUNE_TEST_GPU_BUNDLE=1 to build against the bundle"; exit 77; }
source_dir=$(cd "$1" && pwd)
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(dnntune common_tests)
[ "$(id -u)" -eq 0 ] || { echo "needs root (mount namespaces)"; exit 77; }
unshare -m --propagation private true 2> /dev/null || { echo "no mount namespaces here"; exit 77; }
work=$(mktemp -d /tmp/dnntune-gpu-bundle-XXXXXX)
trap 'rm -rf "$work"' EXIT

bundle="$source_dir/.gpu-bundle/debs"
if ! ls "$bundle"/*.deb > /dev/null 2>&1; then
  bash "$source_dir/benchmarks/gpu_bundle.sh" "$work/debs" || { echo "apt-get download failed"; exit 77; }
  bundle="$work/debs"
fi
ls "$bundle"/*.deb > "$work/debs.txt"

unshare -m --propagation private bash -s "$source_dir" "$work" "$bundle" "${targets[@]}" << 'INNER'
set -euo pipefail
source_dir=$1 work=$2 bundle=$3
shift 3
# Hide what this machine has of each bundled package: its files, and its folders but the shared ones.
hidden=0
for deb in "$bundle"/*.deb; do
  package=$(dpkg-deb -f "$deb" Package)
  dpkg -L "$package" > /dev/null 2>&1 || continue
  while read -r path; do
    case "$path" in /usr/lib/x86_64-linux-gnu/openmpi* | /usr/include/* | /usr/share/*/cmake* | /usr/lib/*/cmake/* ) ;;
      /usr/lib/x86_64-linux-gnu/*.so* | /usr/lib/x86_64-linux-gnu/*.a | /usr/bin/* | /usr/lib/x86_64-linux-gnu/pkgconfig/*) ;;
      *) continue ;;
    esac
    if [ -f "$path" ] || [ -L "$path" ]; then
      [ -e "$path" ] && mount --bind /dev/null "$path" 2> /dev/null && hidden=$((hidden + 1)) || true
    elif [ -d "$path" ] && [ "$(dirname "$path")" != / ] && ! [[ "$path" =~ ^/usr(/[^/]+)?(/x86_64-linux-gnu)?$ ]] &&
         [[ "$path" != /usr/share/doc* ]]; then
      mount -t tmpfs none "$path" 2> /dev/null && hidden=$((hidden + 1)) || true
    fi
  done < <(dpkg -L "$package" | sort -r)
done
echo "hid $hidden installed paths of the bundled packages"
# Proof that they are gone: the headers CMake would otherwise find in /usr/include.
for header in /usr/include/hwloc.h /usr/include/oneapi/dnnl/dnnl.hpp /usr/include/nlopt.hpp /usr/include/eigen3/Eigen/Core \
              /usr/include/CLI/CLI.hpp /usr/include/catch2/catch.hpp /usr/include/nlohmann/json.hpp; do
  if [ -s "$header" ]; then echo "FAILED: $header is still visible"; exit 1; fi
done

deps="$work/deps"
mkdir -p "$deps"
for deb in "$bundle"/*.deb; do dpkg -x "$deb" "$deps"; done
multiarch="$deps/usr/lib/x86_64-linux-gnu"
export OPAL_PREFIX="$deps/usr" PATH="$deps/usr/bin:$PATH"
export LD_LIBRARY_PATH="$multiarch:$multiarch/openmpi/lib"
export PKG_CONFIG_PATH="$multiarch/pkgconfig:$deps/usr/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$deps"
cmake -S "$source_dir" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps/usr" \
  -DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf" -DMPI_CXX_COMPILER="$deps/usr/bin/mpicxx.openmpi" \
  -DCMAKE_CXX_FLAGS="-isystem $deps/usr/include/x86_64-linux-gnu" \
  > "$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; echo "FAILED: configure"; exit 1; }
# Every dependency resolved inside the prefix, none from /usr.
for key in pkgcfg_lib_HWLOC_hwloc dnnl_DIR NLOPT_INCLUDE_DIR NLOPT_LIBRARY Eigen3_DIR CLI11_DIR Catch2_DIR \
           nlohmann_json_DIR MPI_mpi_LIBRARY; do
  line=$(grep "^$key:" "$work/build/CMakeCache.txt" || true)
  case "$line" in *"$deps"*) echo "ok: $line" ;; *) echo "FAILED: $key not from the bundle: '$line'"; exit 1 ;; esac
done
cmake --build "$work/build" -j2 --target "$@" > "$work/build.log" 2>&1 ||
  { grep -m5 -B2 -A5 "rror" "$work/build.log" || tail -30 "$work/build.log"; echo "FAILED: build"; exit 1; }
echo "ok: built $* against the bundle"
if [ -x "$work/build/cli/dnntune" ]; then
  "$work/build/cli/dnntune" predict --model resnet50 --machine v100 --batch 32 | head -2
fi
INNER
