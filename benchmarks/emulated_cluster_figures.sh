#!/usr/bin/env bash
# benchmarks/emulated_cluster_figures.sh [DNNTUNE] — the communication and scaling model against
# real training on an emulated cluster (cluster/emulated_cluster.sh, as root): for each link rate
# (Mb/s, default "100 1000"), 2..4 nodes x 1 rank each, all-reduce and parameter server (1
# server, sync and async), the median step and exposed communication of `dnntune train`
# against `dnntune predict`, from a calibration of this machine (micro-runs of the network) plus
# the cluster's own communication sweep (its inter-node link fitted), and from the shaped rate
# given as numbers (--link-gbps, with the fitted latency).
#
# The network (benchmarks/comm_heavy_network.json: a 1M-parameter linear layer, 4.2 MB of
# gradients, batch 2, 1 thread per rank) is chosen so that communication dominates the step:
# ranks beyond the 2 cores time-share them, which makes compute figures untrustworthy, and a
# network whose step is mostly communication keeps that out of the comparison.
# Schemes: allreduce (Open MPI as it comes: its own choice of algorithm, which changes with ranks
# and message size), ring (Open MPI told to use its ring all-reduce, the algorithm the model
# describes and PyTorch DDP's and Horovod's, over 2 TCP connections per pair of ranks: with one,
# the two directions between 2 nodes ran at half the link), ps-sync and ps-async. The sweep runs the ring, up to 4 MiB (the
# network's one gradient bucket), so the link is fitted where and as training communicates.
# Environment: DNT_RATES="100 1000", DNT_NODE_COUNTS="2 3 4", DNT_ITERS=6, DNT_KEEP=1 keeps the
# work directory (records, logs) and prints its path.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dnntune=${1:-$root/build/cli/dnntune}
network=$root/benchmarks/comm_heavy_network.json
rates=${DNT_RATES:-100 1000}
node_counts=${DNT_NODE_COUNTS:-2 3 4}
iterations=${DNT_ITERS:-6}
batch=2
[[ $(id -u) -eq 0 ]] || { echo "emulated_cluster_figures: needs root (network namespaces)" >&2; exit 1; }
work=$(mktemp -d /tmp/dnntune-cluster-figures-XXXXXX)
if [[ ${DNT_KEEP:-0} == 1 ]]; then echo "# work directory: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
started=$SECONDS

echo "# layer micro-runs of $(basename "$network") at batch $batch, 1 thread" >&2
"$dnntune" calibrate --model "$network" --backend torch --batch "$batch" --threads 1 --budget 40 -o "$work/layers" \
    >"$work/layers.log" 2>&1

largest_nodes=0
for nodes in $node_counts; do ((nodes > largest_nodes)) && largest_nodes=$nodes; done
export DNT_BENCH_DNNTUNE=$dnntune DNT_BENCH_NETWORK=$network DNT_BENCH_BATCH=$batch DNT_BENCH_ITERS=$iterations
export DNT_BENCH_NODE_COUNTS=$node_counts DNT_BENCH_LARGEST=$largest_nodes
for rate in $rates; do
    echo "# $rate Mb/s: communication sweep over $largest_nodes nodes, then training" >&2
    cp -r "$work/layers" "$work/calibration-$rate"
    export DNT_BENCH_OUT=$work/$rate DNT_BENCH_CALIBRATION=$work/calibration-$rate
    mkdir -p "$DNT_BENCH_OUT"
    "$root/cluster/emulated_cluster.sh" --nodes "$largest_nodes" --mbit "$rate" -- bash -c '
        set -e
        ring=(-x OMPI_MCA_coll_tuned_use_dynamic_rules=1 -x OMPI_MCA_coll_tuned_allreduce_algorithm=4
              --mca btl_tcp_links 2)
        $DNT_CLUSTER_MPIRUN -np $DNT_BENCH_LARGEST "${ring[@]}" "$DNT_BENCH_DNNTUNE" calibrate --comm --comm-max-mb 4 \
            --comm-budget 60 -o "$DNT_BENCH_CALIBRATION" >"$DNT_BENCH_OUT/comm.txt" 2>&1
        for nodes in $DNT_BENCH_NODE_COUNTS; do
            for scheme in allreduce ring ps-sync ps-async; do
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

echo
echo "Predicted vs measured on the emulated cluster (1 rank per node, $(basename "$network" .json), batch $batch, 1 thread;"
echo "step: median [min..max] of $iterations steps; pred fit: the fitted inter-node link; pred rate: --link-gbps, fitted latency)"
printf "%6s %5s %-9s | %22s %10s | %9s %7s | %9s %7s | %9s %9s\n" "Mb/s" "nodes" "scheme" "measured step s" "exposed s" \
    "pred fit" "error" "pred rate" "error" "pred exp" "link MB/s"
errors_fit=() errors_rate=()
for rate in $rates; do
    link_line=$(grep 'inter-node link:' "$work/fit-$rate.txt")
    latency_us=$(sed -n 's/.*inter-node link: \([0-9.]*\) us.*/\1/p' <<<"$link_line")
    link_mbs=$(sed -n 's/.*us, \([0-9.]*\) GB\/s.*/\1/p' <<<"$link_line" | awk '{ printf "%.1f", $1 * 1000 }')
    for nodes in $node_counts; do
        for scheme in allreduce ring ps-sync ps-async; do
            measured=$work/$rate/train-$nodes-$scheme.json
            case $scheme in
                allreduce|ring) options=() ;;
                ps-sync) options=(--ps 1) ;;
                ps-async) options=(--ps 1 --async) ;;
            esac
            predict=("$dnntune" predict --model "$network" --ppn 1 --threads 1 --batch "$batch" --nodes "$nodes"
                     "${options[@]}" --json)
            fitted=$("${predict[@]}" --calibration "$work/calibration-$rate.json")
            given=$("${predict[@]}" --calibration "$work/calibration-$rate.json" --link-gbps "$(awk -v r="$rate" 'BEGIN { print r / 1000 }')" \
                    --link-latency-us "${latency_us:-0}")
            read -r step low high exposed < <(jq -r '.timings | "\(.iteration.median_seconds) \(.iteration.min_seconds) \(.iteration.max_seconds) \(.exposed_communication.median_seconds)"' "$measured")
            predicted_fit=$(jq -r .iteration_seconds <<<"$fitted")
            predicted_rate=$(jq -r .iteration_seconds <<<"$given")
            predicted_exposed=$(jq -r .terms_seconds.exposed_communication <<<"$fitted")
            error_fit=$(awk -v p="$predicted_fit" -v m="$step" 'BEGIN { printf "%+.1f", 100 * (p - m) / m }')
            error_rate=$(awk -v p="$predicted_rate" -v m="$step" 'BEGIN { printf "%+.1f", 100 * (p - m) / m }')
            errors_fit+=("${error_fit#+}") errors_rate+=("${error_rate#+}")
            printf "%6s %5s %-9s | %7.3f [%6.3f..%6.3f] %10.3f | %9.3f %6s%% | %9.3f %6s%% | %9.3f %9s\n" "$rate" "$nodes" \
                "$scheme" "$step" "$low" "$high" "$exposed" "$predicted_fit" "$error_fit" "$predicted_rate" "$error_rate" \
                "$predicted_exposed" "$link_mbs"
        done
    done
done
median_abs() { printf '%s\n' "$@" | tr -d - | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "median |error| of the step: $(median_abs "${errors_fit[@]}")% (fitted link), $(median_abs "${errors_rate[@]}")% (rate as numbers)"
for rate in $rates; do echo "fit at $rate Mb/s: $(grep 'inter-node link:' "$work/fit-$rate.txt" | sed 's/^ *//')"; done
echo "benchmark took $((SECONDS - started)) s"
