#!/usr/bin/env python3
"""Judge two runs of an SDK's memory-tool suite against its list of expected failures.

    check_results.py --suite python --results strict.xml --hidden-results hidden.xml --expected expected-python.tsv
    check_results.py --suite typescript --results strict.json --hidden-results hidden.json --expected expected-typescript.tsv

`--results` is the reported run; `--hidden-results` the diagnostic run in which the tests'
directory snapshots leave out the folder store's bookkeeping files (SDK_SUITES_HIDE_STORE_FILES=1).
Both are pytest's JUnit XML (`--junitxml`) or jest's JSON report (`--json --outputFile`).

Each line of `--expected` is `TEST-ID<TAB>CATEGORIES<TAB>REGEX<TAB>NOTE`: a test that must fail,
why, and what its failure text must show. CATEGORIES is a comma-separated list; each is a
category of tests/oracle/DIVERGENCES.md (written there as `name`), or `adapter:REASON` for a test
that reads the SDK's internals (it cannot pass against any other implementation). REGEX is `-`
only for a test listed for `store-files` alone.
`store-files` is the bookkeeping category: in the reported run such a failure must show
`.memories.count` or `.memories.lock` (or REGEX), and in the diagnostic run the test is expected
to fail only for its other categories. Every other expected failure must match REGEX (Python
`re.search`, on the whole failure text) in both runs, so a test listed for one reason that fails
for another is caught. Prints a table, then `N passed, N failed` (failed = not as expected);
exits 1 when:

- a test failed that the list does not name, or failed without its listed reason's text;
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


STORE_FILES = "store-files"
STORE_FILES_TEXT = re.compile(r"\.memories\.(count|lock)")


def pytest_outcomes(path: Path) -> Dict[str, Tuple[str, str]]:
    """test id (`Class::test`) -> (outcome, the whole failure text)."""
    out: Dict[str, Tuple[str, str]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        tid = f"{cls}::{case.get('name')}"
        outcome, text = "passed", ""
        for tag in ("failure", "error"):
            el = case.find(tag)
            if el is not None:
                outcome, text = "failed", f"{el.get('message') or ''}\n{el.text or ''}"
        if case.find("skipped") is not None:
            outcome = "skipped"
        out[tid] = (outcome, text)
    return out


def jest_outcomes(path: Path) -> Dict[str, Tuple[str, str]]:
    """test id (`describe › ... › it`) -> (outcome, the whole failure text)."""
    out: Dict[str, Tuple[str, str]] = {}
    report = json.loads(path.read_text(encoding="utf-8"))
    for suite in report.get("testResults", []):
        for a in suite.get("assertionResults", []):
            tid = " › ".join([*a.get("ancestorTitles", []), a.get("title", "")])
            outcome = {"passed": "passed", "failed": "failed"}.get(a.get("status"), "skipped")
            text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(a.get("failureMessages") or []))
            out[tid] = (outcome, text)
        if suite.get("status") == "failed" and not suite.get("assertionResults"):
            out[f"<suite {suite.get('name')}>"] = ("failed", suite.get("message", ""))
    return out


class Expected:
    """One line of the expected-failures list."""

    def __init__(self, categories: List[str], regex: str, note: str) -> None:
        self.categories = categories
        self.regex = None if regex in ("", "-") else re.compile(regex)
        self.note = note


def read_expected(path: Path) -> Dict[str, Expected]:
    expected: Dict[str, Expected] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 3:
            sys.exit(f"{path}:{n}: want TEST-ID<TAB>CATEGORIES<TAB>REGEX[<TAB>NOTE]")
        cats = [c.strip() for c in parts[1].split(",") if c.strip()]
        exp = Expected(cats, parts[2], parts[3] if len(parts) > 3 else "")
        if exp.regex is None and [c for c in cats if c != STORE_FILES]:
            sys.exit(f"{path}:{n}: a failure for {parts[1]} needs a REGEX its failure text must match")
        expected[parts[0]] = exp
    return expected


def divergence_categories(path: Path) -> set:
    text = path.read_text(encoding="utf-8")
    return set(re.findall(r"^\| `([a-z0-9_-]+)`", text, flags=re.M))


def judge(
    outcomes: Dict[str, Tuple[str, str]], expected: Dict[str, Expected], known: set, hidden: bool
) -> Tuple[List[Tuple[str, str, str, str]], List[str]]:
    """One row per test and the problems of one run; `hidden` = the diagnostic run."""
    label = "diagnostic run" if hidden else "reported run"
    rows: List[Tuple[str, str, str, str]] = []
    problems: List[str] = []
    for tid, (outcome, text) in sorted(outcomes.items()):
        exp = expected.get(tid)
        cats = list(exp.categories) if exp else []
        if hidden:
            cats = [c for c in cats if c != STORE_FILES]
        first = next((l.strip() for l in text.splitlines() if l.strip()), "")
        if outcome == "failed" and not cats:
            verdict = "UNEXPECTED FAILURE"
            problems.append(f"{label}: {tid}: failed, not listed as expected: {first}")
        elif outcome == "passed" and cats:
            verdict = "STALE (listed, but passed)"
            problems.append(f"{label}: {tid}: listed as failing ({', '.join(cats)}) but passed")
        elif outcome == "failed":
            assert exp is not None
            if exp.regex is not None and exp.regex.search(text):
                reason_ok = True
            else:
                # The reported run: a bookkeeping failure shows the bookkeeping files.
                reason_ok = STORE_FILES in cats and not hidden and bool(STORE_FILES_TEXT.search(text))
            missing = [c for c in cats if not c.startswith("adapter:") and c not in known]
            if not reason_ok:
                verdict = "FAILED FOR ANOTHER REASON"
                problems.append(f"{label}: {tid}: failed, but not as listed ({', '.join(cats)}): {first}")
            elif missing:
                verdict = "NOT IN DIVERGENCES.md: " + ", ".join(missing)
                problems.append(f"{label}: {tid}: expected by {', '.join(missing)}, which DIVERGENCES.md does not list")
            else:
                verdict = "expected"
        else:
            verdict = outcome
        rows.append((tid, outcome, ",".join(cats), verdict))
    for tid in sorted(set(expected) - set(outcomes)):
        problems.append(f"{label}: {tid}: listed but not run (renamed or removed in the SDK?)")
    return rows, problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=["python", "typescript"], required=True)
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--hidden-results", type=Path, required=True)
    ap.add_argument("--expected", type=Path, required=True)
    ap.add_argument("--divergences", type=Path, default=DEFAULT_DIVERGENCES)
    args = ap.parse_args()

    read = pytest_outcomes if args.suite == "python" else jest_outcomes
    expected = read_expected(args.expected)
    known = divergence_categories(args.divergences)
    rows, problems = judge(read(args.results), expected, known, hidden=False)
    hidden_rows, hidden_problems = judge(read(args.hidden_results), expected, known, hidden=True)

    width = max((len(r[0]) for r in rows), default=10)
    hidden_by_id = {r[0]: r for r in hidden_rows}
    print(f"{'test':<{width}}  {'outcome':<7}  {'categories':<32}  verdict  [diagnostic run: outcome, verdict]")
    for tid, outcome, cats, verdict in rows:
        h = hidden_by_id.get(tid, (tid, "-", "", "-"))
        print(f"{tid:<{width}}  {outcome:<7}  {cats or '-':<32}  {verdict}  [{h[1]}, {h[3]}]")
    n_fail = sum(1 for r in rows if r[1] == "failed")
    n_pass = sum(1 for r in rows if r[1] == "passed")
    h_fail = sum(1 for r in hidden_rows if r[1] == "failed")
    all_problems = problems + hidden_problems
    print(
        f"\nsuite: {n_pass} tests passed, {n_fail} failed ({h_fail} failed with the bookkeeping files hidden); "
        f"all failures expected: {'yes' if not all_problems else 'no'}"
    )
    for p in all_problems:
        print(f"PROBLEM: {p}")
    bad = {p.split(": ", 2)[1] for p in all_problems}
    ok = sum(1 for r in rows if r[0] not in bad)
    print(f"check: {ok} passed, {len(rows) - ok + len(set(expected) - {r[0] for r in rows})} failed")
    return 1 if all_problems else 0


if __name__ == "__main__":
    sys.exit(main())
