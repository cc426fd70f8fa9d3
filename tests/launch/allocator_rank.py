#!/usr/bin/python3
"""tests/launch/allocator_rank.py OUTPUT_DIR — one rank of an emitted launch line, for
allocator_ranks_test.sh: writes its process id to OUTPUT_DIR/rankN.pid (N from RANK, else Open
MPI's or SLURM's rank) and waits until OUTPUT_DIR/release exists (at most 90 s), so that the test
can read this process's /proc/PID/maps and /proc/PID/environ from outside while it runs."""
import os
import sys
import time

out = sys.argv[1]
rank = os.environ.get("RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("SLURM_PROCID") or "x"
with open(os.path.join(out, f"rank{rank}.pid.part"), "w") as pid_file:
    pid_file.write(str(os.getpid()))
os.rename(os.path.join(out, f"rank{rank}.pid.part"), os.path.join(out, f"rank{rank}.pid"))
deadline = time.monotonic() + 90
while not os.path.exists(os.path.join(out, "release")) and time.monotonic() < deadline:
    time.sleep(0.05)
