#!/usr/bin/python3
# benchmarks/torch_images_per_second.py MODEL BATCH THREADS [STEPS] [WARMUP] — PyTorch from
# Python as a reference for `dnntune train`: trains a torchvision MODEL (train mode) on one fixed
# synthetic batch with cross-entropy and SGD with momentum, as the trainer does, and prints
# "images_per_second X" at the median of STEPS timed steps after WARMUP untimed ones. One
# process; a 2x1 figure is two of these run at once, each pinned to its own core (the caller
# sums them: independent processes, no gradient exchange).
import statistics
import sys
import time

import torch
import torchvision

model_name, batch, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 5
warmup = int(sys.argv[5]) if len(sys.argv) > 5 else 2
torch.set_num_threads(threads)
torch.manual_seed(1)
# Inception-v3 without its auxiliary head's second loss would be a different network; torchvision
# builds it with aux_logits=True and returns both outputs in training, summed here as the trainer does.
model = getattr(torchvision.models, model_name)(num_classes=1000)
model.train()
size = 299 if model_name == "inception_v3" else 224
images = torch.randn(batch, 3, size, size)
labels = torch.arange(batch) % 1000
loss_function = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
seconds = []
for step in range(warmup + steps):
    start = time.perf_counter()
    optimizer.zero_grad(set_to_none=True)
    output = model(images)
    if isinstance(output, tuple):  # inception_v3's InceptionOutputs(logits, aux_logits)
        loss = loss_function(output[0], labels) + loss_function(output[1], labels)
    else:
        loss = loss_function(output, labels)
    loss.backward()
    optimizer.step()
    if step >= warmup:
        seconds.append(time.perf_counter() - start)
print("images_per_second %.3f" % (batch / statistics.median(seconds)))
