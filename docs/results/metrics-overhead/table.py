#!/usr/bin/env python3
"""Prints the metrics-overhead table from interleaved compare-bench runs.

Usage: table.py DIR  (DIR holds before-N.jsonl, off-N.jsonl and on-N.jsonl, run in the order
before-1, off-1, on-1, before-2, ... on one machine by scripts/metrics-overhead.) For each
system: mean pairs/s per build, off/before (what the telemetry code costs with the feature
off) and on/off (what recording every event costs). The peers' code is the same in all three
builds, so their ratios show how far the machine alone moves a number between runs.
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
            clients = record.get("clients", 1)
            if record["scenario"] == "contention" and clients not in (1, 32):
                continue
            key = (record["scenario"], record["backend"], clients, record["system"])
            rows[key].append(record["ops_per_s"])
    return rows


def main(directory):
    directory = Path(directory)
    builds = {name: load(sorted(directory.glob(f"{name}-*.jsonl"))) for name in ("before", "off", "on")}
    print("| scenario | backend | clients | system | before | off | on | off/before | on/off |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = builds["before"].keys() & builds["off"].keys() & builds["on"].keys()
    for key in sorted(keys):
        scenario, backend, clients, system = key
        before, off, on = (statistics.mean(builds[name][key]) for name in ("before", "off", "on"))
        print(f"| {scenario} | {backend} | {clients} | {system} | {before:.0f} | {off:.0f} | {on:.0f} "
              f"| {off / before:.2f} | {on / off:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
