# train/python/torchvision_training.py — the training step users run, for `dnntune train --runner
# python`: torchvision's MODEL trained by PyTorch from Python (SGD with momentum, cross-entropy, one
# fixed synthetic batch, as the C++ trainer does), timed per step and per pass. dnntune embeds this
# file and runs it as `python3 -c SOURCE ARGS` (train/python_runner.cpp), one process per rank:
# with WORLD_SIZE > 1 in the environment (RANK, MASTER_ADDR, MASTER_PORT set by that rank's
# dnntune) the ranks form a gloo process group and train under DistributedDataParallel, as a
# torchrun or mpirun job of users' would. Each rank writes its samples as JSON to --output.
#
# Exit codes: 0 trained; 2 a request it cannot train (a network torchvision does not build, torch
# or torchvision missing), its reason in --output as {"error": ...}; anything else a failure.
import argparse
import json
import math
import os
import sys
import time

parser = argparse.ArgumentParser(prog="torchvision_training")
parser.add_argument("--model", required=True)
parser.add_argument("--check", action="store_true", help="only check that MODEL can be trained here")
parser.add_argument("--batch", type=int, default=8)
parser.add_argument("--image-size", type=int, default=224)
parser.add_argument("--classes", type=int, default=1000)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--iters", type=int, default=3)
parser.add_argument("--warmup", type=int, default=1)
parser.add_argument("--time-limit", type=float, default=0)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--momentum", type=float, default=0.9)
parser.add_argument("--bucket-mb", type=float, default=25)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--output", required=True)
arguments = parser.parse_args()


def refuse(message):
    """A request this cannot train: the reason, one line, for dnntune to report; exit 2."""
    with open(arguments.output, "w") as out:
        json.dump({"error": message}, out)
    sys.exit(2)


try:
    import torch
    import torchvision
except ImportError as error:
    refuse(f"{sys.executable} cannot import torch and torchvision ({error}): install python3-torch and "
           "python3-torchvision, or set DNNTUNE_PYTHON to a Python that has them")

# The built-in networks torchvision builds the same way (workloads/zoo.cpp): the one registry of
# what the python runner trains. inception_v3 returns its auxiliary head's logits in training too.
NETWORKS = {
    "resnet18": lambda classes: torchvision.models.resnet18(num_classes=classes),
    "resnet34": lambda classes: torchvision.models.resnet34(num_classes=classes),
    "resnet50": lambda classes: torchvision.models.resnet50(num_classes=classes),
    "resnet101": lambda classes: torchvision.models.resnet101(num_classes=classes),
    "resnet152": lambda classes: torchvision.models.resnet152(num_classes=classes),
    "inception_v3": lambda classes: torchvision.models.inception_v3(num_classes=classes, aux_logits=True,
                                                                    init_weights=False),
    "inception_v3_noaux": lambda classes: torchvision.models.inception_v3(num_classes=classes, aux_logits=False,
                                                                          init_weights=False),
    "vgg16": lambda classes: torchvision.models.vgg16(num_classes=classes),
    "alexnet": lambda classes: torchvision.models.alexnet(num_classes=classes),
    "mobilenet_v2": lambda classes: torchvision.models.mobilenet_v2(num_classes=classes),
}
if arguments.model not in NETWORKS:
    refuse(f"the python runner trains torchvision's {', '.join(NETWORKS)}; {arguments.model} is not one of them "
           "(train it with --runner dnntune)")
if arguments.check:
    with open(arguments.output, "w") as out:
        json.dump({"ok": True}, out)
    sys.exit(0)

world_size = int(os.environ.get("WORLD_SIZE", "1"))
rank = int(os.environ.get("RANK", "0"))
torch.set_num_threads(arguments.threads)
torch.manual_seed(arguments.seed)  # the same weights on every rank (DDP also broadcasts rank 0's)
model = NETWORKS[arguments.model](arguments.classes)
model.train()
if world_size > 1:
    import datetime

    import torch.distributed as distributed

    distributed.init_process_group("gloo", timeout=datetime.timedelta(minutes=10))
    model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=arguments.bucket_mb)
torch.manual_seed(arguments.seed + 1 + rank)  # each rank's own batch, as the C++ trainer's
images = torch.randn(arguments.batch, 3, arguments.image_size, arguments.image_size)
labels = torch.randint(0, arguments.classes, (arguments.batch,))
loss_function = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=arguments.lr, momentum=arguments.momentum)

samples = {"iteration": [], "forward": [], "backward": [], "optimizer": []}
losses = []
began = time.perf_counter()
for step in range(arguments.warmup + arguments.iters):
    start = time.perf_counter()
    optimizer.zero_grad(set_to_none=True)
    output = model(images)
    if isinstance(output, tuple):  # inception_v3's InceptionOutputs(logits, aux_logits)
        loss = loss_function(output[0], labels) + loss_function(output[1], labels)
    else:
        loss = loss_function(output, labels)
    forward_done = time.perf_counter()
    loss.backward()  # under DDP the gradients' all-reduce overlaps it and ends inside it
    backward_done = time.perf_counter()
    optimizer.step()
    done = time.perf_counter()
    losses.append(loss.item())
    if step < arguments.warmup:
        continue
    samples["iteration"].append(done - start)
    samples["forward"].append(forward_done - start)
    samples["backward"].append(backward_done - forward_done)
    samples["optimizer"].append(done - backward_done)
    if arguments.time_limit > 0 and step + 1 < arguments.warmup + arguments.iters:
        # Another step as long as this one would end past the limit: stop, rank 0 deciding for all.
        stop = torch.tensor([1.0 if done - began + (done - start) > arguments.time_limit else 0.0])
        if world_size > 1:
            distributed.broadcast(stop, 0)
        if stop.item() > 0:
            break

report = {
    "torch_version": torch.__version__,
    "torchvision_version": torchvision.__version__,
    "python_version": sys.version.split()[0],
    "parameters": sum(parameter.numel() for parameter in model.parameters()),
    "threads": torch.get_num_threads(),
    "cpus": sorted(os.sched_getaffinity(0)),
    "samples": samples,
    "losses": [loss if math.isfinite(loss) else None for loss in losses],  # JSON has no NaN
}
with open(arguments.output, "w") as out:
    json.dump(report, out)
if world_size > 1:
    distributed.destroy_process_group()
