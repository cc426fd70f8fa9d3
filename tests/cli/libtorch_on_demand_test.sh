#!/usr/bin/env bash
# tests/cli/libtorch_on_demand_test.sh DNNTUNE SOURCE_DIR [MODULE] — libtorch is loaded only by what
# trains or times a layer (torch_module/): a command that does neither starts without it (loading it
# cost every process most of a second), and `train` loads it through the libtorch module (MODULE
# when given: the installed command's, tests/install/install_test.sh). Checked with the dynamic
# loader's own log (LD_DEBUG=files), not by timing.
set -euo pipefail
dnntune=$1
source_dir=$2
module=${3:-.*/libdnntune_torch.so}
work=$(mktemp -d /tmp/dnntune-libtorch-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }
export DNNTUNE_CACHE_DIR=$work/cache

LD_DEBUG=files "$dnntune" machines --json >/dev/null 2>"$work/machines.log" || fail "dnntune machines"
if grep -q "file=.*libtorch" "$work/machines.log"; then fail "dnntune machines loaded libtorch"; fi
LD_DEBUG=files "$dnntune" train --model "$source_dir/tests/fixtures/tiny_network.json" --batch 1 --iters 1 \
    --warmup 0 --threads 1 >/dev/null 2>"$work/train.log" || fail "dnntune train"
grep -q "file=$module .*dynamically loaded" "$work/train.log" || fail "train did not load the libtorch module $module"
grep -q "file=.*libtorch_cpu.so" "$work/train.log" || fail "train did not load libtorch"
echo "ok: machines starts without libtorch; train loads it through the libtorch module"
