#!/usr/bin/env python3
"""Times one JSON-lines workload through every memory-tool implementation; prints medians.

Called by bench/compare.sh, which builds and installs everything first; stdlib only. For each
mix it generates the seeded workload (memory-bench workload), then runs every runner on it
RUNS times, each run in a fresh empty folder under --work (one filesystem for all), and the
floor (memory-bench floor) with as many write + fsync + rename operations as the workload
has commands that change the store. Runners are interleaved run by run, so that noise on a
shared machine spreads over all of them, and before each timed run the disk is synced
(untimed), so that no runner pays for the writeback of the one before it.

Each runner is also run RUNS times on an empty input: the median of those is its start-up
(process start, interpreter and SDK import, opening the store), which is subtracted, so that
"net" is the time spent answering the commands. Every run's output is checked: one JSON line
per command, the expected number of errors, and (for the runners that keep plain files in the
SDK layout) the final files exactly as the generator modelled them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from typing import Dict, List, Optional


def sh(argv: List[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def loadavg() -> str:
    try:
        with open("/proc/loadavg", encoding="utf-8") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def machine(work: str) -> Dict[str, str]:
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    df = sh(["df", "--output=fstype,source", work]).splitlines()
    fs = " on ".join(df[-1].split()) if len(df) > 1 else (sh(["stat", "-f", "-c", "%T", work]) or "?")
    return {
        "nproc": sh(["nproc"]) or str(os.cpu_count()),
        "cpu": cpu or platform.processor() or "?",
        "filesystem": fs,
        "kernel": platform.release(),
    }


# Names this invocation's PostgreSQL roots, so runs never meet another invocation's data.
RUN = uuid.uuid4().hex[:8]


class Runner:
    def __init__(self, name: str, argv: List[str], files_in_sdk_layout: bool = False,
                 floor: Optional[dict] = None, persistent: bool = True) -> None:
        self.name = name
        self.argv = argv  # "{root}" is replaced by the run's folder
        self.files_in_sdk_layout = files_in_sdk_layout
        self.floor = floor  # for the floor: {"sync_dir": bool}
        # Whether the store outlives the process (a mix with setup lines needs that).
        self.persistent = persistent

    def command(self, root: str, count: Optional[int] = None, size: int = 0) -> List[str]:
        argv = [a.replace("{root}", root) for a in self.argv]
        # "{rootname}": a PostgreSQL root name (letters, digits, - and _) unique to this run.
        name = RUN + "_" + re.sub(r"[^A-Za-z0-9_-]", "_", os.path.basename(root))[-40:]
        argv = [a.replace("{rootname}", name) for a in argv]
        if self.floor is not None:
            argv += ["--count", str(count or 0), "--size", str(size)]
            if self.floor["sync_dir"]:
                argv.append("--sync-dir")
        return argv


def read_tree(memories: str) -> Dict[str, str]:
    tree = {}
    for dirpath, _dirs, files in os.walk(memories):
        for name in files:
            full = os.path.join(dirpath, name)
            rel = "/memories/" + os.path.relpath(full, memories).replace(os.sep, "/")
            with open(full, encoding="utf-8") as f:
                tree[rel] = f.read()
    return tree


def settle() -> None:
    """Writes out what earlier runs left dirty (their files, the removal of their folders)
    before the next timed run, untimed: otherwise a runner pays for the writeback and block
    discards of the one before it, and the order of runners decides the figures."""
    os.sync()


def run_once(runner: Runner, work: str, tag: str, workload: Optional[str], stats: dict,
             expected_tree: Optional[Dict[str, str]], check_tree: bool,
             setup: Optional[str] = None) -> float:
    """Times one run of `runner` on `workload` in a fresh folder; `setup` (JSON lines) runs
    first in the same folder, untimed."""
    root = os.path.join(work, "roots", f"{runner.name.replace(' ', '_')}-{tag}")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    if runner.floor is not None:
        count = stats["durable_ops"] if workload else 0
        argv = runner.command(root, count, stats["mean_write_size"])
        stdin_path = os.devnull
    else:
        argv = runner.command(root)
        stdin_path = workload or os.devnull
        if setup:
            # The store's seed files, written untimed into the same folder.
            with open(setup, "rb") as stdin:
                done = subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, check=False)
            if done.returncode != 0:
                raise SystemExit(f"{runner.name} failed its setup ({done.returncode}): "
                                 f"{' '.join(argv)}\n{done.stderr.decode(errors='replace')[-2000:]}")
    out_path = os.path.join(work, "last-output.jsonl")
    settle()
    with open(stdin_path, "rb") as stdin, open(out_path, "wb") as stdout:
        start = time.perf_counter()
        proc = subprocess.run(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, check=False)
        elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{runner.name} failed ({proc.returncode}): {' '.join(argv)}\n"
                         f"{proc.stderr.decode(errors='replace')[-2000:]}")
    if workload and runner.floor is None:
        with open(out_path, encoding="utf-8") as f:
            results = [json.loads(line) for line in f]
        expected_lines = sum(stats["commands"].values())
        if len(results) != expected_lines:
            raise SystemExit(f"{runner.name}: {len(results)} output lines for {expected_lines} commands")
        errors = sum(1 for r in results if r.get("is_error"))
        if errors != stats["expected_errors"]:
            bad = [r["content"] for r in results if r.get("is_error")][:3]
            raise SystemExit(f"{runner.name}: {errors} errors, expected {stats['expected_errors']}: {bad}")
        if check_tree and runner.files_in_sdk_layout and expected_tree is not None:
            actual = read_tree(os.path.join(root, "memories"))
            if actual != expected_tree:
                missing = sorted(set(expected_tree) ^ set(actual))[:3]
                differ = [k for k in expected_tree if k in actual and actual[k] != expected_tree[k]][:3]
                raise SystemExit(f"{runner.name}: final files differ from the model "
                                 f"(only on one side: {missing}; content differs: {differ})")
    shutil.rmtree(root, ignore_errors=True)
    return elapsed


def fmt_s(x: float) -> str:
    return f"{x:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", required=True, help="the release `memory` binary")
    ap.add_argument("--bench", required=True, help="the release `memory-bench` binary")
    ap.add_argument("--python", help="the venv's python with anthropic==2.14.0")
    ap.add_argument("--py-oracle", help="py_oracle.py (drives BetaLocalFilesystemMemoryTool)")
    ap.add_argument("--node", help="node, when the TypeScript SDK is to be measured")
    ap.add_argument("--ts-runner", help="bench/ts_runner.mjs")
    ap.add_argument("--ts-sdk", help="the folder whose node_modules holds @anthropic-ai/sdk")
    ap.add_argument("--work", required=True, help="scratch folder (the filesystem measured)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--views-count", type=int, default=5000,
                    help="commands in the views mix (the other mixes have --count)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mixes", default="agent,write-heavy,views")
    ap.add_argument("--versions", default="{}", help="JSON object of tool versions to report")
    ap.add_argument("--json", help="write all measurements here")
    args = ap.parse_args()

    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    key = os.path.join(work, "bench.key")
    if not os.path.exists(key):
        subprocess.run([args.memory, "keygen", key], check=True, stdout=subprocess.DEVNULL)

    m = args.memory
    runners = [
        Runner("memory fs", [m, "exec", "--store", "file:{root}"], files_in_sdk_layout=True),
        Runner("memory sqlite", [m, "exec", "--store", "sqlite:{root}/memory.db"]),
        Runner("memory enc-fs", [m, "exec", "--store", "file:{root}", "--encryption-key-file", key]),
        Runner("memory enc-sqlite",
               [m, "exec", "--store", "sqlite:{root}/memory.db", "--encryption-key-file", key]),
        Runner("memory mem (no disk)", [m, "exec", "--store", "mem:"], persistent=False),
        # No fsync at all (the Python SDK fsyncs each file it writes, not its folder: its
        # like-for-like setting is sync=data).
        Runner("memory fs sync=none", [m, "exec", "--store", "file:{root}?sync=none"],
               files_in_sdk_layout=True),
        Runner("memory sqlite sync=none", [m, "exec", "--store", "sqlite:{root}/memory.db?sync=none"]),
        # The search index's words written by each write in its own transaction, instead of
        # by the writer thread in batches (the default, index=batched).
        Runner("memory sqlite sync=none index=write",
               [m, "exec", "--store", "sqlite:{root}/memory.db?sync=none&index=write"]),
    ]
    pg = os.environ.get("MEMORY_TEST_POSTGRES_URL")
    if pg:
        sep = "&" if "?" in pg else "?"
        runners.append(Runner("memory postgres", [m, "exec", "--store",
                              pg + sep + "schema=memory_bench_compare&root={rootname}"]))
    if args.python and args.py_oracle:
        runners.append(Runner("Python SDK", [args.python, args.py_oracle, "--root", "{root}"],
                              files_in_sdk_layout=True))
    if args.node and args.ts_runner and args.ts_sdk:
        runners.append(Runner("TypeScript SDK",
                              [args.node, args.ts_runner, "--root", "{root}", "--sdk-dir", args.ts_sdk],
                              files_in_sdk_layout=True))
    runners.append(Runner("floor: write+fsync+rename", [args.bench, "floor", "--dir", "{root}"],
                          floor={"sync_dir": False}))
    runners.append(Runner("floor: + fsync of the folder", [args.bench, "floor", "--dir", "{root}"],
                          floor={"sync_dir": True}))

    info = machine(work)
    versions = json.loads(args.versions)
    print(f"machine: {info['nproc']} cores, {info['cpu']}, kernel {info['kernel']}")
    print(f"filesystem of the scratch folder: {info['filesystem']}")
    print(f"load average (1, 5, 15 min) at start: {loadavg()}")
    if versions:
        print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"{args.runs} runs per runner and mix, {args.count} commands per workload, seed {args.seed}\n")
    sys.stdout.flush()

    # Start-up: the same for every mix.
    empty_stats = {"durable_ops": 0, "mean_write_size": 0}
    startup: Dict[str, float] = {}
    for r in runners:
        times = [run_once(r, work, f"startup{i}", None, empty_stats, None, False) for i in range(args.runs)]
        startup[r.name] = statistics.median(times)

    report = {"machine": info, "versions": versions, "runs": args.runs, "count": args.count,
              "seed": args.seed, "startup_s": startup, "mixes": {}}
    for mix in args.mixes.split(","):
        workload = os.path.join(work, f"{mix}.jsonl")
        stats_path = os.path.join(work, f"{mix}.stats.json")
        final_path = os.path.join(work, f"{mix}.final.json")
        setup_path = os.path.join(work, f"{mix}.setup.jsonl")
        count = args.views_count if mix == "views" else args.count
        subprocess.run([args.bench, "workload", "--mix", mix, "--count", str(count),
                        "--seed", str(args.seed), "--out", workload, "--stats", stats_path,
                        "--final", final_path, "--setup", setup_path], check=True)
        setup = setup_path if os.path.getsize(setup_path) > 0 else None
        with open(stats_path, encoding="utf-8") as f:
            stats = json.load(f)
        with open(final_path, encoding="utf-8") as f:
            expected_tree = json.load(f)
        # A mix that changes nothing (views) has no floor to compare with.
        # A mix seeded by a separate setup run needs a store that outlives the process.
        mix_runners = [r for r in runners
                       if (r.floor is None or stats["durable_ops"] > 0)
                       and (r.persistent or setup is None)]
        times: Dict[str, List[float]] = {r.name: [] for r in mix_runners}
        for i in range(args.runs):
            order = mix_runners[i % len(mix_runners):] + mix_runners[:i % len(mix_runners)]
            for r in order:
                times[r.name].append(run_once(r, work, f"{mix}-{i}", workload, stats,
                                              expected_tree, check_tree=(i == 0), setup=setup))
        rows = []
        for r in mix_runners:
            total = statistics.median(times[r.name])
            net = max(total - startup[r.name], 1e-9)
            ops = stats["durable_ops"] if r.floor is not None else count
            rows.append({"runner": r.name, "total_s": total, "startup_s": startup[r.name],
                         "net_s": net, "ops": ops, "per_s": ops / net,
                         "runs_s": times[r.name], "floor": r.floor is not None})
        py = next((row for row in rows if row["runner"] == "Python SDK"), None)
        for row in rows:
            row["speed_vs_python"] = (py["net_s"] / row["net_s"]) if py and not row["floor"] else None
        report["mixes"][mix] = {"stats": stats, "rows": rows}

        c = stats["commands"]
        print(f"## {mix}: {count} commands "
              f"({', '.join(f'{k} {v}' for k, v in sorted(c.items()))}); "
              f"{stats['durable_ops']} change the store, mean written file {stats['mean_write_size']} B\n")
        print("| runner | median total s | runs min-max s | start-up s | net s | per second "
              "| speed vs Python SDK |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for row in rows:
            unit = "writes" if row["floor"] else "commands"
            ratio = f"{row['speed_vs_python']:.2f}x" if row["speed_vs_python"] is not None else ""
            spread = f"{min(row['runs_s']):.2f}-{max(row['runs_s']):.2f}"
            print(f"| {row['runner']} | {fmt_s(row['total_s'])} | {spread} | "
                  f"{fmt_s(row['startup_s'])} | {fmt_s(row['net_s'])} | {row['per_s']:,.0f} {unit} "
                  f"| {ratio} |")
        print()
        sys.stdout.flush()

    report["loadavg_end"] = loadavg()
    print(f"load average (1, 5, 15 min) at end: {report['loadavg_end']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
