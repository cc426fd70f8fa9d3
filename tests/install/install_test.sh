#!/usr/bin/env bash
# tests/install/install_test.sh BUILD_DIR SOURCE_DIR — `cmake --install` into a temporary prefix,
# then a project outside the tree finds it with find_package(dnntune) and runs; the same source
# also builds through pkg-config; the installed command runs, and trains through the libtorch module
# installed beside it; the Python package is installed where that prefix's python3 looks, imports
# and answers from there, and loads the libtorch module installed under that prefix.
set -euo pipefail
build=$1
source_dir=$2
work=$(mktemp -d /tmp/dnntune-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" || fail "cmake --install"
[[ -f $work/prefix/include/dnntune/model/predictor.hpp ]] || fail "headers not installed"
[[ -f $work/prefix/lib/cmake/dnntune/dnntuneConfig.cmake ]] || fail "no package configuration"
[[ ! -e $work/prefix/include/dnntune/probe/topology.hpp ]] || fail "the hardware side's headers were installed"

cmake -S "$source_dir/tests/install/outside_project" -B "$work/outside" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "find_package(dnntune)"; }
cmake --build "$work/outside" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building against dnntune::model"; }
output=$("$work/outside/predict_spec_machine" skylake-8180 resnet50) || fail "the outside program"
[[ $output == "resnet50 on skylake-8180: "*" images/s ["* ]] || fail "unexpected output: $output"
echo "ok: find_package(dnntune): $output"

export PKG_CONFIG_PATH=$work/prefix/lib/pkgconfig
# shellcheck disable=SC2046
g++ -O1 "$source_dir/tests/install/outside_project/predict_spec_machine.cpp" -o "$work/by_pkg_config" \
    $(pkg-config --cflags --libs dnntune) || fail "building with pkg-config"
[[ $("$work/by_pkg_config" skylake-8180 resnet50) == "$output" ]] || fail "pkg-config build answers differently"
echo "ok: pkg-config dnntune"

"$work/prefix/bin/dnntune" machines --json >/dev/null || fail "the installed command"
echo "ok: installed dnntune runs"
[[ -f $work/prefix/lib/dnntune/libdnntune_torch.so ]] || fail "the libtorch module was not installed"
bash "$source_dir/tests/cli/libtorch_on_demand_test.sh" "$work/prefix/bin/dnntune" "$source_dir" \
    "$work/prefix/lib/dnntune/libdnntune_torch.so" || fail "the installed command and its installed libtorch module"

# The Python package (when the build made it: pybind11 and Python's headers were found).
if [[ -d $build/python/dnntune ]]; then
    python=/usr/bin/python3
    package=$(cd "$work/prefix" && find . -path '*/dnntune/__init__.py' -print -quit)
    [[ -n $package ]] || fail "the Python package was not installed"
    site=${package#./}
    site=${site%/dnntune/__init__.py}
    # Where this python3 looks under its own prefix: the same folder under P is where it looks under P.
    "$python" -c 'import sys; sys.exit(0 if sys.prefix + "/" + sys.argv[1] in sys.path else 1)' "$site" \
        || fail "the Python package went to $site, where $python does not look"
    answer=$(cd "$work" && PYTHONPATH=$work/prefix/$site "$python" -c '
import sys, dnntune
assert dnntune.__file__.startswith(sys.argv[1]), dnntune.__file__
answer = dnntune.Model(machine="skylake-8180").predict("resnet50", processes_per_node=2, threads_per_process=14,
                                                       batch=32, nodes=1)
print(answer["schema"], answer["images_per_second"] > 0)' "$work/prefix/$site") || fail "import dnntune from $site"
    [[ $answer == "dnntune.prediction True" ]] || fail "the installed Python package answered: $answer"
    echo "ok: import dnntune from $site"
    # The package loads the libtorch module installed beside it under this prefix, not the build's
    # (which the prefix the build was configured for would not find once the build is gone).
    loaded=$(cd "$work" && PYTHONPATH=$work/prefix/$site "$python" -c '
from dnntune import _dnntune
print(_dnntune.torch_module_path())') || fail "the installed Python package cannot load its libtorch module"
    [[ $loaded == "$work/prefix/"*"/libdnntune_torch.so" ]] \
        || fail "the installed Python package loaded the libtorch module $loaded, not the one under $work/prefix"
    echo "ok: the installed package loads $loaded"
fi
