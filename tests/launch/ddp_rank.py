#!/usr/bin/python3
"""tests/launch/ddp_rank.py OUTPUT_DIR [observe] — one rank of a real PyTorch DDP job (Debian's
python3-torch, gloo): joins the process group from the torch.distributed variables the launch
line set, all-reduces its rank, and writes what it saw: RANK, LOCAL_RANK, WORLD_SIZE, its
thread count, its CPU set and the batch dnntune chose (DNNTUNE_BATCH_PER_PROCESS). With `observe`,
it then trains torchvision's resnet18 for a few DDP steps under the hook dnntune.observe, which
records the job (its network read from the model's class, its setup from the launch line's variables)."""
import json
import os
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
total = torch.tensor([float(rank)])
dist.all_reduce(total)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
model(torch.randn(int(os.environ["DNNTUNE_BATCH_PER_PROCESS"]), 4)).sum().backward()
report = {
    "rank": rank,
    "env_rank": int(os.environ["RANK"]),
    "local_rank": int(os.environ["LOCAL_RANK"]),
    "world_size": dist.get_world_size(),
    "env_world_size": int(os.environ["WORLD_SIZE"]),
    "rank_sum": total.item(),
    "threads": torch.get_num_threads(),
    "omp_num_threads": int(os.environ["OMP_NUM_THREADS"]),
    "cpus": sorted(os.sched_getaffinity(0)),
    "batch": int(os.environ["DNNTUNE_BATCH_PER_PROCESS"]),
    "ld_preload": os.environ.get("LD_PRELOAD", ""),
    "maps_allocator": any("jemalloc" in line or "tcmalloc" in line for line in open("/proc/self/maps")),
}
with open(os.path.join(sys.argv[1], f"rank{rank}.json"), "w") as out:
    json.dump(report, out)
if sys.argv[2:] == ["observe"]:
    import torchvision
    import dnntune
    batch = int(os.environ["DNNTUNE_BATCH_PER_PROCESS"])
    network = torch.nn.parallel.DistributedDataParallel(torchvision.models.resnet18(num_classes=10))
    optimizer = torch.optim.SGD(network.parameters(), lr=0.01)
    images, labels = torch.randn(batch, 3, 64, 64), torch.randint(0, 10, (batch,))
    with dnntune.observe(model=network, batch=batch, warmup_steps=1) as job:
        for _ in range(7):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(network(images), labels).backward()
            optimizer.step()
            job.step()
    del network, optimizer  # the group gone before the interpreter's teardown (tests/cluster/observed_job.py)
dist.barrier()
dist.destroy_process_group()
