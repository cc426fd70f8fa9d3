"""tests/python/has_modules.py MODULE... — exit 0 when this Python can import every MODULE (a
top-level package), 1 otherwise, without importing them: an end-to-end test's check for what it
needs (python3-torch, python3-torchvision), which importing torch would make cost seconds."""
import importlib.util
import sys

sys.exit(0 if all(importlib.util.find_spec(name) for name in sys.argv[1:]) else 1)
