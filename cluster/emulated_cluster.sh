#!/usr/bin/env bash
# cluster/emulated_cluster.sh — an emulated cluster on one machine, to check communication for
# real: N "nodes" (network namespaces), each joined by a veth pair to a bridge that lives in a
# "switch" namespace of its own, every link shaped with tc tbf in both directions (the node's
# NIC sending, and the switch port sending to it), and COMMAND run with an mpirun wrapper that
# starts ranks inside the node namespaces, Open MPI restricted to TCP on the emulated subnet.
#
#   cluster/emulated_cluster.sh [--nodes N] [--mbit RATE] [--queue-ms MS] [--ranks-per-node K] -- COMMAND...
#
# --queue-ms: how much a link's tbf queue holds, in milliseconds at its rate (default 5, a switch
# port's shallow buffer). A long queue delays the small packets (TCP ACKs, MPI's rendezvous
# handshakes) that share a direction with bulk data, which a ring all-reduce pays at every one of
# its 2(N-1) steps: measured at 100 Mb/s, 4.2 MB ring, 2/3/4 nodes, each step cost 19/11/16 ms
# more than the volume with a 50 ms queue, 9/9/7 ms with 5 ms.
#
# COMMAND runs in the root namespace with these in its environment:
#   DNT_CLUSTER_MPIRUN  an executable: `$DNT_CLUSTER_MPIRUN -np 2 dnntune train ...` runs mpirun
#                       (inside node 0) over all nodes, K slots each, with the TCP-only options
#   DNT_CLUSTER_NODES, DNT_CLUSTER_MBIT, DNT_CLUSTER_SUBNET
# Nothing touches the root namespace's network: addresses (10.231.SLOT.0/24) exist only inside
# the namespaces. Latency cannot be added: this kernel has no netem, and tbf only shapes rate.
# Everything is removed on exit, SIGINT and SIGTERM; a run finds and removes what a killed run
# left (its slot's recorded pid is no longer alive). Needs root.
set -euo pipefail

nodes=2 mbit=1000 ranks_per_node=1 queue_ms=5
while (($#)); do
    case $1 in
        --nodes) nodes=$2; shift 2 ;;
        --mbit) mbit=$2; shift 2 ;;
        --ranks-per-node) ranks_per_node=$2; shift 2 ;;
        --queue-ms) queue_ms=$2; shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "emulated_cluster: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
(($#)) || { echo "emulated_cluster: give a COMMAND after --" >&2; exit 2; }
[[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 32)) || { echo "emulated_cluster: --nodes must be 1..32" >&2; exit 2; }
[[ $ranks_per_node =~ ^[0-9]+$ ]] && ((ranks_per_node >= 1)) || { echo "emulated_cluster: --ranks-per-node must be >= 1" >&2; exit 2; }
[[ $mbit =~ ^[0-9]+$ ]] && ((mbit >= 1 && mbit <= 100000)) || { echo "emulated_cluster: --mbit must be 1..100000" >&2; exit 2; }
[[ $queue_ms =~ ^[0-9]+$ ]] && ((queue_ms >= 1 && queue_ms <= 1000)) || { echo "emulated_cluster: --queue-ms must be 1..1000" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "emulated_cluster: needs root (network namespaces)" >&2; exit 77; }

state_root=/run/dnt-cluster
mkdir -p "$state_root"

# The namespaces of slot SLOT (dnt<SLOT>n<I>, dnt<SLOT>sw).
slot_namespaces() { ip netns list | awk '{print $1}' | grep -E "^dnt$1(n[0-9]+|sw)\$" || true; }

# The processes inside slot SLOT's namespaces (ranks, orted, mpirun), ended: TERM, then KILL.
end_slot_processes() {
    local ns pid signal
    for signal in TERM KILL; do
        for ns in $(slot_namespaces "$1"); do
            for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "-$signal" "$pid" 2>/dev/null || true; done
        done
        if [[ $signal == TERM ]]; then sleep 0.2; fi
    done
}

# The processes, namespaces, bridge and veths of slot SLOT (all named dnt<SLOT>...), removed if present.
remove_slot() {
    local slot=$1 i
    end_slot_processes "$slot"
    for ((i = 0; i < 32; i++)); do
        ip netns del "dnt${slot}n$i" 2>/dev/null || true
    done
    ip netns del "dnt${slot}sw" 2>/dev/null || true
    # veth ends still in the root namespace (a run killed halfway through creating them).
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^dnt${slot}[hv][0-9]+\$" || true); do
        ip link del "$link" 2>/dev/null || true
    done
    rm -rf "${state_root:?}/slot$slot"
}

# Leftovers of killed runs: a slot whose recorded pid is gone (or that never got one, and not
# because another run is taking it right now).
for slot_dir in "$state_root"/slot*; do
    [[ -d $slot_dir ]] || continue
    owner=$(cat "$slot_dir/pid" 2>/dev/null || echo 0)
    ((owner == 0 && $(date +%s) - $(stat -c %Y "$slot_dir") < 60)) && continue
    if ((owner == 0)) || ! kill -0 "$owner" 2>/dev/null; then
        echo "emulated_cluster: removing what a killed run left in ${slot_dir##*/}" >&2
        remove_slot "${slot_dir##*/slot}"
    fi
done

# A free slot, taken atomically (mkdir), so concurrent runs never share names or subnets.
slot=
for ((candidate = 1; candidate < 250; candidate++)); do
    mkdir -p "$state_root"  # again: a run that just ended may have removed it
    if mkdir "$state_root/slot$candidate" 2>/dev/null; then slot=$candidate; break; fi
done
[[ -n $slot ]] || { echo "emulated_cluster: every slot is taken by a running cluster" >&2; exit 1; }
echo $$ >"$state_root/slot$slot/pid"
work=$state_root/slot$slot

cleanup() {
    trap - EXIT INT TERM
    # COMMAND and what it started in the root namespace: its own process group.
    [[ -n ${command_pid:-} ]] && kill -TERM -- "-$command_pid" 2>/dev/null || true
    remove_slot "$slot"
    rmdir "$state_root" 2>/dev/null || true  # the last run out removes the state directory too
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

subnet=10.231.$slot.0/24
switch=dnt${slot}sw
ip netns add "$switch"
ip -n "$switch" link add "dnt${slot}br" type bridge
ip -n "$switch" link set "dnt${slot}br" up
# tbf: RATE, a bucket of 1 ms at that rate (at least 16 kB: a few full frames), so that messages
# above a few kB already see the rate, not a burst at line speed; and a queue of --queue-ms.
burst_bytes=$((mbit * 1000000 / 8 / 1000))
((burst_bytes < 16000)) && burst_bytes=16000
shape() { ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "${mbit}mbit" burst "$burst_bytes" latency "${queue_ms}ms"; }
hosts=
for ((i = 0; i < nodes; i++)); do
    node=dnt${slot}n$i
    ip netns add "$node"
    ip link add "dnt${slot}v$i" type veth peer name "dnt${slot}h$i"
    ip link set "dnt${slot}v$i" netns "$node"
    ip link set "dnt${slot}h$i" netns "$switch"
    ip -n "$node" link set lo up
    ip -n "$node" addr add "10.231.$slot.$((i + 1))/24" dev "dnt${slot}v$i"
    ip -n "$node" link set "dnt${slot}v$i" up
    ip -n "$switch" link set "dnt${slot}h$i" master "dnt${slot}br"
    ip -n "$switch" link set "dnt${slot}h$i" up
    shape "$node" "dnt${slot}v$i"
    shape "$switch" "dnt${slot}h$i"
    hosts+=${hosts:+,}$node:$ranks_per_node
done

# mpirun's launch agent: "AGENT [options] HOST COMMAND..." as ssh would be called; it enters the
# node's namespace (ranks in every namespace still see all CPUs: hence --bind-to none), with a
# hostname (a UTS namespace) and a session directory of the node's own: Open MPI daemons that
# share both race for the same session directories and fail to start.
cat >"$work/agent" <<AGENT
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
mkdir -p "$work/tmp-\$host"
export OMPI_MCA_orte_tmpdir_base="$work/tmp-\$host"
exec ip netns exec "\$host" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$1"' "\$host" "\$*"
AGENT
cat >"$work/mpirun" <<MPIRUN
#!/bin/sh
# mpirun across the emulated cluster of slot $slot (made by cluster/emulated_cluster.sh).
exec ip netns exec dnt${slot}n0 mpirun --allow-run-as-root --oversubscribe --bind-to none \\
    --host $hosts --mca plm_rsh_agent $work/agent --mca mpi_yield_when_idle 1 \\
    --mca btl self,vader,tcp --mca btl_tcp_if_include $subnet --mca oob_tcp_if_include $subnet \\
    -x PATH "\$@"
MPIRUN
chmod +x "$work/agent" "$work/mpirun"

echo "emulated_cluster: $nodes nodes x $ranks_per_node ranks, links ${mbit} Mb/s each way (tbf, ${queue_ms} ms queue), subnet $subnet" >&2
export DNT_CLUSTER_MPIRUN=$work/mpirun DNT_CLUSTER_NODES=$nodes DNT_CLUSTER_MBIT=$mbit DNT_CLUSTER_SUBNET=$subnet
# COMMAND in the background so that a signal reaches our trap at once, not when it ends, and in
# a process group of its own (setsid) so that the trap can end all of it.
setsid "$@" &
command_pid=$!
status=0
wait "$command_pid" || status=$?
exit "$status"
