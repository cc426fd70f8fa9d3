# tests/scheduler/one_node_slurm.sh — sourced by the scheduler tests: start_one_node_slurm WORK
# PORT CLUSTER starts a one-node SLURM on loopback (munge + slurmctld + slurmd from Debian's
# slurm-wlm, generated config, as root) with its files in WORK, slurmctld on PORT and slurmd on
# PORT+1, partition `test` holding this host; exports SLURM_CONF and waits until the node is
# idle. stop_one_node_slurm WORK stops what it started. Needs a `fail` function.
# An optional fourth argument GPUS gives the node that many GPUs as GRES, their "devices" copies
# of /dev/null in WORK (slurmd drops a GPU without a character device File; task/affinity
# constrains no devices): SLURM allocates them and sets CUDA_VISIBLE_DEVICES, no real GPU needed.
start_one_node_slurm() {
    local work=$1 port=$2 cluster=$3 gpus=${4:-0}
    local node node_line gres_types=""
    node=$(hostname)
    node_line=$(slurmd -C | head -1 | sed 's/ UpTime.*//')
    if ((gpus > 0)); then
        node_line="$node_line Gres=gpu:$gpus"
        gres_types="GresTypes=gpu"
        for ((gpu = 0; gpu < gpus; gpu++)); do mknod "$work/gpu$gpu" c 1 3 || fail "mknod"; done
        echo "NodeName=$node Name=gpu File=$work/gpu[0-$((gpus - 1))]" >"$work/gres.conf"
    fi
    mkdir -p "$work/state" "$work/spool"
    dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 2>/dev/null
    chmod 600 "$work/munge.key"
    munged --key-file="$work/munge.key" --socket="$work/munge.socket" --pid-file="$work/munged.pid" \
        --log-file="$work/munged.log" --seed-file="$work/munge.seed" -f || fail "munged"
    cat >"$work/slurm.conf" <<CONF
ClusterName=$cluster
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge.socket
CredType=cred/munge
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
$gres_types
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=UNLIMITED State=UP
CONF
    export SLURM_CONF=$work/slurm.conf
    slurmctld -f "$SLURM_CONF" || fail "slurmctld"
    slurmd -f "$SLURM_CONF" || fail "slurmd"
    for _ in $(seq 60); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 1; done
    sinfo -h -o %t | grep -q idle || fail "the node never became idle"
}

stop_one_node_slurm() {
    local work=$1 pid_file
    for pid_file in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munged.pid"; do
        [[ -f $pid_file ]] && kill "$(cat "$pid_file")" 2>/dev/null || true
    done
    sleep 1
}
