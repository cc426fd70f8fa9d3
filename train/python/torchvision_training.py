# train/python/torchvision_training.py — the training step users run, for `dnntune train --runner
# python`: torchvision's MODEL trained by PyTorch from Python (SGD with momentum, cross-entropy, one
# fixed synthetic batch, as the C++ trainer does), timed per step and per pass. dnntune embeds this
# file and runs it as `python3 -c SOURCE ARGS` (train/python_runner.cpp), one process per rank:
# with WORLD_SIZE > 1 in the environment (RANK, MASTER_ADDR, MASTER_PORT set by that rank's
# dnntune) the ranks form a gloo process group and train under DistributedDataParallel, as a
# torchrun or mpirun job of users' would (NCCL on GPUs). Each rank writes its samples as JSON to --output.
#
# On a GPU (--device cuda) it trains as GPU users do: cudnn.benchmark on, --precision fp32 (strict:
# no TF32), tf32 (PyTorch's default from compute capability 8.0 on: cuDNN convolutions on TF32
# tensor cores, matmul in fp32), bf16 or fp16 (torch.autocast; fp16 with a GradScaler), and
# --memory-format channels_last; every timestamp follows a torch.cuda.synchronize().
#
# Exit codes: 0 trained; 2 a request it cannot train (a network torchvision does not build, torch
# or torchvision missing), its reason in --output as {"error": ...}; anything else a failure.
import argparse
import contextlib
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
# No default of its own: train/python_runner.cpp passes the trainer's (records::kDefaultBucketMegabytes)
# to every training run; --check alone trains nothing and needs none.
parser.add_argument("--bucket-mb", type=float)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--device", choices=["cpu", "cuda", "auto"], default="cpu")
parser.add_argument("--precision", choices=["auto", "fp32", "tf32", "bf16", "fp16"], default="auto")
parser.add_argument("--memory-format", choices=["contiguous", "channels_last"], default="contiguous")
parser.add_argument("--output", required=True)
arguments = parser.parse_args()
if not arguments.check and arguments.bucket_mb is None:
    parser.error("the following arguments are required: --bucket-mb")


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
local_rank = int(os.environ.get("LOCAL_RANK", "0"))
cuda = arguments.device == "cuda" or (arguments.device == "auto" and torch.cuda.is_available())
if cuda and not torch.cuda.is_available():
    refuse(f"--device cuda, but {sys.executable}'s torch {torch.__version__} sees no CUDA GPU")
device = torch.device("cuda", local_rank % torch.cuda.device_count()) if cuda else torch.device("cpu")
precision = arguments.precision
if precision == "auto":  # PyTorch's own default: TF32 convolutions where the GPU has TF32
    precision = "tf32" if cuda and torch.cuda.get_device_capability(device)[0] >= 8 else "fp32"
if not cuda and precision != "fp32":
    refuse(f"--precision {precision} runs on a GPU (--device cuda): on the CPU the trainer runs fp32")
memory_format = torch.channels_last if arguments.memory_format == "channels_last" else torch.contiguous_format
if cuda:
    torch.cuda.set_device(device)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = precision != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = False


def synchronized_now():
    if cuda:
        torch.cuda.synchronize(device)
    return time.perf_counter()


def autocast():
    if precision in ("bf16", "fp16"):
        return torch.autocast("cuda", dtype=torch.bfloat16 if precision == "bf16" else torch.float16)
    return contextlib.nullcontext()


torch.set_num_threads(arguments.threads)
torch.manual_seed(arguments.seed)  # the same weights on every rank (DDP also broadcasts rank 0's)
model = NETWORKS[arguments.model](arguments.classes).to(device=device, memory_format=memory_format)
model.train()
if world_size > 1:
    import datetime

    import torch.distributed as distributed

    distributed.init_process_group("nccl" if cuda else "gloo", timeout=datetime.timedelta(minutes=10))
    model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=arguments.bucket_mb,
                                                      device_ids=[device.index] if cuda else None)
torch.manual_seed(arguments.seed + 1 + rank)  # each rank's own batch, as the C++ trainer's
images = torch.randn(arguments.batch, 3, arguments.image_size, arguments.image_size).to(
    device=device, memory_format=memory_format)
labels = torch.randint(0, arguments.classes, (arguments.batch,)).to(device)
loss_function = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=arguments.lr, momentum=arguments.momentum)
scaler = None
if precision == "fp16":  # torch.amp.GradScaler from PyTorch 2.3 on, torch.cuda.amp's before
    scaler = torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler") else torch.cuda.amp.GradScaler()
skipped_steps = 0

samples = {"iteration": [], "forward": [], "backward": [], "optimizer": []}
losses = []
began = time.perf_counter()
for step in range(arguments.warmup + arguments.iters):
    start = synchronized_now()
    optimizer.zero_grad(set_to_none=True)
    with autocast():
        output = model(images)
        if isinstance(output, tuple):  # inception_v3's InceptionOutputs(logits, aux_logits)
            loss = loss_function(output[0], labels) + loss_function(output[1], labels)
        else:
            loss = loss_function(output, labels)
    forward_done = synchronized_now()
    # Under DDP the gradients' all-reduce overlaps backward and ends inside it.
    (scaler.scale(loss) if scaler else loss).backward()
    backward_done = synchronized_now()
    if scaler:
        scale_before = scaler.get_scale()
        scaler.step(optimizer)  # skipped when the gradients hold an inf or a NaN
        scaler.update()
        skipped = scaler.get_scale() < scale_before
    else:
        optimizer.step()
        skipped = False
    done = synchronized_now()
    losses.append(loss.item())
    if step < arguments.warmup:
        continue
    skipped_steps += skipped
    samples["iteration"].append(done - start)
    samples["forward"].append(forward_done - start)
    samples["backward"].append(backward_done - forward_done)
    samples["optimizer"].append(done - backward_done)
    if arguments.time_limit > 0 and step + 1 < arguments.warmup + arguments.iters:
        # Another step as long as this one would end past the limit: stop, rank 0 deciding for all.
        stop = torch.tensor([1.0 if done - began + (done - start) > arguments.time_limit else 0.0], device=device)
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
    "device": "cuda" if cuda else "cpu",
    "precision": precision,
    "memory_format": arguments.memory_format,
    "skipped_steps": skipped_steps,
    "cpus": sorted(os.sched_getaffinity(0)),
    "samples": samples,
    "losses": [loss if math.isfinite(loss) else None for loss in losses],  # JSON has no NaN
}
with open(arguments.output, "w") as out:
    json.dump(report, out)
if world_size > 1:
    # The ranks leave together and the group is really gone (the DDP model holds it) before the
    # interpreter's teardown: a rank tearing gloo down while another still worked, or at exit, has
    # aborted ("terminate called without an active exception", tests/cluster/observed_job.py).
    distributed.barrier()
    del model, optimizer
    distributed.destroy_process_group()
