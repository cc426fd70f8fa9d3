#!/usr/bin/python3
"""benchmarks/observe_cost.py BUILD_DIR [STEPS] — the training-job hook's cost per step (issue 62):
the same training loop with and without dnntune.observe's job.step(), interleaved in rounds so that
the machine's drift falls on both alike; prints the median step of each, the hook's cost per step in
microseconds, and that cost as a share of a step. The loop is a small real PyTorch step (a conv
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
os.environ["DNNTUNE_JOB_RECORD"] = os.path.join(tempfile.mkdtemp(prefix="dnntune-observe-cost-"), "jobs.jsonl")
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


def plain_loop():
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        train_step()
        times.append(time.perf_counter() - start)
    return times


def hooked_loop(round_index):
    times = []
    job = dnntune.observe("resnet18", batch=8, warmup_steps=0, job_id="cost-%d" % round_index)
    for _ in range(steps):
        start = time.perf_counter()
        train_step()
        job.step()
        times.append(time.perf_counter() - start)
    closing = time.perf_counter()
    job.close()
    return times, time.perf_counter() - closing


plain, hooked, closes = [], [], []
for round_index in range(5):
    plain += plain_loop()
    times, closed = hooked_loop(round_index)
    hooked += times
    closes.append(closed)
plain_median, hooked_median = statistics.median(plain), statistics.median(hooked)
# The hook's own work per step, timed alone: what the difference of two noisy medians cannot resolve.
job = dnntune.observe("resnet18", batch=8, warmup_steps=0)
start = time.perf_counter()
for _ in range(100000):
    job.step()
alone = (time.perf_counter() - start) / 100000
print("workload: %s, %d steps x 5 rounds each" % (workload, steps))
print("median step without the hook: %.1f us; with it: %.1f us" % (plain_median * 1e6, hooked_median * 1e6))
print("job.step() alone: %.3f us per step = %.4f%% of a step" % (alone * 1e6, 100 * alone / plain_median))
print("close() (once per job: gather, probe --quick, append): median %.3f s" % statistics.median(closes))
