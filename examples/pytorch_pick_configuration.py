#!/usr/bin/python3
"""examples/pytorch_pick_configuration.py — a PyTorch training script that asks dnntune for its
own configuration before it starts: threads per process and batch for this node, from this
machine's calibration (or a spec machine's), then trains a few synthetic steps with them.

    PYTHONPATH=build/python examples/pytorch_pick_configuration.py --calibration calibration.json
    PYTHONPATH=build/python examples/pytorch_pick_configuration.py --machine skylake-8180 --steps 0

Under a launcher that already fixed the processes (torchrun, mpirun, srun), only the threads and
batch are this script's to choose; `dnntune recommend --format torchrun|mpirun|slurm` chooses
the processes too.
"""
import argparse
import time

import dnntune

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--calibration", help="this machine's calibration (dnntune fit -o FILE)")
parser.add_argument("--machine", help="a spec machine instead (dnntune machines)")
parser.add_argument("--network", default="resnet50")
parser.add_argument("--batches", default="16,32,64")
parser.add_argument("--steps", type=int, default=3)
arguments = parser.parse_args()

model = dnntune.Model(calibration=arguments.calibration, machine=arguments.machine)
answer = model.recommend(arguments.network, batches=[int(b) for b in arguments.batches.split(",")])
best = answer["best"]
configuration = best["configuration"]
print(f"dnntune: {configuration['processes_per_node']} ppn x {configuration['threads_per_process']} threads, "
      f"batch {configuration['batch_per_process']}: {best['images_per_second']:.1f} images/s predicted "
      f"(90% band {best['band']['low']:.1f}-{best['band']['high']:.1f}, {best['confidence']})")

if arguments.steps > 0:
    import torch
    import torchvision

    torch.set_num_threads(configuration["threads_per_process"])
    network = getattr(torchvision.models, arguments.network)()
    optimizer = torch.optim.SGD(network.parameters(), lr=0.01, momentum=0.9)
    batch = configuration["batch_per_process"]
    images, labels = torch.randn(batch, 3, 224, 224), torch.randint(0, 1000, (batch,))
    for step in range(arguments.steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(network(images), labels).backward()
        optimizer.step()
        print(f"step {step}: {batch / (time.perf_counter() - start):.2f} images/s")
