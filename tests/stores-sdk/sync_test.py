#!/usr/bin/env python3
"""`memory sync DIR STORE` end to end, against `memory serve`, checked with the official Python SDK.

    python3 tests/stores-sdk/sync_test.py --memory target/debug/memory

Runs in the oracle's venv (tests/oracle/setup.sh makes it when missing; ORACLE_VENV picks
where). Starts `memory serve` on a loopback port with a fresh SQLite database and an API key
file, then syncs folders with `memory sync DIR store+http://HOST:PORT#STORE --json` (the API
key in MEMORY_STORE_API_KEY, a --state-dir of its own per folder) and looks at the store
through client.beta.memory_stores:

- two folders A and B on one store: a create on A reaches B, an edit on B reaches A;
- both edit one file: the store's version on both, the losing text kept beside it as
  `PATH.conflict-YYYYMMDDTHHMMSSZ` (UTC), uploaded by the next pass and pulled by the other side;
- a file deleted on A stays on the store until it has been missing for --delete-after (2s here;
  the default, 30s, is not over after 2s), `--deletions log-only` and `disabled` send nothing,
  then B loses it too;
- a file deleted on A but edited on the store comes back with the store's text; the only file
  of a folder deleted is a delete, not a wipe;
- a memory deleted on the store (the SDK's memories.delete) goes from A, unless A edited it:
  then it is created again from A's file;
- a wiped A (the folder gone; every file gone; every file and the marker gone) is downloaded
  again and deletes nothing;
- a missing or a foreign marker blocks the pass (exit 1, store unchanged), --adopt stamps a
  folder with no marker, never one naming another store;
- --read-only never writes to the store (memories, shas, head versions, version list unchanged);
- the marker holds exactly the bytes the SDK's `_memories.py` writes;
- files the store refuses (not UTF-8, over 102,400 bytes) are reported in `refused`, the pass
  exits 0, they are not sent again until they change;
- STORE as the database itself (store+sqlite:PATH#ID, or store+postgres://…#ID with --db)
  beside a folder synced through the server; --session-id is recorded on its versions;
- usage errors and a store that cannot be opened exit 2; --watch syncs changes and makes a
  final pass on SIGTERM (exit 0), and a second sync of its folder meanwhile exits 1;
- interop: the SDK's own `anthropic.lib.tools._memories.SessionMemoryStores` downloads a store
  into a folder; `memory sync` on that same folder finds nothing to do; edits by `memory sync`
  in another folder reach the SDK's folder through the SDK's sync and the other way round,
  deletes too; at the end both folders hold the same bytes as the store.

Each scenario uses new stores and folders; a failing scenario is reported and the others still
run. Exit 0 when all pass.

    python3 tests/stores-sdk/sync_test.py --memory target/debug/memory \
        --db 'postgres://USER:PASSWORD@HOST:PORT/DB?schema=NAME' --instances 2

Starts that many `memory serve` instances on one database (the schema should be new): folder A
syncs through the first instance, folder B (and the interop test's `memory sync` folder)
through the last, the SDK's checks go to the first (scripts/sync-sdk-postgres.sh).
"""

import argparse
import asyncio
import datetime
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, HERE)
from sdk_env import ensure_sdk  # noqa: E402

ensure_sdk()

import anthropic  # noqa: E402
from anthropic.lib.tools import _memories as sdk_memories  # noqa: E402

from sdk_test import KEY, start_server  # noqa: E402  (the same server start and key file)

MARKER = sdk_memories.MARKER_PATH
REPORT_KEYS = ["pulled", "pushed", "deleted_local", "deleted_remote", "conflicts", "pending_deletes",
               "would_delete", "refused", "failed", "recovered", "blocked"]
PATH_LISTS = ["pulled", "pushed", "deleted_local", "deleted_remote", "pending_deletes", "would_delete"]
CHECKS = 0


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        raise AssertionError(what)


def eq(got, want, what):
    check(got == want, f"{what}:\n  expected {want!r}\n  got      {got!r}")


def sdk_marker(sid):
    """The marker's bytes as the SDK's `_stamp_and_pull` writes them (checked against its own
    `_marker_sha`, and against a folder the SDK downloads in the interop scenario)."""
    data = f"version {sdk_memories._MARKER_VERSION}\n{sid}".encode("utf-8")
    assert hashlib.sha256(data).hexdigest() == sdk_memories._marker_sha(sid)
    return data


class Report:
    """One pass's JSON object, its shape checked."""

    def __init__(self, obj, where):
        self.obj, self.where = obj, where
        check(isinstance(obj, dict), f"{where}: the pass's JSON is not an object: {obj!r}")
        missing = [k for k in REPORT_KEYS if k not in obj]
        check(not missing, f"{where}: the pass's JSON lacks {missing}: {obj}")
        for k in PATH_LISTS:
            v = obj[k]
            check(isinstance(v, list) and all(isinstance(p, str) and p.startswith("/") for p in v),
                  f"{where}: `{k}` is not a list of memory paths: {v!r}")
        for k, fields in [("conflicts", {"path", "kept_as"}), ("refused", {"path", "reason"}),
                          ("failed", {"path", "error"})]:
            v = obj[k]
            check(isinstance(v, list) and all(isinstance(i, dict) and fields <= set(i) for i in v),
                  f"{where}: `{k}` is not a list of objects with {sorted(fields)}: {v!r}")
        for k in ("recovered", "blocked"):
            check(obj[k] is None or (isinstance(obj[k], str) and obj[k]),
                  f"{where}: `{k}` is neither null nor a reason: {obj[k]!r}")

    def __getitem__(self, key):
        return self.obj[key]

    def paths(self, key):
        return sorted(self.obj[key])

    def expect(self, what=None, **want):
        """Each given key equals the given value (path lists compared sorted)."""
        for k, v in want.items():
            got = sorted(self.obj[k]) if k in PATH_LISTS else self.obj[k]
            if k in PATH_LISTS:
                v = sorted(v)
            eq(got, v, f"{what or self.where}: `{k}` (whole report: {json.dumps(self.obj)})")
        return self

    def idle(self, what=None):
        """A pass that found nothing to do."""
        return self.expect(what, pulled=[], pushed=[], deleted_local=[], deleted_remote=[], conflicts=[],
                           pending_deletes=[], would_delete=[], refused=[], failed=[], recovered=None,
                           blocked=None)


class Folder:
    """A folder synced with `memory sync` to one store through one server."""

    def __init__(self, env, sid, label, via):
        env.count += 1
        self.env, self.sid, self.label = env, sid, label
        self.dir = os.path.join(env.tmp, f"{env.count:02}-{label}")
        self.state = os.path.join(env.tmp, f"{env.count:02}-{label}.state")
        self.url = env.urls[via % len(env.urls)]
        self.store_url = f"store+{self.url}#{sid}"
        os.makedirs(self.state)

    def command(self, *flags):
        return [self.env.memory, "sync", self.dir, self.store_url, "--json", "--state-dir", self.state, *flags]

    def sync(self, *flags, rc=0, what="sync", raw=False):
        cmd = self.command(*flags)
        where = f"{self.label}: {what}: `memory sync {self.label} … {' '.join(flags)}`"
        try:
            p = subprocess.run(cmd, env=self.env.child_env(), capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{where}: did not finish in 60s")
        self.env.log.append(f"$ {' '.join(cmd)}\n-> {p.returncode}\n{p.stdout}{p.stderr}")
        self.stderr = p.stderr
        check(p.returncode == rc,
              f"{where}: exit status {p.returncode}, expected {rc}\n  stdout: {p.stdout.strip()}\n"
              f"  stderr: {p.stderr.strip()}")
        if rc == 2 or raw:
            return p
        lines = [line for line in p.stdout.splitlines() if line.strip()]
        check(len(lines) == 1, f"{where}: one pass prints one JSON line, got {len(lines)}: {p.stdout!r}")
        try:
            obj = json.loads(lines[0])
        except ValueError as e:
            raise AssertionError(f"{where}: stdout is not JSON ({e}): {lines[0]!r}")
        return Report(obj, where)

    def file(self, path):
        return os.path.join(self.dir, *path.lstrip("/").split("/"))

    def write(self, path, text):
        full = self.file(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(text.encode("utf-8") if isinstance(text, str) else text)

    def read(self, path):
        with open(self.file(path), "rb") as f:
            return f.read().decode("utf-8")

    def exists(self, path):
        return os.path.lexists(self.file(path))

    def remove(self, path):
        os.remove(self.file(path))

    def marker(self):
        with open(os.path.join(self.dir, MARKER), "rb") as f:
            return f.read()

    def tree(self):
        return tree_of(self.dir)


def tree_of(root):
    """{memory path: bytes} of every file under root but the marker (any stray file counts)."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            full = os.path.join(dirpath, name)
            rel = "/" + os.path.relpath(full, root).replace(os.sep, "/")
            if rel == "/" + MARKER:
                continue
            with open(full, "rb") as f:
                out[rel] = f.read()
    return out


def stat_tree(root):
    """{path: (size, mtime_ns)} of every file under root, the marker included."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            st = os.stat(os.path.join(dirpath, name))
            out[os.path.relpath(os.path.join(dirpath, name), root)] = (st.st_size, st.st_mtime_ns)
    return out


class Env:
    def __init__(self, memory, urls, tmp, db):
        self.memory, self.urls, self.tmp, self.db = memory, urls, tmp, db
        self.client = anthropic.Anthropic(base_url=urls[0], api_key=KEY, max_retries=0)
        self.memories = self.client.beta.memory_stores.memories
        self.versions = self.client.beta.memory_stores.memory_versions
        self.count = 0
        self.log = []

    def child_env(self):
        env = dict(os.environ)
        env["MEMORY_STORE_API_KEY"] = KEY
        env.setdefault("RUST_LOG", "info")
        return env

    def store(self, name, files=()):
        sid = self.client.beta.memory_stores.create(name=name).id
        for path, content in dict(files).items():
            self.memories.create(sid, path=path, content=content)
        return sid

    def folder(self, sid, label, via=0):
        return Folder(self, sid, label, via)

    def direct_url(self, sid):
        """The store as the servers' database itself: store+sqlite:PATH#ID or store+postgres://…#ID."""
        if self.db.startswith(("postgres://", "postgresql://")):
            return f"store+{self.db}#{sid}"
        return f"store+sqlite:{self.db}#{sid}"

    def items(self, sid):
        return {m.path: m for m in self.memories.list(sid, limit=100) if m.type == "memory"}

    def contents(self, sid):
        """{path: bytes} of the store, read with view=full."""
        out = {}
        for m in self.memories.list(sid, view="full", limit=20):
            if m.type == "memory":
                check(m.content is not None, f"view=full lists content: {m.path}")
                out[m.path] = m.content.encode("utf-8")
        return out

    def snapshot(self, sid):
        """Everything a write would change: each memory's id, hash and head version, and the
        store's whole version list."""
        mems = {p: (m.id, m.content_sha256, m.memory_version_id) for p, m in self.items(sid).items()}
        vers = sorted((v.id, v.operation) for v in self.versions.list(sid, limit=100))
        return mems, vers

    def agree(self, sid, *folders, what="at the end"):
        """Every folder holds exactly the store's memories, byte for byte, and its marker."""
        want = self.contents(sid)
        check(("/" + MARKER) not in want, f"{what}: the marker was uploaded as a memory")
        for f in folders:
            eq(f.tree(), want, f"{what}: {f.label}'s files are the store's memories")
            eq(f.marker(), sdk_marker(sid), f"{what}: {f.label}'s marker")


def b(text):
    return text.encode("utf-8")


# Scenarios. Each makes its own stores and folders.


def propagate(env):
    sid = env.store("propagate", {"/seed.md": "seed\n", "/dir/deep/n.md": "héllo ✓\n", "/empty.md": "",
                                  "/with space/ünïcode.md": "ü\n"})
    a, bb = env.folder(sid, "A", 0), env.folder(sid, "B", 1)
    os.makedirs(bb.dir)  # B exists but is empty; A does not exist yet
    seeded = ["/dir/deep/n.md", "/empty.md", "/seed.md", "/with space/ünïcode.md"]
    a.sync(what="first pass on a missing folder").expect(pulled=seeded, pushed=[], deleted_remote=[], blocked=None)
    check(os.path.isdir(a.dir), "the first pass creates the folder")
    eq(a.marker(), sdk_marker(sid), "the marker holds the SDK's bytes")
    bb.sync(what="first pass on an empty folder").expect(pulled=seeded, pushed=[], blocked=None)
    env.agree(sid, a, bb, what="after the first passes")

    a.write("/notes/a.md", "from A\n")
    a.sync(what="a create on A").expect(pushed=["/notes/a.md"], pulled=[], deleted_remote=[])
    eq(env.contents(sid).get("/notes/a.md"), b("from A\n"), "A's new file is on the store")
    bb.sync(what="B after A's create").expect(pulled=["/notes/a.md"], pushed=[])
    eq(bb.read("/notes/a.md"), "from A\n", "A's create reaches B")

    bb.write("/notes/a.md", "edited on B\n")
    bb.sync(what="an edit on B").expect(pushed=["/notes/a.md"], pulled=[])
    mem = env.items(sid)["/notes/a.md"]
    ops = [v.operation for v in env.versions.list(sid, memory_id=mem.id)]
    eq(ops, ["modified", "created"], "B's edit is an update of the same memory")
    a.sync(what="A after B's edit").expect(pulled=["/notes/a.md"], pushed=[])
    eq(a.read("/notes/a.md"), "edited on B\n", "B's edit reaches A")

    for f in (a, bb):
        f.sync(what="a pass with nothing changed").idle()
    env.agree(sid, a, bb)


def conflict(env):
    sid = env.store("conflict", {"/c.md": "base\n", "/other.md": "x\n", "/deep/er/c2.md": "base 2\n"})
    a, bb = env.folder(sid, "A", 0), env.folder(sid, "B", 1)
    a.sync()
    bb.sync()
    a.write("/c.md", "A's text\n")
    bb.write("/c.md", "B's text\n")
    a.write("/deep/er/c2.md", "A's text 2\n")
    bb.write("/deep/er/c2.md", "B's text 2\n")
    a.sync(what="A pushes its edits first").expect(pushed=["/c.md", "/deep/er/c2.md"], conflicts=[])
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    r = bb.sync(what="B's edits lose")
    after = datetime.datetime.now(datetime.timezone.utc)
    eq(sorted(c["path"] for c in r["conflicts"]), ["/c.md", "/deep/er/c2.md"], f"two conflicts: {r.obj}")
    c = [c for c in r["conflicts"] if c["path"] == "/c.md"][0]
    kept = c["kept_as"]
    kept2 = [c for c in r["conflicts"] if c["path"] == "/deep/er/c2.md"][0]["kept_as"]
    check(re.fullmatch(r"/deep/er/c2\.md\.conflict-\d{8}T\d{6}Z", str(kept2)),
          f"a nested conflict copy sits beside its file: {kept2!r}")
    eq(bb.read("/deep/er/c2.md"), "A's text 2\n", "the store's version wins on B's disk (nested)")
    eq(bb.read(kept2), "B's text 2\n", "B's losing nested text is kept beside it")
    m = re.fullmatch(r"/c\.md\.conflict-(\d{8}T\d{6}Z)", str(kept))
    check(m, f"kept_as is the memory path /c.md.conflict-YYYYMMDDTHHMMSSZ: {kept!r}")
    stamp = datetime.datetime.strptime(m.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    check(before - datetime.timedelta(seconds=2) <= stamp <= after + datetime.timedelta(seconds=2),
          f"the conflict copy's name is the UTC time of the pass: {stamp} not in [{before}, {after}]")
    r.expect(pushed=[])
    eq(bb.read("/c.md"), "A's text\n", "the store's version wins on B's disk")
    eq(bb.read(kept), "B's text\n", "B's losing text is kept beside it")
    store = env.contents(sid)
    eq(store.get("/c.md"), b("A's text\n"), "the store keeps the winner")
    check(kept not in store and kept2 not in store, "the conflict copies are uploaded only by the next pass")

    bb.sync(what="B's next pass uploads the conflict copies").expect(pushed=[kept, kept2], pulled=[], conflicts=[])
    eq(env.contents(sid).get(kept), b("B's text\n"), "the conflict copy is a new memory")
    a.sync(what="A after the conflict").expect(pulled=[kept, kept2], pushed=[], conflicts=[])
    eq(a.read(kept), "B's text\n", "the losing text reaches A")
    eq(a.read("/c.md"), "A's text\n", "A keeps the winner")
    for f in (a, bb):
        f.sync().idle()
    env.agree(sid, a, bb)


def delete_local(env):
    sid = env.store("delete-local", {"/d.md": "doomed\n", "/keep.md": "kept\n", "/back.md": "back\n"})
    a, bb = env.folder(sid, "A", 0), env.folder(sid, "B", 1)
    a.sync()
    bb.sync()
    a.remove("/d.md")
    a.remove("/back.md")
    a.sync("--delete-after", "2s", what="the first pass that sees /d.md and /back.md missing").expect(
        deleted_remote=[], pending_deletes=["/back.md", "/d.md"], pushed=[], pulled=[])
    check("/d.md" in env.items(sid), "the first pass after a delete keeps the memory on the store")
    a.write("/back.md", "back\n")  # back before the delay is over: no delete
    bb.sync(what="B before the delay is over").idle()
    check(bb.exists("/d.md"), "B keeps /d.md while the delete waits")
    time.sleep(2.3)
    a.sync(what="the default delay (30s) is not over").expect(deleted_remote=[], pending_deletes=["/d.md"])
    check("/d.md" in env.items(sid), "the default --delete-after is longer than 2s")
    a.sync("--delete-after", "2s", "--deletions", "log-only", what="log-only after the delay").expect(
        deleted_remote=[], would_delete=["/d.md"])
    check("/d.md" in env.items(sid), "--deletions log-only deletes nothing")
    a.sync("--delete-after", "2s", "--deletions", "disabled", what="deletions disabled").expect(
        deleted_remote=[])
    check("/d.md" in env.items(sid), "--deletions disabled deletes nothing")
    doomed = env.items(sid)["/d.md"]
    a.sync("--delete-after", "2s", what="a pass after the delay").expect(
        deleted_remote=["/d.md"], pending_deletes=[], pushed=[], pulled=[])
    check("/d.md" not in env.items(sid), "the delete reached the store after the delay")
    check("/back.md" in env.items(sid), "a file back before the delay was over is not deleted")
    ops = [v.operation for v in env.versions.list(sid, memory_id=doomed.id)]
    eq(ops[0], "deleted", "the memory's last version is its deletion")
    bb.sync(what="B after the delete").expect(deleted_local=["/d.md"], pushed=[], deleted_remote=[])
    check(not bb.exists("/d.md"), "the delete reaches B")
    for f in (a, bb):
        f.sync("--delete-after", "2s").idle()
    env.agree(sid, a, bb)


def delete_edge(env):
    """A local delete of a memory edited on the store restores the store's version; deleting the
    only file of a folder is a delete (after the delay), not a wipe."""
    sid = env.store("delete-edge", {"/x.md": "x\n", "/y.md": "y\n"})
    a, bb = env.folder(sid, "A", 0), env.folder(sid, "B", 1)
    a.sync()
    bb.sync()
    a.remove("/x.md")
    bb.write("/x.md", "edited on B\n")
    bb.sync().expect(pushed=["/x.md"])
    a.sync("--delete-after", "2s", what="deleted on A, edited on the store").expect(
        pulled=["/x.md"], deleted_remote=[], pending_deletes=[], pushed=[])
    eq(a.read("/x.md"), "edited on B\n", "the store's edit is restored over A's delete")

    sid1 = env.store("delete-only-file", {"/only.md": "only\n"})
    c = env.folder(sid1, "C", 0)
    c.sync()
    c.remove("/only.md")
    r = c.sync("--delete-after", "2s", what="the only file deleted")
    r.expect(recovered=None, pulled=[], pending_deletes=["/only.md"], deleted_remote=[])
    time.sleep(2.2)
    a.sync("--delete-after", "2s", what="A after the delay").idle()
    eq(a.read("/x.md"), "edited on B\n", "the restored file stays")
    c.sync("--delete-after", "2s", what="the only file, after the delay").expect(
        deleted_remote=["/only.md"], recovered=None, pulled=[])
    eq(env.contents(sid1), {}, "deleting the only file empties the store")
    c.sync().idle()
    env.agree(sid, a, bb)
    env.agree(sid1, c)


def delete_remote(env):
    sid = env.store("delete-remote", {"/r1.md": "one\n", "/r2.md": "two\n", "/r3.md": "three\n"})
    a = env.folder(sid, "A", 0)
    a.sync()
    ids = {p: m.id for p, m in env.items(sid).items()}
    env.memories.delete(ids["/r1.md"], memory_store_id=sid)
    env.memories.delete(ids["/r2.md"], memory_store_id=sid)
    a.write("/r2.md", "edited on A\n")
    a.sync(what="after deletes on the store").expect(deleted_local=["/r1.md"], pushed=["/r2.md"],
                                                     deleted_remote=[], pulled=[])
    check(not a.exists("/r1.md"), "a memory deleted on the store goes from A")
    items = env.items(sid)
    eq(sorted(items), ["/r2.md", "/r3.md"], "the store's paths")
    check(items["/r2.md"].id != ids["/r2.md"], "the edited file is created again as a new memory")
    eq(env.contents(sid)["/r2.md"], b("edited on A\n"), "the re-created memory holds A's edit")
    moved = env.memories.update(ids["/r3.md"], memory_store_id=sid, path="/moved/r3.md")
    a.sync(what="after a rename on the store").expect(deleted_local=["/r3.md"], pulled=["/moved/r3.md"],
                                                      pushed=[], deleted_remote=[])
    eq(a.read("/moved/r3.md"), "three\n", "a renamed memory moves on disk")
    eq(env.items(sid)["/moved/r3.md"].id, moved.id, "the rename pushed nothing back")
    a.sync().idle()
    env.agree(sid, a)


def wipe(env):
    sid = env.store("wipe", {"/w1.md": "1\n", "/sub/w2.md": "2\n", "/sub/deeper/w3.md": "3\n"})
    a, bb = env.folder(sid, "A", 0), env.folder(sid, "B", 1)
    a.sync()
    bb.sync()
    snap = env.snapshot(sid)
    paths = ["/sub/deeper/w3.md", "/sub/w2.md", "/w1.md"]

    shutil.rmtree(a.dir)
    r = a.sync("--delete-after", "2s", what="A's folder removed")
    check(r["recovered"], f"a removed folder is recovered: {r.obj}")
    r.expect(pulled=paths, pushed=[], deleted_remote=[], pending_deletes=[], blocked=None)
    eq(env.snapshot(sid), snap, "recovering a removed folder writes nothing to the store")
    env.agree(sid, a, what="after recovering a removed folder")

    for p in paths:
        a.remove(p)
    r = a.sync("--delete-after", "2s", what="every file gone, the marker kept")
    check(r["recovered"], f"a folder whose every file is gone is recovered: {r.obj}")
    r.expect(pulled=paths, pushed=[], deleted_remote=[], pending_deletes=[])
    eq(env.snapshot(sid), snap, "recovering a wiped folder writes nothing to the store")
    env.agree(sid, a, what="after recovering every file")

    for p in paths:
        a.remove(p)
    os.remove(os.path.join(a.dir, MARKER))
    r = a.sync("--delete-after", "2s", what="every file and the marker gone, the folders kept")
    check(r["recovered"], f"a folder with no files and no marker is recovered: {r.obj}")
    r.expect(pulled=paths, pushed=[], deleted_remote=[], pending_deletes=[])
    eq(env.snapshot(sid), snap, "recovering files and marker writes nothing to the store")
    a.sync("--delete-after", "2s").idle()
    bb.sync().idle()
    eq(env.snapshot(sid), snap, "the store after every wipe")
    env.agree(sid, a, bb)


def markers(env):
    sid = env.store("markers", {"/m1.md": "m1\n", "/m2.md": "m2\n"})
    a = env.folder(sid, "A", 0)
    a.sync()
    snap = env.snapshot(sid)
    marker = os.path.join(a.dir, MARKER)

    os.remove(marker)
    a.write("/new.md", "new\n")
    a.write("/m1.md", "changed\n")
    a.remove("/m2.md")
    r = a.sync(rc=1, what="the marker is gone, files remain")
    check(r["blocked"], f"a folder without its marker is blocked: {r.obj}")
    check(MARKER in a.stderr or "marker" in a.stderr.lower(),
          f"a blocked pass names the marker on stderr: {a.stderr.strip()!r}")
    r.expect(pushed=[], deleted_remote=[], pulled=[], deleted_local=[])
    eq(env.snapshot(sid), snap, "a blocked pass leaves the store unchanged")
    check(not os.path.exists(marker), "a blocked pass writes no marker")
    eq(a.read("/m1.md"), "changed\n", "a blocked pass leaves the files as found")
    check(a.exists("/new.md"), "a blocked pass leaves new files as found")

    foreign = b"version 1\nmemstore_01someoneelsesstore00"
    with open(marker, "wb") as f:
        f.write(foreign)
    r = a.sync(rc=1, what="a marker naming another store")
    check(r["blocked"], f"a folder with a foreign marker is blocked: {r.obj}")
    r.expect(pushed=[], deleted_remote=[])
    eq(env.snapshot(sid), snap, "a foreign marker leaves the store unchanged")
    eq(a.marker(), foreign, "a foreign marker is left as found")
    r = a.sync("--adopt", rc=1, what="--adopt with a marker naming another store")
    check(r["blocked"], f"--adopt never takes a folder of another store: {r.obj}")
    eq(env.snapshot(sid), snap, "--adopt with a foreign marker leaves the store unchanged")
    eq(a.marker(), foreign, "--adopt leaves a foreign marker as found")

    c = env.folder(sid, "C", 1)
    c.write("/x.md", "only in C\n")
    c.write("/m1.md", "m1\n")  # the store's bytes
    r = c.sync(rc=1, what="first pass on a folder with files and no marker")
    check(r["blocked"], f"a folder with files and no marker is blocked: {r.obj}")
    r.expect(pushed=[], deleted_remote=[])
    eq(env.snapshot(sid), snap, "a folder with files and no marker leaves the store unchanged")
    check(not os.path.exists(os.path.join(c.dir, MARKER)), "no marker is stamped without --adopt")
    c.sync("--adopt", what="--adopt on a folder with no marker").expect(
        pushed=["/x.md"], pulled=["/m2.md"], deleted_remote=[], conflicts=[], blocked=None)
    eq(c.marker(), sdk_marker(sid), "--adopt stamps the SDK's marker")
    eq(env.contents(sid), {"/m1.md": b("m1\n"), "/m2.md": b("m2\n"), "/x.md": b("only in C\n")},
       "the adopted folder's files are on the store")
    c.sync().idle()
    env.agree(sid, c)


def read_only(env):
    sid = env.store("read-only", {"/ro1.md": "1\n", "/ro2.md": "2\n", "/ro3.md": "3\n"})
    a = env.folder(sid, "A", 0)
    a.sync("--read-only", what="a read-only first pass downloads").expect(
        pulled=["/ro1.md", "/ro2.md", "/ro3.md"], pushed=[])
    env.agree(sid, a, what="after a read-only download")
    a.write("/ro1.md", "local edit\n")
    a.write("/new.md", "local new\n")
    a.remove("/ro2.md")
    ro3 = env.items(sid)["/ro3.md"]
    env.memories.update(ro3.id, memory_store_id=sid, content="remote edit\n")
    snap = env.snapshot(sid)
    a.sync("--read-only", "--delete-after", "2s", what="read-only with local edits").expect(
        pulled=["/ro3.md"], pushed=[], deleted_remote=[], conflicts=[])
    eq(a.read("/ro3.md"), "remote edit\n", "a read-only pass still pulls")
    eq(env.snapshot(sid), snap, "a read-only pass writes nothing to the store")
    time.sleep(2.3)
    a.sync("--read-only", "--delete-after", "2s", what="read-only after the delete delay").expect(
        pushed=[], deleted_remote=[], would_delete=[])
    eq(env.snapshot(sid), snap, "a read-only pass after the delay writes nothing to the store")
    eq(a.read("/ro1.md"), "local edit\n", "read-only keeps the local edit on disk")
    check(a.exists("/new.md"), "read-only keeps the new file on disk")
    eq(env.contents(sid), {"/ro1.md": b("1\n"), "/ro2.md": b("2\n"), "/ro3.md": b("remote edit\n")},
       "the store's contents after read-only passes")


def refused(env):
    """Files the store refuses (not UTF-8, over 102,400 bytes) are reported, the pass still
    exits 0 and the other files sync; unchanged, they are not sent again; changed, they go."""
    sid = env.store("refused", {"/ok.md": "ok\n"})
    a = env.folder(sid, "A", 0)
    a.sync()
    a.write("/binary.md", b"\xff\xfe not UTF-8\n")
    a.write("/big.md", "x" * 102401)
    a.write("/limit.md", "y" * 102400)
    a.write("/fine.md", "fine\n")
    r = a.sync(what="files the store refuses")
    r.expect(pushed=["/fine.md", "/limit.md"], failed=[], blocked=None)
    eq(sorted(i["path"] for i in r["refused"]), ["/big.md", "/binary.md"], f"the refused files: {r.obj}")
    check(all(isinstance(i["reason"], str) and i["reason"] for i in r["refused"]),
          f"each refusal says why: {r['refused']}")
    eq(sorted(env.items(sid)), ["/fine.md", "/limit.md", "/ok.md"], "the store holds what it took")
    eq(len(env.contents(sid)["/limit.md"]), 102400, "a file of exactly 102,400 bytes is a memory")
    snap = env.snapshot(sid)
    a.sync(what="the refused files unchanged").expect(pushed=[], failed=[], deleted_remote=[])
    eq(env.snapshot(sid), snap, "refused files that did not change are not sent again")
    a.write("/big.md", "small now\n")
    a.write("/binary.md", "text now\n")
    a.sync(what="the refused files changed").expect(pushed=["/big.md", "/binary.md"], refused=[], failed=[])
    a.sync().idle()
    env.agree(sid, a)


def direct(env):
    """STORE as the database itself (store+sqlite: or store+postgres:) beside a folder synced
    through the server; --session-id names the session on the versions a direct sync writes."""
    sid = env.store("direct", {"/shared.md": "shared\n"})
    a = env.folder(sid, "A", 0)
    d = env.folder(sid, "D", 1)
    d.store_url = env.direct_url(sid)
    session = "sesn_01SyncTestDirect0000000"
    d.sync("--session-id", session, what="a first pass on the database").expect(pulled=["/shared.md"])
    a.sync()
    d.write("/from-db.md", "written through the database\n")
    d.sync("--session-id", session, what="a push to the database").expect(pushed=["/from-db.md"])
    a.sync(what="A through the server").expect(pulled=["/from-db.md"])
    eq(a.read("/from-db.md"), "written through the database\n", "a direct push reaches a server folder")
    mem = env.items(sid)["/from-db.md"]
    head = next(iter(env.versions.list(sid, memory_id=mem.id)))
    check(head.created_by is not None and head.created_by.type == "session_actor"
          and getattr(head.created_by, "session_id", None) == session,
          f"--session-id is recorded on the version: {head.created_by}")
    a.write("/shared.md", "edited through the server\n")
    a.sync().expect(pushed=["/shared.md"])
    d.sync(what="the database after a server edit").expect(pulled=["/shared.md"], pushed=[])
    for f in (a, d):
        f.sync().idle()
    env.agree(sid, a, d)


def usage(env):
    sid = env.store("usage", {"/u.md": "u\n"})
    a = env.folder(sid, "A", 0)
    a.sync(what="the folder syncs").expect(pulled=["/u.md"])
    snap = env.snapshot(sid)
    for flags, word, what in [(["--watch", "--interval", "1s"], "interval", "--interval below 5s"),
                              (["--deletions", "sometimes"], "deletions", "an unknown --deletions mode"),
                              (["--delete-after", "soon"], "delete-after", "a --delete-after that is no duration")]:
        a.sync(*flags, rc=2, what=what)
        check(word in a.stderr.lower(), f"{what}: the error names {word}: {a.stderr.strip()!r}")
    gone = env.folder("memstore_01doesnotexist0000000000", "G", 0)
    gone.sync(rc=2, what="a store that does not exist")
    check("memstore_01doesnotexist0000000000" in gone.stderr or "not found" in gone.stderr.lower(),
          f"the error says which store cannot be opened: {gone.stderr.strip()!r}")
    eq(env.snapshot(sid), snap, "usage errors wrote nothing")
    a.sync(what="the folder still syncs").idle()


def watch(env):
    sid = env.store("watch", {"/w.md": "w0\n"})
    a = env.folder(sid, "A", 0)
    p = subprocess.Popen(a.command("--watch", "--interval", "5s"), env=env.child_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def wait(cond, what, seconds=14):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                if cond():
                    return
                if p.poll() is not None:
                    raise AssertionError(f"--watch exited early ({p.returncode}) while waiting for {what}: "
                                         f"{p.stderr.read()}")
                time.sleep(0.1)
            raise AssertionError(f"--watch: no {what} within {seconds}s")
        wait(lambda: a.exists("/w.md"), "first download")
        other = a.sync(rc=1, raw=True, what="a second sync of the folder while --watch runs")
        check(other.stderr.strip(), "a second sync of the same folder says why it stops")
        a.write("/w2.md", "watched\n")
        wait(lambda: "/w2.md" in env.items(sid), "upload of a new file")
        env.memories.create(sid, path="/w3.md", content="from the store\n")
        wait(lambda: a.exists("/w3.md"), "download of a new memory")
        a.write("/w4.md", "just before SIGTERM\n")
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            raise AssertionError("--watch did not exit within 20s of SIGTERM")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    eq(p.returncode, 0, f"--watch exits 0 on SIGTERM (stderr: {err.strip()})")
    reports = [Report(json.loads(line), "--watch") for line in out.splitlines() if line.strip()]
    check(len(reports) >= 3, f"--watch prints one JSON object per pass: {out!r}")
    pushed = sorted(p for r in reports for p in r["pushed"])
    eq(pushed, ["/w2.md", "/w4.md"], "--watch's passes (the final one on SIGTERM included) pushed the new files")
    env.agree(sid, a, what="after --watch")


def interop(env):
    """The SDK's SessionMemoryStores and `memory sync` on one store, and on one folder."""
    sid = env.store("interop", {"/prefs/style.md": "tabs\n", "/notes.md": "héllo\n", "/empty.md": ""})
    sdk_dir = os.path.join(env.tmp, "interop-sdk", "mount")  # absent: the SDK makes it
    s = env.folder(sid, "S", 0)  # `memory sync` on the SDK's own folder
    s.dir = sdk_dir
    m = env.folder(sid, "M", 1)  # `memory sync` in a folder of its own

    async def go():
        client = anthropic.AsyncAnthropic(base_url=env.urls[0], api_key=KEY, max_retries=0)
        sdk = sdk_memories.SessionMemoryStores(client, workdir=env.tmp, sync_interval=5.0)
        resource = types.SimpleNamespace(type="memory_store", memory_store_id=sid, mount_path=sdk_dir,
                                         access="read_write", name="interop")
        await sdk.download(types.SimpleNamespace(resources=[resource]))
        eq(s.marker(), sdk_marker(sid), "the SDK's marker holds the bytes this test expects")
        env.agree(sid, s, what="after the SDK's download")
        snap = env.snapshot(sid)

        stamps = stat_tree(sdk_dir)
        s.sync(what="memory sync on the SDK's folder").idle()
        eq(stat_tree(sdk_dir), stamps, "memory sync on the SDK's folder rewrites no file (size, mtime)")
        eq(env.snapshot(sid), snap, "memory sync on the SDK's folder writes nothing")
        env.agree(sid, s, what="after memory sync on the SDK's folder")

        m.sync(what="memory sync downloads").expect(pulled=["/empty.md", "/notes.md", "/prefs/style.md"])
        eq(m.marker(), s.marker(), "memory sync's marker has the SDK's bytes")

        m.write("/notes.md", "edited by memory sync\n")
        m.write("/new/from-sync.md", "made by memory sync\n")
        m.sync(what="memory sync pushes").expect(pushed=["/new/from-sync.md", "/notes.md"], pulled=[])
        await sdk._sync_all(final=False)
        eq(s.read("/notes.md"), "edited by memory sync\n", "memory sync's edit reaches the SDK's folder")
        eq(s.read("/new/from-sync.md"), "made by memory sync\n", "memory sync's create reaches the SDK's folder")

        s.write("/prefs/style.md", "spaces, from the SDK's folder\n")
        s.write("/from-sdk.md", "made in the SDK's folder\n")
        await sdk._sync_all(final=False)
        store = env.contents(sid)
        eq(store.get("/prefs/style.md"), b("spaces, from the SDK's folder\n"), "the SDK pushed its edit")
        eq(store.get("/from-sdk.md"), b("made in the SDK's folder\n"), "the SDK pushed its create")
        m.sync(what="memory sync after the SDK's push").expect(
            pulled=["/from-sdk.md", "/prefs/style.md"], pushed=[], conflicts=[])
        env.agree(sid, s, m, what="after edits both ways")

        m.remove("/empty.md")
        m.sync("--delete-after", "2s").expect(pending_deletes=["/empty.md"], deleted_remote=[])
        time.sleep(2.2)
        m.sync("--delete-after", "2s", what="memory sync deletes").expect(deleted_remote=["/empty.md"])
        s.remove("/notes.md")
        await sdk.finish()  # the last sync: pulls the delete, sends its own at once
        check(not s.exists("/empty.md"), "memory sync's delete reaches the SDK's folder")
        check("/notes.md" not in env.items(sid), "the SDK's delete reaches the store")
        m.sync(what="memory sync after the SDK's delete").expect(deleted_local=["/notes.md"], pushed=[])
        check(not m.exists("/notes.md"), "the SDK's delete reaches memory sync's folder")

        s.sync(what="memory sync on the SDK's folder at the end").idle()
        m.sync("--delete-after", "2s").idle()
        env.agree(sid, s, m)
        eq(s.tree(), m.tree(), "the SDK's folder and memory sync's folder hold the same bytes")
        eq(sorted(env.contents(sid)), ["/from-sdk.md", "/new/from-sync.md", "/prefs/style.md"],
           "the store's paths at the end")
        await client.close()

    asyncio.run(go())


SCENARIOS = [propagate, conflict, delete_local, delete_edge, delete_remote, wipe, markers, read_only, refused,
             direct, usage, watch, interop]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memory", required=True, help="the memory binary")
    ap.add_argument("--db", help="the database of every instance (default: a new SQLite file)")
    ap.add_argument("--instances", type=int, default=1, help="how many `memory serve` on --db")
    ap.add_argument("--only", action="append", help="run only these scenarios (by name)")
    ap.add_argument("--verbose", action="store_true", help="print every memory sync run of a failed scenario")
    args = ap.parse_args()
    if args.instances > 1 and not args.db:
        ap.error("--instances above 1 needs --db (a database the instances share)")
    memory = os.path.abspath(args.memory)
    chosen = [s for s in SCENARIOS if not args.only or s.__name__ in args.only]
    if not chosen:
        ap.error(f"no scenario named {args.only}; there are {[s.__name__ for s in SCENARIOS]}")
    failed = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memory-sync-test-") as tmp:
        keys = os.path.join(tmp, "keys.txt")
        with open(keys, "w") as f:
            f.write("# test key\napikey_01sdktest sk-sdk-test-secret\n")
        db = args.db or os.path.join(tmp, "stores.db")
        servers = []
        try:
            for _ in range(args.instances):
                servers.append(start_server(memory, db, keys))
            urls = [u for _, u in servers]
            for scenario in chosen:
                env = Env(memory, urls, os.path.join(tmp, scenario.__name__), db)
                os.makedirs(env.tmp)
                t = time.monotonic()
                try:
                    scenario(env)
                    print(f"  ok   {scenario.__name__} ({time.monotonic() - t:.1f}s)", flush=True)
                except Exception as e:  # noqa: BLE001
                    failed.append(scenario.__name__)
                    detail = str(e) if isinstance(e, AssertionError) else traceback.format_exc()
                    print(f"  FAIL {scenario.__name__}: {detail}", flush=True)
                    if args.verbose:
                        print("\n".join(env.log), flush=True)
        finally:
            codes = []
            for server, _ in servers:
                server.send_signal(signal.SIGTERM)
                try:
                    codes.append(server.wait(timeout=10))
                except subprocess.TimeoutExpired:
                    server.kill()
                    raise AssertionError("memory serve did not stop on SIGTERM")
        for code in codes:
            check(code == 0, f"memory serve exits 0 on SIGTERM (got {code})")
    where = f"{args.instances} instances on one database" if args.instances > 1 else "one instance"
    took = time.monotonic() - started
    if failed:
        print(f"memory sync: {len(failed)} of {len(chosen)} scenarios failed ({', '.join(failed)}); "
              f"{CHECKS} checks ran ({where}, {took:.0f}s)")
        sys.exit(1)
    print(f"memory sync: {len(chosen)} scenarios, {CHECKS} checks passed with anthropic "
          f"{anthropic.__version__} ({where}, {took:.0f}s)")


if __name__ == "__main__":
    main()
