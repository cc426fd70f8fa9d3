#!/usr/bin/env bash
# benchmarks/emulated_cluster_figures.sh [DNNTUNE] — the communication and scaling model against
# real training on an emulated cluster (cluster/emulated_cluster.sh, as root): for each link rate,
# 2..4 nodes x 1 rank each, the ring all-reduce and the parameter server (1 server, sync and
# async): predicted vs measured step time, exposed communication and scaling efficiency, from a
# calibration of this machine (micro-runs of the network) plus the cluster's own communication
# sweep (its inter-node link fitted), and from the shaped rate given as numbers (--link-gbps,
# with the fitted latency).
#
# The network (benchmarks/comm_heavy_network.json: a 1M-parameter linear layer, 4.2 MB of
# gradients, batch 2, 1 thread per rank) is chosen so that communication dominates the step.
# Every "node" still shares this machine's cores, so each row is labelled by what was measured
# while it ran, not by hand: "shared" is how much longer the ranks' forward + backward took than
# the same network's trained alone (1 rank, no communication), as a share of the step (above
# DNT_SHARE_LIMIT, default 0.1, time-shared compute moved the step by more than 10%); "spread" is
# the steps' (max - min) / median (above DNT_SPREAD_LIMIT, default 0.25, something else on the
# machine disturbed the run: a shaped link alone delivers the same step every time); and "sweep":
# the larger coefficient of variation of the sweep's largest all-reduce and send/recv over the
# same nodes (above DNT_SWEEP_CV_LIMIT, default 0.1, the cores, not the links, limited
# communication: the namespaces' TCP, veth, bridge and tbf work runs on the same 2 cores as the
# ranks; measured here, 100 Mb/s sweeps varied by at most 3% at 2-4 nodes, 1 Gb/s ones by 5-8% at
# 2 nodes and 11-50% at 3 and 4). "link" is what the largest ring all-reduce's bus bandwidth
# reached of what TCP carries at the shaped rate (1448 payload bytes of each 1514-byte frame),
# for reading. CPU accounting cannot tell: ranks waiting in MPI poll (user and system time
# alike), so every run keeps the cores busy. Rows within all three limits are "trusted"; the
# median errors are given over them and over all rows.
# Measured efficiency is per worker against that network trained alone: the step alone over the
# step here (ring, PS sync), or images/s per worker over images/s alone (PS async); the predicted
# one is predict's (the same baselines).
# ring: Open MPI told to use its ring all-reduce (the algorithm the model describes, PyTorch DDP's
# and Horovod's), over 2 TCP connections per pair of ranks (with one, the two directions between 2
# nodes ran at half the link); "allreduce" (Open MPI's own choice of algorithm, not a ring over
# TCP) can be added to DNT_SCHEMES. The sweep runs the ring over each node count up to 4 MiB (the
# network's one gradient bucket), so the link is fitted where and as training communicates, its
# per-step latency and bandwidth told apart by the node counts.
# Environment: DNT_RATES="100 1000" (Mb/s), DNT_NODE_COUNTS="2 3 4", DNT_SCHEMES="ring ps-sync
# ps-async", DNT_ITERS=6, DNT_QUEUE_MS=5 (the links' queue), DNT_SHORT=1 (100 Mb/s, 2 and 3
# nodes, 4 steps: about 2 minutes), DNT_KEEP=1 keeps the work directory (records, logs) and
# prints its path. The whole plan takes about 5 minutes on an idle 2-core machine.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dnntune=${1:-$root/build/cli/dnntune}
network=$root/benchmarks/comm_heavy_network.json
if [[ ${DNT_SHORT:-0} == 1 ]]; then
    default_rates=100 default_nodes="2 3" default_iterations=4 layer_budget=20 comm_budget=10
else
    default_rates="100 1000" default_nodes="2 3 4" default_iterations=6 layer_budget=40 comm_budget=20
fi
rates=${DNT_RATES:-$default_rates}
node_counts=${DNT_NODE_COUNTS:-$default_nodes}
schemes=${DNT_SCHEMES:-ring ps-sync ps-async}
iterations=${DNT_ITERS:-$default_iterations}
queue_ms=${DNT_QUEUE_MS:-5}
share_limit=${DNT_SHARE_LIMIT:-0.1}
spread_limit=${DNT_SPREAD_LIMIT:-0.25}
sweep_cv_limit=${DNT_SWEEP_CV_LIMIT:-0.1}
batch=2
for scheme in $schemes; do
    [[ $scheme =~ ^(ring|allreduce|ps-sync|ps-async)$ ]] || { echo "emulated_cluster_figures: unknown scheme $scheme (ring, allreduce, ps-sync, ps-async)" >&2; exit 2; }
done
for nodes in $node_counts; do
    [[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 2 && nodes <= 32)) || { echo "emulated_cluster_figures: node counts must be 2..32, not $nodes" >&2; exit 2; }
done
for rate in $rates; do
    [[ $rate =~ ^[0-9]+$ ]] && ((rate >= 1 && rate <= 100000)) || { echo "emulated_cluster_figures: rates are Mb/s 1..100000, not $rate" >&2; exit 2; }
done
[[ $iterations =~ ^[0-9]+$ ]] && ((iterations >= 2)) || { echo "emulated_cluster_figures: DNT_ITERS must be 2 or more" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "emulated_cluster_figures: needs root (network namespaces)" >&2; exit 1; }
work=$(mktemp -d /tmp/dnntune-cluster-figures-XXXXXX)
if [[ ${DNT_KEEP:-0} == 1 ]]; then echo "# work directory: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
started=$SECONDS

echo "# layer micro-runs of $(basename "$network") at batch $batch, 1 thread" >&2
"$dnntune" calibrate --model "$network" --backend torch --batch "$batch" --threads 1 --budget "$layer_budget" \
    -o "$work/layers" >"$work/layers.log" 2>&1
echo "# the network trained alone: 1 rank, no communication (the efficiency's and time-share's baseline)" >&2
"$dnntune" train --model "$network" --batch "$batch" --threads 1 --iters "$iterations" --warmup 2 --json \
    >"$work/alone.json" 2>"$work/alone.err"
read -r alone_step alone_compute < <(jq -r '.timings | "\(.iteration.median_seconds) \(.forward.median_seconds + .backward.median_seconds)"' "$work/alone.json")

largest_nodes=0
for nodes in $node_counts; do ((nodes > largest_nodes)) && largest_nodes=$nodes; done
export DNT_BENCH_DNNTUNE=$dnntune DNT_BENCH_NETWORK=$network DNT_BENCH_BATCH=$batch DNT_BENCH_ITERS=$iterations
export DNT_BENCH_NODE_COUNTS=$node_counts DNT_BENCH_SCHEMES=$schemes
export DNT_BENCH_COMM_BUDGET=$comm_budget
for rate in $rates; do
    echo "# $rate Mb/s ($queue_ms ms queues): communication sweeps over $node_counts nodes, then training" >&2
    cp -r "$work/layers" "$work/calibration-$rate"
    export DNT_BENCH_OUT=$work/$rate DNT_BENCH_CALIBRATION=$work/calibration-$rate
    mkdir -p "$DNT_BENCH_OUT"
    "$root/cluster/emulated_cluster.sh" --nodes "$largest_nodes" --mbit "$rate" --queue-ms "$queue_ms" -- bash -c '
        set -e
        ring=(-x OMPI_MCA_coll_tuned_use_dynamic_rules=1 -x OMPI_MCA_coll_tuned_allreduce_algorithm=4
              --mca btl_tcp_links 2)
        for nodes in $DNT_BENCH_NODE_COUNTS; do
            $DNT_CLUSTER_MPIRUN -np $nodes "${ring[@]}" "$DNT_BENCH_DNNTUNE" calibrate --comm --comm-max-mb 4 \
                --comm-budget $DNT_BENCH_COMM_BUDGET -o "$DNT_BENCH_CALIBRATION" >"$DNT_BENCH_OUT/comm-$nodes.txt" 2>&1
        done
        for nodes in $DNT_BENCH_NODE_COUNTS; do
            for scheme in $DNT_BENCH_SCHEMES; do
                launch=() options=()
                case $scheme in
                    ring) launch=("${ring[@]}") ;;
                    ps-sync) options=(--ps-servers 1) ;;
                    ps-async) options=(--ps-servers 1 --async) ;;
                esac
                $DNT_CLUSTER_MPIRUN -np $nodes "${launch[@]}" "$DNT_BENCH_DNNTUNE" train --model "$DNT_BENCH_NETWORK" \
                    --batch $DNT_BENCH_BATCH --threads 1 --iters $DNT_BENCH_ITERS --warmup 2 "${options[@]}" --json \
                    >"$DNT_BENCH_OUT/train-$nodes-$scheme.json" 2>"$DNT_BENCH_OUT/train-$nodes-$scheme.err"
            done
        done'
    "$dnntune" fit "$work/calibration-$rate" -o "$work/calibration-$rate.json" --bootstrap 4 >"$work/fit-$rate.txt" 2>&1
done

# Relative error in percent, signed; and the median of absolute values.
percent_error() { awk -v p="$1" -v m="$2" 'BEGIN { printf "%+.1f", 100 * (p - m) / m }'; }
median_abs() {
    (($#)) || { echo "-"; return; }
    printf '%s\n' "$@" | tr -d '+-' | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

echo
echo "Predicted vs measured on the emulated cluster (1 rank per node, $(basename "$network" .json), batch $batch, 1 thread,"
echo "links shaped by tbf with $queue_ms ms queues). step: median [min..max] of $iterations steps; fit: the fitted inter-node link;"
echo "rate: --link-gbps with the fitted latency; exposed: exposed communication, measured / predicted (fit); efficiency: per worker"
echo "against the network trained alone (step $(printf '%.4f' "$alone_step") s, forward + backward $(printf '%.4f' "$alone_compute") s), measured / predicted;"
echo "shared, spread, sweep, link: what the run and its sweep measured (trusted when shared <= $share_limit, spread <= $spread_limit, sweep <= $sweep_cv_limit)"
printf "%5s %5s %-9s | %22s | %8s %7s | %8s %7s | %15s | %15s | %6s %6s %6s %5s %s\n" "Mb/s" "nodes" "scheme" "measured step s" \
    "pred fit" "error" "pred rate" "error" "exposed s" "efficiency" "shared" "spread" "sweep" "link" "row"
alone_predicted=$("$dnntune" predict --model "$network" --ppn 1 --threads 1 --batch "$batch" --json \
    --calibration "$work/calibration-${rates%% *}.json" | jq -r .iteration_seconds)
echo "alone (1 rank, no communication): measured step $(printf '%.4f' "$alone_step") s, predicted $(printf '%.4f' "$alone_predicted") s ($(percent_error "$alone_predicted" "$alone_step")%)"
errors_fit=() errors_rate=() trusted_fit=() trusted_rate=() errors_exposed=() trusted_exposed=()
for rate in $rates; do
    link_line=$(grep 'inter-node link:' "$work/fit-$rate.txt" || true)
    latency_us=$(sed -n 's/.*inter-node link: \([0-9.]*\) us.*/\1/p' <<<"$link_line")
    payload_bytes_per_second=$(awk -v r="$rate" 'BEGIN { print r * 1e6 / 8 * 1448 / 1514 }')
    for nodes in $node_counts; do
        for scheme in $schemes; do
            measured=$work/$rate/train-$nodes-$scheme.json
            case $scheme in
                allreduce|ring) options=() workers=$nodes ;;
                ps-sync) options=(--ps 1) workers=$((nodes - 1)) ;;
                ps-async) options=(--ps 1 --async) workers=$((nodes - 1)) ;;
            esac
            predict=("$dnntune" predict --model "$network" --ppn 1 --threads 1 --batch "$batch" --nodes "$nodes"
                     "${options[@]}" --json --calibration "$work/calibration-$rate.json")
            fitted=$("${predict[@]}")
            given=$("${predict[@]}" --link-gbps "$(awk -v r="$rate" 'BEGIN { print r / 1000 }')" --link-latency-us "${latency_us:-0}")
            read -r step low high exposed compute images < <(jq -r '"\(.timings.iteration.median_seconds) \(.timings.iteration.min_seconds) \(.timings.iteration.max_seconds) \(.timings.exposed_communication.median_seconds) \(.timings.forward.median_seconds + .timings.backward.median_seconds) \(.images_per_second)"' "$measured")
            read -r predicted_fit predicted_exposed predicted_efficiency < <(jq -r '"\(.iteration_seconds) \(.terms_seconds.exposed_communication) \(.scaling_efficiency)"' <<<"$fitted")
            predicted_rate=$(jq -r .iteration_seconds <<<"$given")
            measured_efficiency=$(awk -v i="$images" -v w="$workers" -v b="$batch" -v s="$alone_step" 'BEGIN { printf "%.4f", i / w / (b / s) }')
            shared=$(awk -v c="$compute" -v a="$alone_compute" -v s="$step" 'BEGIN { printf "%.3f", (c - a) / s }')
            spread=$(awk -v l="$low" -v h="$high" -v m="$step" 'BEGIN { printf "%.3f", (h - l) / m }')
            # The sweep over these nodes, its largest messages: the all-reduce's bus bandwidth over the
            # shaped payload rate, and the larger spread of the all-reduce and the send/recv.
            read -r link sweep_cv < <(jq -rs --argjson n "$nodes" --argjson payload "$payload_bytes_per_second" '
                [.[] | select(.nodes == $n and .processes == $n and .status == "ok")] as $sweep
                | ($sweep | map(.message_bytes) | max) as $largest
                | [$sweep[] | select(.message_bytes == $largest)] as $top
                | ([$top[] | select(.descriptor == "allreduce") | 2 * ($n - 1) / $n * .message_bytes / .median_seconds / $payload] | max // 0)
                  as $link
                | "\($link) \([$top[] | .coefficient_of_variation] | max // 1)"' "$work/calibration-$rate/comm.jsonl")
            link=$(awk -v l="$link" 'BEGIN { printf "%.2f", l }')
            sweep_cv=$(awk -v c="$sweep_cv" 'BEGIN { printf "%.3f", c }')
            trusted=$(awk -v s="$shared" -v p="$spread" -v c="$sweep_cv" -v sl="$share_limit" -v pl="$spread_limit" -v cl="$sweep_cv_limit" \
                'BEGIN { print (s <= sl && p <= pl && c <= cl) ? "trusted" : "untrusted" }')
            error_fit=$(percent_error "$predicted_fit" "$step")
            error_rate=$(percent_error "$predicted_rate" "$step")
            errors_fit+=("$error_fit") errors_rate+=("$error_rate")
            if [[ $scheme != ps-async ]]; then errors_exposed+=("$(percent_error "$predicted_exposed" "$exposed")"); fi
            if [[ $trusted == trusted ]]; then
                trusted_fit+=("$error_fit") trusted_rate+=("$error_rate")
                if [[ $scheme != ps-async ]]; then trusted_exposed+=("$(percent_error "$predicted_exposed" "$exposed")"); fi
            fi
            printf "%5s %5s %-9s | %7.3f [%6.3f..%6.3f] | %8.3f %6s%% | %8.3f %6s%% | %7.3f / %5.3f | %6.4f / %6.4f | %6s %6s %6s %5s %s\n" \
                "$rate" "$nodes" "$scheme" "$step" "$low" "$high" "$predicted_fit" "$error_fit" "$predicted_rate" "$error_rate" \
                "$exposed" "$predicted_exposed" "$measured_efficiency" "$predicted_efficiency" "$shared" "$spread" "$sweep_cv" "$link" "$trusted"
        done
    done
done
echo "median |error| of the step, fitted link: $(median_abs "${trusted_fit[@]}")% over ${#trusted_fit[@]} trusted rows," \
     "$(median_abs "${errors_fit[@]}")% over all ${#errors_fit[@]}"
echo "median |error| of the step, rate as numbers: $(median_abs "${trusted_rate[@]}")% over trusted rows, $(median_abs "${errors_rate[@]}")% over all"
echo "median |error| of the exposed communication (ring and PS sync; PS async's is its own wait): $(median_abs "${trusted_exposed[@]}")%" \
     "over trusted rows, $(median_abs "${errors_exposed[@]}")% over all"
for rate in $rates; do echo "fit at $rate Mb/s: $(grep 'inter-node link:' "$work/fit-$rate.txt" | sed 's/^ *//')"; done
echo "benchmark took $((SECONDS - started)) s"
