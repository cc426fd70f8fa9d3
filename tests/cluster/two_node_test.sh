#!/usr/bin/env bash
# tests/cluster/two_node_test.sh DNNTUNE SOURCE_DIR — communication across an emulated 2-node
# cluster (cluster/emulated_cluster.sh: 2 network namespaces, links shaped to 200 Mb/s):
# `dnntune calibrate --comm` must record inter-node sweeps (nodes=2) whose fitted link bandwidth
# is that of the shaped link (traffic over loopback or an unshaped link is 40x faster), and a real
# `dnntune train` all-reduce across the 2 namespaces must end with identical weights on both.
# Exit 77 (skipped) when not root or when network namespaces are not permitted.
set -euo pipefail
dnntune=$1
source_dir=$2
source "$source_dir/tests/cluster/needs_namespaces.sh"

# Bad input is refused before anything is made: a one-line error and exit 2.
for bad in "--queue-ms 0" "--queue-ms 5ms" "--nodes 0" "--mbit x"; do
    status=0
    # shellcheck disable=SC2086  # the option and its value are two words
    error=$("$source_dir/cluster/emulated_cluster.sh" $bad -- true 2>&1) || status=$?
    ((status == 2)) || { echo "FAILED: emulated_cluster.sh $bad exited $status, not 2" >&2; exit 1; }
    [[ $error == "emulated_cluster: "* && $(wc -l <<<"$error") -eq 1 ]] || { echo "FAILED: emulated_cluster.sh $bad said: $error" >&2; exit 1; }
done

work=$(mktemp -d /tmp/dnntune-cluster-XXXXXX)
trap 'rm -rf "$work"' EXIT
export DNT_TEST_DNNTUNE=$dnntune DNT_TEST_WORK=$work DNT_TEST_NETWORK=$source_dir/tests/fixtures/tiny_network.json

# Inside the cluster: the communication sweep (messages up to 1 MiB: 0.3 s each at 200 Mb/s; its
# budget 60 s, which an idle machine does not use up, so that a busy one still reaches the 1 MiB
# messages the bandwidth is fitted from),
# and 3 training steps of the tiny network.
"$source_dir/cluster/emulated_cluster.sh" --nodes 2 --mbit 200 -- bash -c '
    set -e
    $DNT_CLUSTER_MPIRUN -np 2 "$DNT_TEST_DNNTUNE" calibrate --comm --comm-max-mb 1 --comm-budget 60 \
        -o "$DNT_TEST_WORK/comm" >"$DNT_TEST_WORK/calibrate.txt" 2>"$DNT_TEST_WORK/calibrate.err"
    $DNT_CLUSTER_MPIRUN -np 2 "$DNT_TEST_DNNTUNE" train --model "$DNT_TEST_NETWORK" --batch 2 --threads 1 \
        --iters 3 --warmup 1 >"$DNT_TEST_WORK/train.txt" 2>"$DNT_TEST_WORK/train.err"
' || { echo "FAILED: a run inside the emulated cluster" >&2; for log in "$work"/*.err; do echo "--- $log"; tail -n 20 "$log"; done >&2; exit 1; }
cat "$work/calibrate.txt" "$work/train.txt"
fail() { echo "FAILED: $*" >&2; exit 1; }

# 1. Inter-node records, and the fitted link of the shaped rate.
grep -q '"nodes":2' "$work/comm/comm.jsonl" || fail "no inter-node (nodes=2) records in comm.jsonl"
# The fit table's rows: allreduce inter-node RANKS NODES MESSAGES LATENCY BANDWIDTH LINK ...; the
# large-message regime (">= SIZE UNIT") is the link's bandwidth, all sizes (weighted by relative
# error) lean to the latency-bound small messages.
link_gbs=$(awk '$1 == "allreduce" && $2 == "inter-node" && $5 == ">=" { print $10; exit }' "$work/calibrate.txt")
[[ -n $link_gbs ]] || fail "calibrate --comm fitted no inter-node all-reduce"
# 200 Mb/s is 0.025 GB/s; TCP over tbf reaches 85-95% of it on an idle machine. The link caps it at
# any speed (an unshaped veth gives GB/s); below it, ranks that share the cores with other work lose
# time to it (0.013 GB/s seen at a load average of 12 on 2 cores): a wide margin down.
awk -v gbs="$link_gbs" 'BEGIN { exit !(gbs > 0.025 / 10 && gbs < 0.025 * 1.5) }' \
    || fail "fitted inter-node bandwidth $link_gbs GB/s is not near the shaped 0.025 GB/s"

# 2. Training across the namespaces: two ranks on two nodes, identical weights.
grep -q 'images/s' "$work/train.txt" || fail "train printed no report"
mapfile -t checksums < <(sed -n 's/.*weights \([0-9a-fx]*\).*/\1/p' "$work/train.txt")
((${#checksums[@]} == 2)) || fail "expected 2 ranks' weights checksums, found ${#checksums[@]}"
[[ ${checksums[0]} == "${checksums[1]}" ]] || fail "ranks ended with different weights: ${checksums[*]}"
echo "two-node cluster: link $link_gbs GB/s (shaped 0.025), weights ${checksums[0]} on both ranks"
