#!/usr/bin/env python3
"""Judge one run of an SDK's memory-tool suite against its list of expected failures.

    check_results.py --suite python --results junit.xml --expected expected-python.tsv
    check_results.py --suite typescript --results jest.json --expected expected-typescript.tsv

`--results` is pytest's JUnit XML (`--junitxml`) or jest's JSON report (`--json --outputFile`).
Each line of `--expected` is `TEST-ID<TAB>CATEGORIES<TAB>NOTE`: a test that must fail, and why.
CATEGORIES is a comma-separated list; each is a category of tests/oracle/DIVERGENCES.md
(written there as `name`), or `adapter:REASON` for a test that inspects the SDK's internals
(it cannot pass against any other implementation). Prints a table of every test, then
`N passed, N failed` (failed = not as expected); exits 1 when:

- a test failed that the list does not name (a bug, or a divergence nobody listed);
- a listed test passed (the list is stale: the divergence is gone or was never there);
- a listed category is not in DIVERGENCES.md (the difference is real but not agreed);
- a listed test was not run at all (the SDK renamed it: re-read the suite).
"""

from __future__ import annotations

import re
import sys
import json
import argparse
import xml.etree.ElementTree as ET
from typing import Dict, List, Tuple
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DIVERGENCES = HERE.parent / "oracle" / "DIVERGENCES.md"


def pytest_outcomes(path: Path) -> Dict[str, Tuple[str, str]]:
    """test id (`Class::test`) -> (outcome, first line of the failure message)."""
    out: Dict[str, Tuple[str, str]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        tid = f"{cls}::{case.get('name')}"
        outcome, msg = "passed", ""
        for tag in ("failure", "error"):
            el = case.find(tag)
            if el is not None:
                outcome, msg = "failed", (el.get("message") or "").splitlines()[0:1]
                msg = msg[0] if msg else ""
        if case.find("skipped") is not None:
            outcome = "skipped"
        out[tid] = (outcome, msg)
    return out


def jest_outcomes(path: Path) -> Dict[str, Tuple[str, str]]:
    """test id (`describe › ... › it`) -> (outcome, first line of the failure message)."""
    out: Dict[str, Tuple[str, str]] = {}
    report = json.loads(path.read_text(encoding="utf-8"))
    for suite in report.get("testResults", []):
        for a in suite.get("assertionResults", []):
            tid = " › ".join([*a.get("ancestorTitles", []), a.get("title", "")])
            status = a.get("status")
            outcome = {"passed": "passed", "failed": "failed"}.get(status, "skipped")
            msgs = a.get("failureMessages") or [""]
            first = next((l.strip() for l in msgs[0].splitlines() if l.strip()), "")
            out[tid] = (outcome, re.sub(r"\x1b\[[0-9;]*m", "", first))
        if suite.get("status") == "failed" and not suite.get("assertionResults"):
            out[f"<suite {suite.get('name')}>"] = ("failed", suite.get("message", "")[:200])
    return out


def read_expected(path: Path) -> Dict[str, Tuple[List[str], str]]:
    expected: Dict[str, Tuple[List[str], str]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 2:
            sys.exit(f"{path}:{n}: want TEST-ID<TAB>CATEGORIES[<TAB>NOTE]")
        expected[parts[0]] = ([c.strip() for c in parts[1].split(",") if c.strip()], parts[2] if len(parts) > 2 else "")
    return expected


def divergence_categories(path: Path) -> set:
    text = path.read_text(encoding="utf-8")
    return set(re.findall(r"^\| `([a-z0-9_-]+)`", text, flags=re.M))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=["python", "typescript"], required=True)
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--expected", type=Path, required=True)
    ap.add_argument("--divergences", type=Path, default=DEFAULT_DIVERGENCES)
    args = ap.parse_args()

    outcomes = pytest_outcomes(args.results) if args.suite == "python" else jest_outcomes(args.results)
    expected = read_expected(args.expected)
    known = divergence_categories(args.divergences)

    problems: List[str] = []
    rows: List[Tuple[str, str, str, str]] = []
    for tid, (outcome, msg) in sorted(outcomes.items()):
        cats, _note = expected.get(tid, ([], ""))
        if outcome == "failed" and not cats:
            verdict = "UNEXPECTED FAILURE"
            problems.append(f"{tid}: failed, not listed as expected: {msg}")
        elif outcome == "passed" and cats:
            verdict = "STALE (listed, but passed)"
            problems.append(f"{tid}: listed as failing ({', '.join(cats)}) but passed")
        elif outcome == "failed":
            missing = [c for c in cats if not c.startswith("adapter:") and c not in known]
            if missing:
                verdict = "NOT IN DIVERGENCES.md: " + ", ".join(missing)
                problems.append(f"{tid}: expected by {', '.join(missing)}, which DIVERGENCES.md does not list")
            else:
                verdict = "expected"
        else:
            verdict = outcome
        rows.append((tid, outcome, ",".join(cats), verdict))
    for tid in sorted(set(expected) - set(outcomes)):
        problems.append(f"{tid}: listed but not run (renamed or removed in the SDK?)")

    width = max((len(r[0]) for r in rows), default=10)
    for tid, outcome, cats, verdict in rows:
        print(f"{tid:<{width}}  {outcome:<7}  {cats or '-':<32}  {verdict}")
    n_fail = sum(1 for r in rows if r[1] == "failed")
    n_pass = sum(1 for r in rows if r[1] == "passed")
    print(f"\nsuite: {n_pass} tests passed, {n_fail} failed, all failures expected: {'yes' if not problems else 'no'}")
    for p in problems:
        print(f"PROBLEM: {p}")
    ok = sum(1 for r in rows if r[3] in ("expected", "passed", "skipped"))
    print(f"check: {ok} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
