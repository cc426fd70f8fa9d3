# tests/cluster/needs_namespaces.sh — sourced by the emulated-cluster tests: exits 77 (ctest's
# skipped) unless this shell is root and may make network namespaces (cluster/emulated_cluster.sh).
[[ $(id -u) -eq 0 ]] || { echo "skipped: needs root for network namespaces"; exit 77; }
probe_namespace=dntprobe$$
ip netns add "$probe_namespace" 2>/dev/null || { echo "skipped: ip netns is not permitted here"; exit 77; }
ip netns del "$probe_namespace"
