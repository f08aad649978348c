#!/usr/bin/env python3
"""Tables from the criterion results of `cargo bench -p memory-bench`.

    cargo bench -p memory-bench && python3 bench/criterion_table.py [--criterion target/criterion]

Prints, as Markdown: the time per command on every backend; SQLite beside the folder store in
durable edits and views per second; and the encrypted wrapper's overhead over its inner
backend. The estimate used is the one criterion prints as `time` (the slope of the linear fit
where criterion has one, else the mean).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, Tuple

BACKENDS = ["mem", "fs", "sqlite", "enc-mem", "enc-fs", "enc-sqlite", "s3-mem"]
ROWS = [
    ("view_file", "1KiB"), ("view_file", "64KiB"), ("view_dir", "2000files"),
    ("create", "1KiB"), ("create", "64KiB"), ("str_replace", "1KiB"), ("str_replace", "64KiB"),
    ("insert", "1KiB"), ("insert", "64KiB"), ("rename", "1KiB"), ("rename", "64KiB"),
]


def load(root: str) -> Dict[Tuple[str, str, str], float]:
    """(command, size, backend) -> nanoseconds per command."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json"), encoding="utf-8") as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json"), encoding="utf-8") as f:
            est = json.load(f)
        parts = bench["full_id"].split("/")
        if len(parts) != 3:
            continue
        point = (est.get("slope") or est["mean"])["point_estimate"]
        out[(parts[0], parts[1], parts[2])] = point
    return out


def us(ns: float) -> str:
    return f"{ns / 1000:,.1f}" if ns < 100_000_000 else f"{ns / 1000:,.0f}"


def per_s(ns: float) -> str:
    return f"{1e9 / ns:,.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--criterion", default=os.path.join("target", "criterion"))
    args = ap.parse_args()
    data = load(args.criterion)
    if not data:
        print(f"no criterion results under {args.criterion}; run `cargo bench -p memory-bench` first",
              file=sys.stderr)
        return 1
    backends = [b for b in BACKENDS if any(k[2] == b for k in data)]

    print("### Time per command (µs)\n")
    print("| command | size | " + " | ".join(backends) + " |")
    print("|---|---|" + "---:|" * len(backends))
    for cmd, size in ROWS:
        cells = [us(data[(cmd, size, b)]) if (cmd, size, b) in data else "" for b in backends]
        print(f"| {cmd} | {size} | " + " | ".join(cells) + " |")

    print("\n### SQLite beside the folder store (durable, per second)\n")
    print("| command | size | fs | sqlite | sqlite / fs |")
    print("|---|---|---:|---:|---:|")
    for cmd, size in ROWS:
        fs, sq = data.get((cmd, size, "fs")), data.get((cmd, size, "sqlite"))
        if fs and sq:
            print(f"| {cmd} | {size} | {per_s(fs)} | {per_s(sq)} | {fs / sq:.2f}x |")

    print("\n### Encryption overhead over the inner backend\n")
    print("| command | size | inner | inner µs | encrypted µs | added µs | encrypted / inner |")
    print("|---|---|---|---:|---:|---:|---:|")
    for inner in ["mem", "fs", "sqlite"]:
        for cmd, size in ROWS:
            plain, enc = data.get((cmd, size, inner)), data.get((cmd, size, f"enc-{inner}"))
            if plain and enc:
                print(f"| {cmd} | {size} | {inner} | {us(plain)} | {us(enc)} | "
                      f"{(enc - plain) / 1000:,.1f} | {enc / plain:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
