"""tests/python/command_checks.py — what the Python tests that hold the module against the command
share: the command's --json answer, and a check that stops the test at its first failure with
one line (and says each check that held), and temporary folders that leave nothing behind."""
import atexit
import json
import shutil
import subprocess
import sys
import tempfile


def temporary_directory(prefix):
    """A fresh folder under /tmp, removed with all it holds when the test ends, passed or failed."""
    directory = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, directory, ignore_errors=True)  # sys.exit runs atexit too
    return directory


def command_json(dnntune_command, *arguments):
    """`dnntune ARGUMENTS --json`, parsed; a failing command fails the test with its error."""
    return json.loads(subprocess.run([dnntune_command, *arguments, "--json"], capture_output=True, text=True,
                                     check=True).stdout)


def check(condition, what):
    if not condition:
        sys.exit("FAILED: " + what)
    print("ok: " + what)
