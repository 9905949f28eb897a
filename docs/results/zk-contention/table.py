#!/usr/bin/env python3
"""Prints the spread of ZooKeeper contention ratios over repeated compare-bench runs.

Usage: table.py DIR  (DIR holds run-N.jsonl, each one `compare-bench --only contention
--backends zookeeper` run.) For each client count: the pairs/s of distlock, the recipe floor
(the same server work from a bare session) and Curator in every run, and, over the runs, the
lowest, median and highest of three ratios: the floor against Curator (what the server work
allows against the peer), distlock against Curator (the goal's ratio) and distlock against
the floor (what distlock's client adds).
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

SYSTEMS = {"distlock": "distlock", "floor": "recipe floor", "curator": "Curator"}


def load(path):
    """{clients: {role: pairs/s}} of one run's contention rows."""
    rates = defaultdict(dict)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("scenario") != "contention" or record.get("backend") != "zookeeper":
            continue
        for role, words in SYSTEMS.items():
            if words in record["system"]:
                rates[record["clients"]][role] = record["ops_per_s"]
    return rates


def spread(values):
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main(directory):
    runs = [load(path) for path in sorted(Path(directory).glob("run-*.jsonl"))]
    print(f"{len(runs)} runs; ratios as lowest / median / highest over the runs.\n")
    print("| clients | distlock pairs/s | floor pairs/s | Curator pairs/s "
          "| floor / Curator | distlock / Curator | distlock / floor |")
    print("|---|---|---|---|---|---|---|")
    for clients in sorted(set().union(*runs)):
        cells = [run[clients] for run in runs if len(run.get(clients, {})) == len(SYSTEMS)]
        rates = {role: " ".join(f"{cell[role]:.0f}" for cell in cells) for role in SYSTEMS}
        ratio = lambda a, b: spread([cell[a] / cell[b] for cell in cells])
        print(f"| {clients} | {rates['distlock']} | {rates['floor']} | {rates['curator']} "
              f"| {ratio('floor', 'curator')} | {ratio('distlock', 'curator')} "
              f"| {ratio('distlock', 'floor')} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
