#!/usr/bin/env python3
"""Prints the spread of ZooKeeper ratios over repeated compare-bench runs of one scenario.

Usage: zk-spread-table.py DIR  (DIR holds run-N.jsonl, each one `compare-bench --only SCENARIO
--backends zookeeper` run, SCENARIO `contention` or `latency`.) For each client count: the
pairs/s of each system in every run, and, over the runs, the lowest, median and highest of the
scenario's ratios.
- contention: distlock, the recipe floor (the queue's server work from bare sessions) and
  Curator; floor / Curator (what the server work allows against the peer), distlock / Curator
  (the goal's ratio), distlock / floor (what distlock's client adds).
- latency: distlock, the create+delete floor, the labelled node floor (distlock's own node from
  a bare session) and Curator; node / create+delete (what distlock's node costs the server),
  distlock / create+delete (the goal's ratio), distlock / node (what distlock's client adds),
  distlock / Curator (the other goal's ratio).
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# Per scenario: each system's role and the words of its name, and the ratios to print.
SCENARIOS = {
    "contention": (
        {"distlock": "distlock", "floor": "recipe floor", "Curator": "Curator"},
        [("floor", "Curator"), ("distlock", "Curator"), ("distlock", "floor")],
    ),
    "latency": (
        {
            "distlock": "distlock",
            "create+delete": "create+delete floor",
            "node": "labelled node floor",
            "Curator": "Curator",
        },
        [
            ("node", "create+delete"),
            ("distlock", "create+delete"),
            ("distlock", "node"),
            ("distlock", "Curator"),
        ],
    ),
}


def load(path):
    """(scenario, {clients: {role: pairs/s}}) of one run's ZooKeeper rows."""
    rates, scenario = defaultdict(dict), None
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("scenario") not in SCENARIOS or record.get("backend") != "zookeeper":
            continue
        scenario = record["scenario"]
        for role, words in SCENARIOS[scenario][0].items():
            if words in record["system"]:
                rates[record["clients"]][role] = record["ops_per_s"]
    return scenario, rates


def spread(values):
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main(directory):
    loaded = [load(path) for path in sorted(Path(directory).glob("run-*.jsonl"))]
    scenario = next(found for found, _ in loaded if found)
    systems, ratios = SCENARIOS[scenario]
    runs = [rates for _, rates in loaded]
    print(f"{len(runs)} runs; ratios as lowest / median / highest over the runs.\n")
    heads = [f"{role} pairs/s" for role in systems] + [f"{a} / {b}" for a, b in ratios]
    print("| clients | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for clients in sorted(set().union(*runs)):
        cells = [run[clients] for run in runs if len(run.get(clients, {})) == len(systems)]
        rates = [" ".join(f"{cell[role]:.0f}" for cell in cells) for role in systems]
        shares = [spread([cell[a] / cell[b] for cell in cells]) for a, b in ratios]
        print(f"| {clients} | " + " | ".join(rates + shares) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
