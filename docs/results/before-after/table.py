#!/usr/bin/env python3
"""Prints the before/after throughput table from interleaved compare-bench runs.

Usage: table.py DIR  (DIR holds before-N.jsonl and after-N.jsonl, run in the order
before-1, after-1, before-2, after-2, ... on one machine.) For each system the ratio is the
mean pairs/s after over the mean before; the peers' ratios (their code did not change) show
how far the machine alone moves a number between runs.
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def load(paths):
    rows = defaultdict(list)
    for path in paths:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("scenario") not in ("latency", "contention"):
                continue
            key = (record["scenario"], record["backend"], record.get("clients", 1), record["system"])
            rows[key].append(record["ops_per_s"])
    return rows


def main(directory):
    directory = Path(directory)
    before = load(sorted(directory.glob("before-*.jsonl")))
    after = load(sorted(directory.glob("after-*.jsonl")))
    print("| scenario | backend | clients | system | before pairs/s | after pairs/s | after/before |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(before.keys() & after.keys()):
        scenario, backend, clients, system = key
        if scenario == "contention" and clients not in (1, 8, 32):
            continue
        old, new = statistics.mean(before[key]), statistics.mean(after[key])
        print(f"| {scenario} | {backend} | {clients} | {system} | {old:.0f} | {new:.0f} | {new / old:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
