"""Renders scripts/client-instructions' results.jsonl as the README of its directory."""

import json
import sys


def main(path):
    rows = [json.loads(line) for line in open(path)]
    header = next(row for row in rows if row.get("header"))
    systems = [row for row in rows if not row.get("header")]
    print("# Client instructions per uncontended pair\n")
    print(f"`{header['command']}` at {header['commit']}: callgrind's count of the client's")
    print("instructions (every thread of the client process, none of the server's) for one")
    print("acquire+release pair, from two runs that differ only by their number of pairs.")
    print("Unlike pairs per second or CPU time, the count does not depend on the machine's")
    print("speed or load. `over distlock` is the system's count divided by distlock's on the")
    print("same backend.\n")
    for backend in dict.fromkeys(row["backend"] for row in systems):
        ours = [r for r in systems if r["backend"] == backend and r["role"] == "distlock"]
        base = ours[0]["instructions_per_pair"] if ours else None
        print(f"## {backend}\n")
        print("| system | role | instructions per pair | over distlock |")
        print("|---|---|---:|---:|")
        for row in (r for r in systems if r["backend"] == backend):
            count = row["instructions_per_pair"]
            ratio = f"{count / base:.2f}" if base else ""
            print(f"| {row['system']} | {row['role']} | {count:,} | {ratio} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1])
