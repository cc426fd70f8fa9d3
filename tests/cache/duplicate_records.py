#!/usr/bin/python3
"""tests/cache/duplicate_records.py RECORDS.jsonl — prints how many measurements in the file are a
second record of the same key (kind, backend, network, descriptor, pass, batch, setting) among the
records that are not `skipped`: 0 when nothing was measured twice. The cache tests' one check of it."""
import collections
import json
import sys

KEY = ("kind", "backend", "network", "descriptor", "pass", "batch", "threads", "smt", "processes")
keys = collections.Counter()
for line in open(sys.argv[1]):
    record = json.loads(line)
    if record["status"] == "skipped":
        continue
    keys[tuple(str(record[k]) for k in KEY)] += 1
print(sum(count - 1 for count in keys.values()))
