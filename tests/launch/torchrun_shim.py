#!/usr/bin/python3
"""tests/launch/torchrun_shim.py ARGS... — Debian 12's torchrun (PyTorch 1.13) under Python 3.11:
Python 3.11 no longer yields a Flag's zero member when iterating it, so torch's Std.from_str("0")
(the default --redirects and --tee) returns None and every torchrun dies in to_map(). This runs
torchrun's own main() with that one conversion fixed; nothing else changes. PyTorch 2.x fixed it."""
import sys

import torch.distributed.elastic.multiprocessing.api as api

_from_str = api.Std.from_str


def _fixed_from_str(text):
    value = _from_str(text)
    return api.Std.NONE if value is None else value


api.Std.from_str = _fixed_from_str
from torch.distributed.run import main  # noqa: E402

sys.exit(main())
