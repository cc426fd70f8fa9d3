#!/usr/bin/python3
"""benchmarks/observe_cost.py BUILD_DIR [STEPS] — the training-job hook's cost per step (issue 62):
the same training loop with and without dnntune.observe's job.step(), steps alternated within each
round so that the machine's drift falls on both alike; prints the median step of each, the hook's
cost per step in microseconds (per round, for its spread), and that cost as a share of a step. The loop is a small real PyTorch step (a conv
network's forward, backward and SGD at batch 8, 32x32 images) when /usr/bin/python3 has torch, else a
fixed amount of arithmetic. The hook's close() (one `dnntune probe --quick` and an append, once per
job) is timed apart. Run it on a quiet machine."""
import os
import statistics
import sys
import tempfile
import time

build = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
sys.path.insert(0, os.path.join(build, "python"))
os.environ.setdefault("DNNTUNE_EXECUTABLE", os.path.join(build, "cli", "dnntune"))
records = tempfile.TemporaryDirectory(prefix="dnntune-observe-cost-")  # removed at exit
os.environ["DNNTUNE_JOB_RECORD"] = os.path.join(records.name, "jobs.jsonl")
import dnntune  # noqa: E402

try:
    import torch
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(16 * 30 * 30, 10))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    images, labels = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))

    def train_step():
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(net(images), labels).backward()
        optimizer.step()
    workload = "PyTorch conv step, batch 8"
except ImportError:
    def train_step():
        sum(index * index for index in range(20000))
    workload = "arithmetic (no torch)"


def paired_rounds(rounds):
    """Each round alternates steps with and without job.step() in one loop (which comes first swaps
    every step), so drift, turbo and the page cache fall on both alike; the two loops one after the
    other differed by more than the hook costs. Returns per-round (plain, hooked) step times."""
    per_round = []
    for round_index in range(rounds):
        job = dnntune.observe("resnet18", batch=8, warmup_steps=0, job_id="cost-%d" % round_index)
        plain, hooked = [], []
        for step in range(2 * steps):
            with_hook = (step + step // 2) % 2 == 1
            start = time.perf_counter()
            train_step()
            if with_hook:
                job.step()
            (hooked if with_hook else plain).append(time.perf_counter() - start)
        closing = time.perf_counter()
        job.close()
        closes.append(time.perf_counter() - closing)
        per_round.append((plain, hooked))
    return per_round


closes = []
for _ in range(20):  # warm-up: first steps allocate and fault pages in
    train_step()
per_round = paired_rounds(5)
plain = [t for round_times in per_round for t in round_times[0]]
hooked = [t for round_times in per_round for t in round_times[1]]
differences = [statistics.median(h) - statistics.median(p) for p, h in per_round]
plain_median, hooked_median = statistics.median(plain), statistics.median(hooked)
# The hook's own work per step, timed alone: what the difference of two noisy medians cannot resolve.
job = dnntune.observe("resnet18", batch=8, warmup_steps=0)
start = time.perf_counter()
for _ in range(100000):
    job.step()
alone = (time.perf_counter() - start) / 100000
print("workload: %s, %d steps x 5 rounds each" % (workload, steps))
print("median step without the hook: %.1f us; with it: %.1f us" % (plain_median * 1e6, hooked_median * 1e6))
print("with minus without, per round: %s us (median %.2f us = %.3f%% of a step)" %
      (", ".join("%.2f" % (d * 1e6) for d in differences), statistics.median(differences) * 1e6,
       100 * statistics.median(differences) / plain_median))
print("job.step() alone: %.3f us per step = %.4f%% of a step" % (alone * 1e6, 100 * alone / plain_median))
print("close() (once per job: gather, probe --quick, append): median %.3f s" % statistics.median(closes))
