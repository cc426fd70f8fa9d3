#!/usr/bin/env bash
# setup/build.sh — installs the Debian packages listed in setup/debian-packages.txt that are
# missing, then configures (once) and builds (incrementally) into build/ — or, with
# DNNTUNE_SANITIZE=1, with AddressSanitizer and UBSan into build-sanitize/ (DNNTUNE_BUILD_DIR
# overrides either folder).
# Sourced by ./dnntune and ./run-tests. All of its chatter goes to stderr, so that
# `./dnntune recommend --format slurm > job.sbatch` captures only the command's own output.
# The caller names what to build in `dnntune_targets` before sourcing: ./dnntune builds only the
# command (a new user's first answer should not wait for the test executables), ./run-tests
# builds everything (the default).
set -euo pipefail

dnntune_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dnntune_sanitize="${DNNTUNE_SANITIZE:-0}"
if [[ "$dnntune_sanitize" == 1 ]]; then
    dnntune_build="${DNNTUNE_BUILD_DIR:-$dnntune_root/build-sanitize}"
else
    dnntune_build="${DNNTUNE_BUILD_DIR:-$dnntune_root/build}"
fi

dnntune_install_missing_packages() {
    local missing=() package
    while read -r package; do
        [[ -z "$package" || "$package" == \#* ]] && continue
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$package")
    done < "$dnntune_root/setup/debian-packages.txt"
    ((${#missing[@]} == 0)) && return 0
    local as_root=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "dnntune setup: need root (or sudo) to install: ${missing[*]}" >&2; return 1; }
        as_root=(sudo)
    fi
    echo "dnntune setup: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
    "${as_root[@]}" apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2
}

dnntune_build() {
    if [[ ! -f "$dnntune_build/CMakeCache.txt" ]]; then
        # Ninja where it is installed (setup/debian-packages.txt lists it): it compiles the files of
        # a library while the libraries it depends on are still compiling, which Makefiles do not,
        # so both cores stay busy to the end of a clean build.
        local generator=()
        command -v ninja >/dev/null && generator=(-G Ninja)
        echo "dnntune setup: configuring $dnntune_build (Release)" >&2
        cmake -S "$dnntune_root" -B "$dnntune_build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
            -DDNNTUNE_SANITIZE="$([[ "$dnntune_sanitize" == 1 ]] && echo ON || echo OFF)" >&2
    fi
    local targets=()
    for target in ${dnntune_targets:-all}; do targets+=(--target "$target"); done
    cmake --build "$dnntune_build" --parallel "$(nproc)" "${targets[@]}" >&2 \
        || { echo "dnntune setup: build failed (see above)" >&2; return 1; }
}

dnntune_install_missing_packages
dnntune_build
