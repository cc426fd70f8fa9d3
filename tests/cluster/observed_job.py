#!/usr/bin/python3
"""tests/cluster/observed_job.py NETWORK_FILE STEPS — one rank of a PyTorch DDP job (gloo) started by
the emulated cluster's mpirun (cluster/emulated_cluster.sh), timed by the hook dnntune.observe: the
network of tests/fixtures/wide_linear_network.json (4 MB of gradients, little compute: its step over
nodes is the shaped link's), batch 8 per rank, one thread. Rank 0 meets the others at
DNT_MASTER_ADDR:DNT_MASTER_PORT (node 0's address on the emulated subnet); each rank talks over its
namespace's one link (GLOO_SOCKET_IFNAME), never loopback."""
import os
import sys

import torch
import torch.distributed as distributed
import torch.nn.functional as functional

import dnntune

network_file, steps = sys.argv[1], int(sys.argv[2])
rank, world = int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"])
os.environ["GLOO_SOCKET_IFNAME"] = next(name for name in sorted(os.listdir("/sys/class/net")) if name != "lo")
distributed.init_process_group("gloo", init_method="tcp://%s:%s" % (os.environ["DNT_MASTER_ADDR"],
                                                                    os.environ["DNT_MASTER_PORT"]),
                               rank=rank, world_size=world)
torch.set_num_threads(1)
torch.manual_seed(0)
# The layers of wide_linear_network.json, in its order.
network = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10))
model = torch.nn.parallel.DistributedDataParallel(network)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
images, labels = torch.randn(8, 1024, 1, 1), torch.randint(0, 10, (8,))
with dnntune.observe(network_file, batch=8, warmup_steps=2) as job:
    for _ in range(steps):
        optimizer.zero_grad()
        functional.cross_entropy(model(images), labels).backward()
        optimizer.step()
        job.step()
# Leave together, the process group really gone before the interpreter's teardown (the DDP model holds
# it): rank 0 records the job after the gather, and a rank tearing gloo down meanwhile has aborted
# ("terminate called without an active exception"; seen in CI, rare: docs/results.md).
distributed.barrier()
del model, optimizer
distributed.destroy_process_group()
