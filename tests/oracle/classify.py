#!/usr/bin/env python3
"""Differential check of the `memory` binary against the Python SDK, with every disagreement
assigned to a documented divergence.

    classify.py --memory target/debug/memory [--seed 1] [--count 300] [--jobs 2]
                [--report FILE] [--examples N]

Runs compare.py (beside this file) on generated cases (`--seed S --count N --fixed`) with
CANDIDATE='<memory> exec --store {root}', reads its JSON report, and assigns every disagreement
(is_error or content of a command, or the final tree of a case) to a category of DIVERGENCES.md
by looking at the input and both outputs. A disagreement that fits no category fails the check.

A divergence that changes the store (the reference resolves `/memories/a/../b.md` and writes,
this project refuses) makes later commands on the same path differ too. Those later
disagreements are charged to the category that caused them ("via" in the table) and only when
they touch a path whose state is known to differ.

Exit status: 0 when every disagreement is explained, 1 otherwise, 2 on errors.
Run it with the oracle venv's Python (setup.sh), which compare.py needs too.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = "/memories"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".gif", ".webp")
MUTATING = ("create", "str_replace", "insert", "delete", "rename")


def documented_categories() -> List[str]:
    """The category names of DIVERGENCES.md, in order."""
    with open(os.path.join(HERE, "DIVERGENCES.md"), encoding="utf-8") as f:
        return re.findall(r"^\| `([a-z0-9_-]+)`", f.read(), flags=re.M)


# --------------------------------------------------------------------------
# inputs as SPEC.md reads them
# --------------------------------------------------------------------------

def spec_int(v: Any) -> Optional[int]:
    """An integer as SPEC.md accepts it (int, integral float, "-?digits"), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"-?[0-9]+", v):
        return int(v)
    return None


def lax_int(v: Any) -> Optional[int]:
    """An integer as the reference's pydantic lax mode reads it."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.strip().replace("_", ""))
        except ValueError:
            return None
    return spec_int(v)


CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
PERCENT = re.compile("%(2e|2f|5c)", re.I)


def path_issue(p: Any) -> Optional[str]:
    """The DIVERGENCES.md category of a path SPEC.md refuses but the reference may take."""
    if not isinstance(p, str) or not p.startswith(ROOT):
        return None
    if p != ROOT and not p.startswith(ROOT + "/"):
        return "path-prefix"
    if CONTROL.search(p):
        return "path-control"
    if "\\" in p:
        return "path-backslash"
    if PERCENT.search(p):
        return "path-percent"
    trimmed = p[:-1] if p.endswith("/") else p
    segs = trimmed[len(ROOT) + 1:].split("/") if trimmed != ROOT else []
    if any(s == "" for s in segs):
        return "path-empty-segment"
    if any(s in (".", "..") for s in segs):
        return "path-dots"
    if len(trimmed.encode("utf-8", "surrogatepass")) > 1024 or len(segs) > 20 or \
            any(len(s.encode("utf-8", "surrogatepass")) > 255 for s in segs):
        return "path-limits"
    return None


def normalized(p: str) -> str:
    """The path as SPEC.md echoes it (one trailing / dropped)."""
    return p[:-1] if p.endswith("/") and p != ROOT + "/" and len(p) > 1 else (ROOT if p == ROOT + "/" else p)


def oracle_rel(p: Any) -> Optional[str]:
    """The store-relative path the reference acts on ("" is the root), or None if refused.

    The reference resolves the path below its root folder, which is named `memories`, so
    `/memories/../memories/a` is `a` and `/memories/..` escapes."""
    if not isinstance(p, str) or not p.startswith(ROOT) or "\x00" in p:
        return None
    rel = p[len(ROOT):].lstrip("/")
    full = posixpath.normpath(ROOT + "/" + rel) if rel else ROOT
    if full != ROOT and not full.startswith(ROOT + "/"):
        return None
    return full[len(ROOT) + 1:]


def ours_rel(p: Any) -> Optional[str]:
    """The store-relative path this project acts on, or None if SPEC.md refuses it."""
    if not isinstance(p, str) or (p != ROOT and not p.startswith(ROOT + "/")) or path_issue(p):
        return None
    return normalized(p)[len(ROOT) + 1:]


def input_paths(inp: Dict[str, Any]) -> List[Any]:
    return [inp[k] for k in ("path", "old_path", "new_path") if k in inp]


def field_problem(inp: Dict[str, Any]) -> Optional[str]:
    """Which field SPEC.md refuses as missing or mistyped, if any."""
    cmd = inp.get("command")
    need = {"view": ["path"], "create": ["path", "file_text"], "str_replace": ["path", "old_str"],
            "insert": ["path", "insert_line", "insert_text"], "delete": ["path"],
            "rename": ["old_path", "new_path"]}[cmd]
    for f in need:
        v = inp.get(f)
        if f == "insert_line":
            if spec_int(v) is None:
                return f
        elif not isinstance(v, str):
            return f
    if cmd == "str_replace" and inp.get("new_str") is not None and not isinstance(inp["new_str"], str):
        return "new_str"
    if cmd == "view" and inp.get("view_range") is not None:
        vr = inp["view_range"]
        if not isinstance(vr, list) or len(vr) != 2 or any(spec_int(x) is None for x in vr):
            return "view_range"
    return None


# --------------------------------------------------------------------------
# content normalizers
# --------------------------------------------------------------------------

LISTING_HEAD = "Here're the files and directories up to 2 levels deep in "


def parse_listing(text: str) -> Optional[Tuple[str, List[Tuple[str, str]]]]:
    if not isinstance(text, str) or not text.startswith(LISTING_HEAD):
        return None
    head, _, body = text.partition("\n")
    entries: List[Tuple[str, str]] = []
    for line in body.split("\n") if body else []:
        if "\t" not in line and entries:
            # A name with a newline in it (the reference lists such names; SPEC refuses them).
            size, path = entries.pop()
            entries.append((size, path + "\n" + line))
            continue
        size, _, path = line.partition("\t")
        entries.append((size, path))
    return head, entries


def echo_variants(text: str, inp: Dict[str, Any]) -> str:
    """Replace each raw path of the input by its normalized echo."""
    for p in input_paths(inp):
        if isinstance(p, str) and normalized(p) != p:
            text = text.replace(p, normalized(p))
    return text


# --------------------------------------------------------------------------
# classification of one command
# --------------------------------------------------------------------------

class CaseState:
    """What is known to differ between the two stores of a case.

    `files[side]` is each side's set of files (store-relative), followed from its own results;
    `tainted` maps paths whose state differs to the category that made them differ."""

    def __init__(self) -> None:
        self.tainted: Dict[str, List[str]] = {}
        self.files: Dict[str, Set[str]] = {"o": set(), "c": set()}
        # Paths whose content differs by more than newlines (a mutation one side refused).
        self.strong: Set[Optional[str]] = set()

    def taint(self, rel: Optional[str], cat: str) -> None:
        if rel is not None and cat not in self.tainted.setdefault(rel, []):
            self.tainted[rel].append(cat)

    def touching(self, rels: Iterable[Optional[str]]) -> Optional[str]:
        """The category of a tainted path at, above or below any of `rels`; a category that
        changed which files exist wins over `insert-preserves` (newlines only)."""
        cats: List[str] = []
        for rel in rels:
            if rel is None:
                continue
            for t, tcats in self.tainted.items():
                if rel == "" or t == rel or t.startswith(rel + "/") or rel.startswith(t + "/"):
                    cats += [c for c in tcats if c not in cats]
        strong = [c for c in cats if c != "insert-preserves"]
        return strong[0] if strong else (cats[0] if cats else None)

    def has_files_under(self, side: str, rel: Optional[str]) -> bool:
        if rel is None:
            return False
        return any(rel == "" or f == rel or f.startswith(rel + "/") for f in self.files[side])

    def apply(self, side: str, inp: Dict[str, Any], ok: bool, rel_of) -> None:
        """Follow one side's store through a command and its result."""
        files = self.files[side]
        cmd = inp.get("command")
        if cmd == "create" and (ok or (side == "o" and not isinstance(inp.get("file_text"), str))):
            # The reference leaves an empty file behind for a file_text that is not a string.
            rel = rel_of(inp.get("path"))
            if rel:
                files.add(rel)
        elif cmd == "delete" and ok:
            rel = rel_of(inp.get("path"))
            if rel is not None:
                files.difference_update({f for f in files if rel == "" or f == rel or f.startswith(rel + "/")})
        elif cmd == "rename" and ok:
            src, dst = rel_of(inp.get("old_path")), rel_of(inp.get("new_path"))
            if src is not None and dst is not None:
                moved = {f for f in files if f == src or f.startswith(src + "/")}
                files.difference_update(moved)
                files.update(dst + f[len(src):] for f in moved)
                for t, cats in list(self.tainted.items()):
                    if t == src or t.startswith(src + "/"):
                        for cat in cats:
                            self.taint(dst + t[len(src):], cat)


def oracle_only_empty_dir(state: CaseState, inp: Dict[str, Any], o: Dict[str, Any], c: Dict[str, Any]) -> bool:
    """The path is a directory holding no file in the reference (which keeps empty directories)
    and nothing here: we say it does not exist, or we create where the reference finds it taken."""
    ct = c["content"] if isinstance(c["content"], str) else ""
    ot = o["content"] if isinstance(o["content"], str) else ""
    cmd = inp.get("command")
    if cmd == "create" and o["is_error"] and ot.startswith("File ") and ot.endswith(" already exists"):
        rel = oracle_rel(inp.get("path"))
    elif cmd == "rename" and o["is_error"] and ot.startswith("The destination "):
        rel = oracle_rel(inp.get("new_path"))
    elif "does not exist" in ct and "does not exist" not in ot:
        rel = oracle_rel(inp.get("old_path" if cmd == "rename" else "path"))
    else:
        return False
    return rel is not None and rel != "" and not state.has_files_under("o", rel) and \
        not state.has_files_under("c", rel)


def numbered_text(text: str) -> List[str]:
    """The non-empty lines of a view or snippet, without their numbers."""
    out = []
    for line in text.split("\n")[1:]:
        _, _, body = line.partition("\t")
        if body.strip("\r"):
            out.append(body)
    return out


def explain_content(inp: Dict[str, Any], o: Any, c: Any, oracle_kind: Optional[str],
                    state: CaseState) -> Optional[List[str]]:
    """Categories that turn the oracle's content into ours, for two results with the same is_error."""
    cmd = inp.get("command")
    cats: List[str] = []
    if isinstance(c, str) and (c.startswith("Error: Invalid path ") or c.startswith("Error: Path must start")):
        cat = path_issue_of(inp)
        if cat:
            return [cat]
    if oracle_only_empty_dir(state, inp, {"is_error": True, "content": o}, {"is_error": True, "content": c}):
        return ["implicit-dirs"]
    if cmd == "str_replace" and inp.get("old_str") == "" and isinstance(c, str) and \
            c.startswith("No replacement was performed, old_str ``"):
        return ["empty-old_str"]
    if isinstance(c, list) or isinstance(o, list):
        return ["images"] if any(str(p).endswith(IMAGE_EXTS) for p in input_paths(inp)) else None
    if not isinstance(o, str) or not isinstance(c, str):
        return None
    if oracle_kind == "exception":
        # The reference's Python repr: compare the meaning of our text instead.
        for prefix, cat in (("Error: Unknown command", "bad-input"), ("Error: Missing or invalid field", "bad-input"),
                            ("Error: Invalid tool input", "bad-input"), ("Error: Invalid path", None),
                            ("Error: Cannot create", "file-under-file"), ("Error: Cannot move", "rename-into-itself")):
            if c.startswith(prefix):
                if cat is None:
                    cat = path_issue_of(inp)
                return [cat] if cat else None
        if "NotADirectoryError" in o or "Not a directory" in o:
            return ["missing-below-file"]
        if "File name too long" in o:
            return ["path-limits"]
        if "UnicodeDecodeError" in o and c.endswith("is not a UTF-8 text file"):
            return ["images"] if any(str(p).endswith(IMAGE_EXTS) for p in input_paths(inp)) else None
        if "replace() argument 2" in o:
            return ["new_str-optional"]
        return None

    # Texts that differ by the prefix and the echo only.
    t = o
    if c.startswith("Error: ") and not o.startswith("Error: "):
        t = "Error: " + o
        cats.append("error-prefix")
    if t == c:
        return cats
    t2 = echo_variants(t, inp)
    if t2 == c:
        return cats + ["path-echo"]
    t = t2

    # insert's own texts.
    if cmd == "insert":
        m = re.fullmatch(r"Invalid `insert_line` parameter: (-?\d+)\. It should be within the range \[0, (\d+)\]\.", o)
        if m and c == f"Error: Invalid `insert_line` parameter: {m.group(1)}. It should be within the range of lines of the file: [0, {m.group(2)}]":
            return ["insert-texts"]
        if o.endswith(" does not exist. Please provide a valid path.") and \
                echo_variants("Error: " + o[: -len(". Please provide a valid path.")], inp) == c:
            return ["insert-texts"]
        if o.endswith(" is not a file.") and c.startswith("Error: The path ") and "does not exist" in c:
            return ["str_replace-directory"]
    if cmd == "str_replace":
        if o.endswith(" is not a file.") and c.endswith("does not exist. Please provide a valid path."):
            return ["str_replace-directory"]
        if o.startswith("No replacement was performed. Multiple occurrences") and \
                c.startswith("No replacement was performed. Multiple occurrences"):
            return ["occurrence-lines"]
        snippet = "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        if o.startswith(snippet) and c.startswith(snippet):
            ol, cl = o[len(snippet):].split("\n"), c[len(snippet):].split("\n")
            if cl[: len(ol)] == ol:
                return ["str_replace-snippet"]
            return None
    if cmd == "rename" and o.startswith("The destination ") and c.startswith("Error: The path "):
        return ["rename-source-first"]
    if cmd == "rename" and c.startswith("Error: Cannot move ") and c.endswith(" into itself"):
        return ["rename-into-itself"]
    if cmd == "view":
        lo, lc = parse_listing(o), parse_listing(c)
        if lo and lc:
            return explain_listing(inp, lo, lc, state)
        if c.startswith("Error: Invalid `view_range` parameter"):
            return ["view_range-errors"]
        head = "with line numbers:\n"
        if "\n[Output truncated: showed lines " in c and echo_variants(o, inp).startswith(c.split(head)[0]):
            return ["truncation"] + (["path-echo"] if echo_variants(o, inp) != o else [])
    return None


def path_issue_of(inp: Dict[str, Any]) -> Optional[str]:
    for p in input_paths(inp):
        cat = path_issue(p)
        if cat:
            return cat
    return None


def explain_listing(inp: Dict[str, Any], lo: Tuple[str, List[Tuple[str, str]]],
                    lc: Tuple[str, List[Tuple[str, str]]], state: CaseState) -> Optional[List[str]]:
    cats = []
    (ho, eo), (hc, ec) = lo, lc
    if ho != hc:
        cats.append("listing-header")
        if echo_variants(ho, inp).replace("excluding hidden items:", "excluding hidden items and node_modules:") != hc:
            return None
        if echo_variants(ho, inp) != ho:
            cats.append("path-echo")
    # The reference echoes the raw path in every entry; compare on normalized entries.
    raw = inp.get("path", "")
    norm = normalized(raw) if isinstance(raw, str) else raw

    def renorm(p: str) -> str:
        return norm + p[len(raw):] if isinstance(raw, str) and p.startswith(raw) else p

    eo = [(s, renorm(p)) for s, p in eo]
    o_nm = [(s, p) for s, p in eo if "/node_modules" not in p[len(norm):]]
    if len(o_nm) != len(eo):
        cats.append("listing-node_modules")
    o_files = [(s, p) for s, p in o_nm[1:] if not p.endswith("/")]
    c_files = [(s, p) for s, p in ec[1:] if not p.endswith("/")]
    o_dirs = [p for s, p in o_nm[1:] if p.endswith("/")]
    c_dirs = [p for s, p in ec[1:] if p.endswith("/")]
    if o_files != c_files:
        # Entries whose state is known to differ (an earlier divergence) may differ.
        differing = set(o_files) ^ set(c_files)
        vias = {state.touching([ours_rel(p) or oracle_rel(p)]) for _, p in differing}
        if None in vias:
            return None
        cats += sorted(v for v in vias if v)
        o_files = [(s, p) for s, p in o_files if (s, p) not in differing]
        c_files = [(s, p) for s, p in c_files if (s, p) not in differing]
        if [p for _, p in o_files] != [p for _, p in c_files]:
            return None
    if [s for s, _ in o_nm if _.endswith("/")] != [s for s, _ in ec if _.endswith("/")] or o_nm[0][0] != ec[0][0]:
        cats.append("listing-dir-sizes")
    if o_dirs != c_dirs:
        # Only empty directories of the reference may be missing here.
        for d in set(c_dirs) - set(o_dirs):
            if not state.touching([ours_rel(d.rstrip("/"))]):
                return None
        for d in set(o_dirs) - set(c_dirs):
            rel = oracle_rel(d.rstrip("/"))
            via = state.touching([rel])
            if via:
                cats.append(via)
            elif state.has_files_under("o", rel):
                return None
            else:
                cats.append("implicit-dirs")
    return list(dict.fromkeys(cats))


def explain_is_error(inp: Dict[str, Any], o: Dict[str, Any], c: Dict[str, Any],
                     oracle_kind: Optional[str], state: CaseState) -> Optional[str]:
    """The category of a command the two sides disagree on failing."""
    cmd = inp.get("command")
    if oracle_only_empty_dir(state, inp, o, c):
        return "implicit-dirs"
    ct = c["content"] if isinstance(c["content"], str) else ""
    if c["is_error"]:
        # We refused what the reference did.
        cat = path_issue_of(inp)
        if cat and (ct.startswith("Error: Invalid path") or ct.startswith("Error: Path must start")):
            return cat
        if ct.startswith("Error: Missing or invalid field"):
            field = re.search(r"field `([a-z_]+)`", ct)
            v = inp.get(field.group(1)) if field else None
            if field and field.group(1) in ("insert_line", "view_range"):
                vals = v if isinstance(v, list) else [v]
                if any(isinstance(x, str) and lax_int(x) is not None for x in vals):
                    return "int-string-forms"
                return "input-typing"
            return None
        if ct.startswith("Error: Invalid `view_range` parameter"):
            return "view_range-errors"
        if "over the limit of" in ct or "memory store is full" in ct:
            return "limits"
        if cmd == "str_replace" and inp.get("old_str") == "":
            return "empty-old_str"
        if ct.startswith("Error: Cannot create") and "is a file" in ct:
            return "file-under-file"
        if ct.startswith("Error: Cannot move") and "into itself" in ct:
            return "rename-into-itself"
        if ct.startswith("Error: Invalid input line: not JSON"):
            return "lone-surrogate"
        return None
    # The reference failed where we did not.
    if cmd == "str_replace" and inp.get("new_str") is None:
        return "new_str-optional"
    if any(str(p).endswith(IMAGE_EXTS) for p in input_paths(inp)) and isinstance(c["content"], list):
        return "images"
    if oracle_kind == "exception" and cmd == "view" and "view_range" in inp:
        return "input-typing"
    if oracle_kind == "exception" and cmd == "insert" and spec_int(inp.get("insert_line")) is not None:
        return "input-typing"
    if oracle_kind == "exception" and "File name too long" in str(o["content"]):
        return "path-limits"
    if cmd == "str_replace" and inp.get("old_str") == "":
        return "empty-old_str"
    return None


def affected(inp: Dict[str, Any]) -> List[Optional[str]]:
    """Store-relative paths a command may change or read, on either side."""
    out: List[Optional[str]] = []
    for p in input_paths(inp):
        out += [oracle_rel(p), ours_rel(p)]
    return out


# The platform the candidate runs on (--platform): on Windows a folder store cannot hold every
# name SPEC.md allows, so the windows-* categories of DIVERGENCES.md apply there only.
PLATFORM = "linux"
WINDOWS_RESERVED = re.compile(r"(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|COM[1-9¹²³]|LPT[1-9¹²³])", re.I)
# Host paths past Windows' classic 260-character limit fail under wine; the case's root folder
# takes up about a hundred of them.
WINDOWS_LONG_REL = 150


def windows_name_problem(seg: str) -> bool:
    """Whether Windows cannot hold a file or folder of this name (memory-fs's rule)."""
    stem = seg.split(".")[0].rstrip(" ")
    return seg.endswith((" ", ".")) or any(ch in seg for ch in '<>:"|?*') or \
        WINDOWS_RESERVED.fullmatch(stem) is not None


def first_windows_issue(case: Dict[str, Any]) -> Optional[Tuple[int, str]]:
    """(index of the first command, category) where a Windows folder store parts from SPEC.md."""
    seen: Dict[str, str] = {}
    for i, cmd in enumerate(case["commands"]):
        try:
            inp = json.loads(cmd["input"])
        except Exception:
            continue
        if not isinstance(inp, dict):
            continue
        for p in input_paths(inp):
            rel = ours_rel(p)
            if not rel:
                continue
            if any(windows_name_problem(seg) for seg in rel.split("/")):
                return i, "windows-names"
            if len(rel.encode("utf-8")) > WINDOWS_LONG_REL:
                return i, "windows-long-paths"
            parts = rel.split("/")
            for n in range(1, len(parts) + 1):
                prefix = "/".join(parts[:n])
                if seen.setdefault(prefix.casefold(), prefix) != prefix:
                    return i, "windows-case"
    return None


def classify_case(case: Dict[str, Any]) -> Tuple[List[Tuple[str, str, Dict[str, Any]]], List[Dict[str, Any]]]:
    """([(category, kind, detail)], [unexplained detail]). On Windows, every disagreement from
    the first command a Windows folder store cannot follow SPEC.md in is that windows-*
    category; the commands before it are classified as everywhere."""
    issue = first_windows_issue(case) if PLATFORM == "windows" else None
    if issue is None:
        return classify_commands(case)
    first, cat = issue
    found, unexplained = classify_commands(dict(case, commands=case["commands"][:first], agree_tree=True))
    for cmd in case["commands"][first:]:
        if not (cmd["agree_is_error"] and cmd["agree_content"]):
            found.append((cat, "windows", {"case": case["case"], "line": cmd["line"], "input": cmd["input"]}))
    if not case["agree_tree"]:
        found.append((cat, "tree", {"case": case["case"]}))
    return found, unexplained


def classify_commands(case: Dict[str, Any]) -> Tuple[List[Tuple[str, str, Dict[str, Any]]], List[Dict[str, Any]]]:
    """classify_case on every platform: each command against the state before it, then the tree."""
    state = CaseState()
    found: List[Tuple[str, str, Dict[str, Any]]] = []
    unexplained: List[Dict[str, Any]] = []
    for cmd in case["commands"]:
        inp = classify_command(case, cmd, state, found, unexplained)
        if isinstance(inp, dict) and inp.get("command") in COMMANDS and cmd["candidate"] is not None:
            state.apply("o", inp, not cmd["oracle"]["is_error"], oracle_rel)
            state.apply("c", inp, not cmd["candidate"]["is_error"], ours_rel)
    if not case["agree_tree"]:
        explain_tree(case, state, found, unexplained)
    return found, unexplained


def classify_command(case: Dict[str, Any], cmd: Dict[str, Any], state: CaseState,
                     found: List[Tuple[str, str, Dict[str, Any]]], unexplained: List[Dict[str, Any]]) -> Any:
    """Classifies one command's disagreement (if any) against the state before it; returns its input."""
    o, c = cmd["oracle"], cmd["candidate"]
    if c is None:
        unexplained.append({"case": case["case"], "line": cmd["line"], "why": cmd["candidate_problem"],
                            "input": cmd["input"]})
        return None
    try:
        inp = json.loads(cmd["input"])
    except Exception:
        inp = None
    detail = {"case": case["case"], "line": cmd["line"], "input": cmd["input"], "oracle": o, "candidate": c}
    if cmd["agree_is_error"] and cmd["agree_content"]:
        if isinstance(inp, dict) and inp.get("command") == "insert" and not c["is_error"]:
            # Both inserted, but the reference rejoins the lines: the files may now differ
            # in newlines (insert-preserves).
            state.taint(ours_rel(inp.get("path")), "insert-preserves")
        return inp
    if not isinstance(inp, dict):
        if cmd["category"] == "invalid_json":
            cat = "nonjson-wording" if cmd["agree_is_error"] else "lone-surrogate"
            found.append((cat, "content" if cmd["agree_is_error"] else "is_error", detail))
        elif cmd["oracle_kind"] == "exception" and cmd["agree_is_error"]:
            found.append(("bad-input", "content", detail))
        else:
            unexplained.append(dict(detail, why="not an object"))
        return inp
    if inp.get("command") not in COMMANDS or field_problem(inp):
        cat = "bad-input" if cmd["agree_is_error"] else explain_is_error(inp, o, c, cmd["oracle_kind"], state)
        if cat is None:
            unexplained.append(dict(detail, why="is_error"))
            return inp
        found.append((cat, "content" if cmd["agree_is_error"] else "is_error", detail))
        if inp.get("command") == "create" and not isinstance(inp.get("file_text"), str):
            state.taint(oracle_rel(inp.get("path")), "no-partial-write")
        elif inp.get("command") in MUTATING and not o["is_error"]:
            for rel in affected(inp):
                state.taint(rel, cat)
        return inp
    via = state.touching(affected(inp))
    if not cmd["agree_is_error"]:
        cat = explain_is_error(inp, o, c, cmd["oracle_kind"], state)
        if cat is None and via:
            found.append((via, "is_error (via state)", detail))
            cat = via
        elif cat is None:
            unexplained.append(dict(detail, why="is_error"))
            return inp
        else:
            found.append((cat, "is_error", detail))
        if inp.get("command") in MUTATING:
            for rel in affected(inp):
                state.taint(rel, cat)
                state.strong.add(rel)
        return inp
    cats = explain_content(inp, o["content"], c["content"], cmd["oracle_kind"], state)
    strong = any(rel in state.strong for rel in affected(inp))
    o_echo = echo_variants(o["content"], inp) if isinstance(o["content"], str) else o["content"]
    if cats is None and via and (strong or content_follows(via, o_echo, c["content"])):
        found.append((via, "content (via state)", detail))
        return inp
    if cats is None:
        unexplained.append(dict(detail, why="content"))
        return inp
    for cat in cats or ["error-prefix"]:
        found.append((cat, "content", detail))
    if inp.get("command") == "insert" and not c["is_error"]:
        state.taint(ours_rel(inp.get("path")), "insert-preserves")
    return inp


def content_follows(via: str, o: Any, c: Any) -> bool:
    """Whether a content difference on a path known to differ fits what made it differ."""
    if via != "insert-preserves":
        return True
    # Only newlines differ: the same non-empty lines (numbers aside), or the same listing files.
    if not isinstance(o, str) or not isinstance(c, str):
        return False
    if o.split("\n", 1)[0] == c.split("\n", 1)[0] or o.startswith(LISTING_HEAD):
        if o.startswith(LISTING_HEAD):
            return [p for _, p in parse_listing(o)[1]] == [p for _, p in parse_listing(c)[1]]
        return numbered_text(o) == numbered_text(c) or \
            [x.rstrip("\r") for x in numbered_text(o)] == [x.rstrip("\r") for x in numbered_text(c)]
    mo = re.fullmatch(r"Invalid `insert_line` parameter: (-?\d+)\. It should be within the range \[0, \d+\]\.", o)
    mc = re.fullmatch(r"Error: Invalid `insert_line` parameter: (-?\d+)\. It should be within the range of lines "
                      r"of the file: \[0, \d+\]", c)
    if mo and mc:
        return mo.group(1) == mc.group(1)  # the line counts differ with the newlines
    return o.startswith("No replacement was performed") or c.startswith("No replacement was performed")


def explain_tree(case: Dict[str, Any], state: CaseState, found: List[Tuple[str, str, Dict[str, Any]]],
                 unexplained: List[Dict[str, Any]]) -> None:
    diff = case.get("tree_diff") or {}
    for key in diff.get("only_oracle", []):
        rel = key.rstrip("/")
        via = state.touching([rel])
        if key.endswith("/") and via is None:
            via = "implicit-dirs"
        record_tree(case, key, via, "only in the reference", found, unexplained)
    for key in diff.get("only_candidate", []):
        record_tree(case, key, state.touching([key.rstrip("/")]), "only here", found, unexplained)
    for key, both in diff.get("content_differs", {}).items():
        via = state.touching([key])
        if via == "insert-preserves" and key not in state.strong and not preserves_insert(both):
            via = None
        record_tree(case, key, via, "content differs", found, unexplained, both)


def preserves_insert(both: Dict[str, str]) -> bool:
    """The reference's rejoin differs from ours only in final and blank-line newlines."""
    o, c = both.get("oracle"), both.get("candidate")
    if not isinstance(o, str) or not isinstance(c, str) or "...(+" in o or "...(+" in c:
        return isinstance(o, str) and isinstance(c, str)
    return o.replace("\n", "") == c.replace("\n", "")


def record_tree(case, key, via, what, found, unexplained, both=None) -> None:
    detail = {"case": case["case"], "tree_entry": key, "what": what}
    if both:
        detail["oracle"], detail["candidate"] = both.get("oracle"), both.get("candidate")
    if via:
        found.append((via, "tree", detail))
    else:
        unexplained.append(dict(detail, why="tree"))


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", help="the memory binary (CANDIDATE becomes '<memory> exec --store {root}')")
    ap.add_argument("--candidate", help="a full candidate template instead of --memory")
    ap.add_argument("--platform", choices=("linux", "windows"), default="linux",
                    help="what the candidate runs on: windows admits the windows-* categories")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    ap.add_argument("--report", help="use this compare.py report instead of running compare.py (or keep it here)")
    ap.add_argument("--rerun", action="store_true", help="with --report: run compare.py and write the report there")
    ap.add_argument("--examples", type=int, default=3, help="examples printed per unexplained kind")
    ap.add_argument("--unexplained-out", help="write every unexplained disagreement here, as JSON Lines")
    ap.add_argument("--oracle-python", default=os.environ.get("ORACLE_PY", sys.executable))
    args = ap.parse_args(argv)
    global PLATFORM
    PLATFORM = args.platform
    sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[attr-defined]

    documented = documented_categories()
    if not documented:
        print("no categories found in DIVERGENCES.md", file=sys.stderr)
        return 2

    report_path = args.report
    report_dir = None  # a report folder of our own, removed when the run passes
    if not report_path or args.rerun or not os.path.exists(report_path):
        if args.candidate:
            candidate = args.candidate
        elif args.memory:
            candidate = f"{shlex.quote(os.path.abspath(args.memory))} exec --store {{root}}"
        else:
            ap.error("--memory or --candidate is required")
        if not report_path:
            # Under the repository's target/tmp, not the system's temporary folder; removed at
            # the end of a run that passes, kept (and named) when it fails.
            scratch = os.path.join(HERE, "..", "..", "target", "tmp")
            os.makedirs(scratch, exist_ok=True)
            report_dir = os.path.abspath(tempfile.mkdtemp(prefix="classify-", dir=scratch))
            report_path = os.path.join(report_dir, "report.json")
        os.makedirs(os.path.dirname(os.path.abspath(report_path)), exist_ok=True)
        cmd = [args.oracle_python, os.path.join(HERE, "compare.py"), "--candidate", candidate,
               "--oracle-python", args.oracle_python, "--seed", str(args.seed), "--count", str(args.count),
               "--fixed", "--jobs", str(args.jobs), "--report", report_path, "--show", "0"]
        print("running:", " ".join(shlex.quote(x) for x in cmd), flush=True)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tail = p.stdout.strip().splitlines()[-3:]
        print("\n".join(tail))
        if p.returncode not in (0, 1) or not os.path.exists(report_path):
            sys.stderr.write(p.stdout[-4000:] + p.stderr[-4000:])
            print(f"compare.py failed (exit {p.returncode})", file=sys.stderr)
            return 2

    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)

    counts: Counter = Counter()
    examples: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    unexplained: List[Dict[str, Any]] = []
    bad_exit = []
    for case in report["cases"]:
        if case["rc"] != 0 or case["timed_out"] or case["extra_output_lines"]:
            bad_exit.append(case)
        found, unexp = classify_case(case)
        for cat, kind, detail in found:
            counts[(cat, kind)] += 1
            if len(examples[cat]) < 2:
                examples[cat].append(detail)
        unexplained += unexp

    unknown = sorted({cat for cat, _ in counts} - set(documented))
    s = report["summary"]
    print(f"\ncases={s['cases']} commands={s['commands']} agree_is_error={s['agree_is_error']} "
          f"agree_content={s['agree_content']} agree_tree={s['agree_tree']}")
    print("\nExcluded (documented in DIVERGENCES.md): " + ", ".join(documented))
    print(f"\n{'category':<24} {'disagreements':>13}  kinds")
    per_cat: Dict[str, Counter] = defaultdict(Counter)
    for (cat, kind), n in counts.items():
        per_cat[cat][kind] += n
    for cat in sorted(per_cat, key=lambda c: (documented.index(c) if c in documented else 999, c)):
        kinds = ", ".join(f"{k}={n}" for k, n in sorted(per_cat[cat].items()))
        print(f"{cat:<24} {sum(per_cat[cat].values()):>13}  {kinds}")
    unused = [c for c in documented if c not in per_cat]
    if unused:
        print(f"(not seen in this run: {', '.join(unused)})")

    failed = False
    if unknown:
        failed = True
        print(f"\nBUG in classify.py: categories not in DIVERGENCES.md: {unknown}")
    if bad_exit:
        failed = True
        for case in bad_exit[: args.examples]:
            print(f"\ncase {case['case']}: exit={case['rc']} timed_out={case['timed_out']} "
                  f"extra_lines={case['extra_output_lines']} stderr={case['stderr_tail'][-500:]}")
    if args.unexplained_out:
        with open(args.unexplained_out, "w", encoding="utf-8") as f:
            for u in unexplained:
                f.write(json.dumps(u, ensure_ascii=False) + "\n")
    if unexplained:
        failed = True
        by_why: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
        for u in unexplained:
            by_why[u["why"]].append(u)
        print(f"\nUNEXPLAINED disagreements: {len(unexplained)} "
              f"({', '.join(f'{w}={len(v)}' for w, v in sorted(by_why.items()))})")
        for why, items in sorted(by_why.items()):
            for u in items[: args.examples]:
                print(json.dumps(u, ensure_ascii=False)[:1500])
    removed = bool(report_dir) and not failed
    print(f"\n{'FAIL' if failed else 'ok'}: {sum(counts.values())} disagreements, all but "
          f"{len(unexplained)} in documented categories; "
          + ("the report is removed (pass --report FILE to keep it)" if removed else f"report: {report_path}"))
    bad_cases = {u["case"] for u in unexplained} | {c["case"] for c in bad_exit}
    print(f"oracle: {len(report['cases']) - len(bad_cases)} passed, {len(bad_cases)} failed")
    if removed:
        shutil.rmtree(report_dir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
