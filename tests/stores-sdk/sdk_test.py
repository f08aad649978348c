#!/usr/bin/env python3
"""Drive `memory serve` with the official Python SDK (anthropic==2.14.0), a client no one here wrote.

    python3 tests/stores-sdk/sdk_test.py --memory target/debug/memory

Runs in the oracle's venv (tests/oracle/setup.sh makes it when missing; ORACLE_VENV picks
where). Starts `memory serve` on a loopback port with a fresh database and an API key file,
then uses client.beta.memory_stores, .memories and .memory_versions: create, list with depth=1,
update with a precondition (stale: ConflictError), rename, delete, versions listing, redact,
archive; stores kept apart by workspace (`anthropic-workspace-id`). A client with the SDK's default retries sends each deterministic 409 once (the server
says `x-should-retry: false`). Stops the server with SIGTERM and checks it exits cleanly. Exit 0
when all pass.

    python3 tests/stores-sdk/sdk_test.py --memory target/debug/memory \
        --db 'postgres://USER:PASSWORD@HOST:PORT/DB?schema=NAME' --instances 2

Starts that many `memory serve` instances on one database (a PostgreSQL URL; the schema
should be new) and sends the SDK's requests to them in turn, one request here, the next there
(pages of one listing included). With two or more instances it then races them: 8 updates
with one `content_sha256` precondition spread over the instances (exactly one wins), creates
racing at the memory limit (exactly `--max-memories` memories, 2,000 by default), and an
instance killed with SIGKILL in the middle of writes (every write it answered 200 is there,
and no memory or version is half written).
"""

import argparse
import concurrent.futures
import hashlib
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, HERE)
from sdk_env import ensure_sdk  # noqa: E402

ensure_sdk()

import anthropic  # noqa: E402

CHECKS = 0


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        raise AssertionError(what)


def expect(exc_type, fn, what):
    try:
        fn()
    except exc_type as e:
        check(True, what)
        return e
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"{what}: expected {exc_type.__name__}, got {type(e).__name__}: {e}")
    raise AssertionError(f"{what}: expected {exc_type.__name__}, got success")


def error_of(e):
    """The `error` object of an APIStatusError's envelope body."""
    body = e.body if isinstance(e.body, dict) else {}
    check(body.get("type") == "error" and str(body.get("request_id", "")).startswith("req_"),
          f"error envelope: {body}")
    return body.get("error", {})


def sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run(client):
    stores = client.beta.memory_stores
    memories = stores.memories
    versions = stores.memory_versions

    # Stores.
    store = stores.create(name="SDK Test", description="made by the SDK test",
                          metadata={"team": "memory", "tmp": "x"})
    check(store.id.startswith("memstore_") and store.type == "memory_store", "store object")
    check(store.archived_at is None and store.description == "made by the SDK test", "store fields")
    sid = store.id
    check(stores.retrieve(sid).name == "SDK Test", "retrieve store")
    updated = stores.update(sid, metadata={"tmp": None, "env": "ci"})
    check(updated.metadata == {"team": "memory", "env": "ci"}, f"metadata patch: {updated.metadata}")
    other = stores.create(name="Second")
    listed = [s.id for s in stores.list(limit=1)]  # auto-pagination over 1-item pages
    check(listed[:2] == [other.id, sid], f"stores newest first across pages: {listed}")

    # Memories: create, depth=1 listing with prefixes.
    fmt = memories.create(sid, path="/preferences/formatting.md", content="Always use tabs.")
    check(fmt.id.startswith("mem_") and fmt.type == "memory", "memory object")
    check(fmt.content is None, "create answers in the basic view")
    check(fmt.content_sha256 == sha256("Always use tabs."), "content_sha256 is sha256 of the UTF-8 bytes")
    check(fmt.content_size_bytes == len("Always use tabs.".encode()), "content_size_bytes")
    memories.create(sid, path="/notes.md", content="héllo")
    memories.create(sid, path="/preferences/deep/x.md", content="")
    check(memories.retrieve(fmt.id, memory_store_id=sid).content == "Always use tabs.",
          "retrieve answers in the full view")

    page = memories.list(sid, path_prefix="/", depth=1)
    items = [(i.type, i.path) for i in page.data]
    check(items == [("memory", "/notes.md"), ("memory_prefix", "/preferences/")],
          f"depth=1 rolls up directories: {items}")
    page = memories.list(sid, path_prefix="/preferences/", depth=1)
    items = [(i.type, i.path) for i in page.data]
    check(items == [("memory_prefix", "/preferences/deep/"), ("memory", "/preferences/formatting.md")],
          f"depth=1 below a prefix: {items}")
    everything = [i.path for i in memories.list(sid, limit=1)]
    check(everything == ["/notes.md", "/preferences/deep/x.md", "/preferences/formatting.md"],
          f"whole tree across 1-item pages: {everything}")
    expect(anthropic.BadRequestError, lambda: memories.list(sid, depth=2), "depth=2 is a 400")
    expect(anthropic.BadRequestError, lambda: memories.list(sid, path_prefix="/preferences"),
           "a prefix without trailing / is a 400")

    # Occupancy: create never overwrites, ancestors/descendants conflict.
    e = expect(anthropic.ConflictError,
               lambda: memories.create(sid, path="/preferences", content="x"), "ancestor path is a 409")
    err = error_of(e)
    check(err["type"] == "memory_path_conflict_error", f"path conflict type: {err}")
    check(err["conflicting_path"].startswith("/preferences/") and err["conflicting_memory_id"].startswith("mem_"),
          f"conflicting id and path: {err}")
    e = expect(anthropic.ConflictError,
               lambda: memories.create(sid, path="/notes.md", content="x"), "an occupied path is a 409")
    check(error_of(e)["conflicting_memory_id"] == [i.id for i in memories.list(sid) if i.path == "/notes.md"][0],
          "the conflicting id is the occupant's")

    # Update with a precondition: stale → ConflictError; fresh → new version.
    stale = {"type": "content_sha256", "content_sha256": sha256("something else")}
    e = expect(anthropic.ConflictError,
               lambda: memories.update(fmt.id, memory_store_id=sid, content="No.", precondition=stale),
               "stale precondition is a 409")
    check(error_of(e)["type"] == "memory_precondition_failed_error", f"precondition error type: {e.body}")
    fresh = {"type": "content_sha256", "content_sha256": fmt.content_sha256}
    up = memories.update(fmt.id, memory_store_id=sid, content="Use 2 spaces.", precondition=fresh)
    check(up.content_sha256 == sha256("Use 2 spaces.") and up.memory_version_id != fmt.memory_version_id,
          "update writes a new version")
    retry = memories.update(fmt.id, memory_store_id=sid, content="Use 2 spaces.", precondition=fresh)
    check(retry.memory_version_id == up.memory_version_id, "a retried CAS write is a 200 with no new version")

    # Rename keeps the id.
    moved = memories.update(fmt.id, memory_store_id=sid, path="/archive/formatting.md", view="full")
    check(moved.id == fmt.id and moved.path == "/archive/formatting.md" and moved.content == "Use 2 spaces.",
          "rename keeps id and content")

    # Versions: newest first, attributed to the API key.
    vs = list(versions.list(sid, memory_id=fmt.id))
    check([v.operation for v in vs] == ["modified", "modified", "created"], f"operations: {[v.operation for v in vs]}")
    check(all(v.created_by is not None and v.created_by.type == "api_actor"
              and v.created_by.api_key_id == "apikey_01sdktest" for v in vs), "created_by is the api_actor")
    check(vs[0].path == "/archive/formatting.md" and vs[2].path == "/preferences/formatting.md", "paths at write time")
    check(all(v.content is None for v in vs) and vs[2].content_sha256 == fmt.content_sha256,
          "basic view: no content, hash kept")
    only_created = list(versions.list(sid, operation="created"))
    check(len(only_created) == 3, "operation filter")
    check(list(versions.list(sid, api_key_id="apikey_other")) == [], "api_key_id filter")
    first = versions.retrieve(vs[2].id, memory_store_id=sid)
    check(first.content == "Always use tabs.", "retrieve a version in the full view")

    # Redact: the head is refused, an old version is wiped.
    expect(anthropic.ConflictError, lambda: versions.redact(vs[0].id, memory_store_id=sid),
           "redacting the head of a live memory is a 409")
    red = versions.redact(vs[2].id, memory_store_id=sid)
    check(red.redacted_at is not None and red.content is None and red.path is None
          and red.content_sha256 is None, "redaction wipes content, hash and path")
    check(red.redacted_by.api_key_id == "apikey_01sdktest" and red.created_by.api_key_id == "apikey_01sdktest",
          "redacted_by recorded, created_by kept")
    again = versions.retrieve(vs[2].id, memory_store_id=sid)
    check(again.redacted_at is not None and again.content is None, "a redacted version still retrieves (200)")

    # Delete with expected_content_sha256.
    expect(anthropic.ConflictError,
           lambda: memories.delete(fmt.id, memory_store_id=sid, expected_content_sha256=sha256("nope")),
           "delete with a stale hash is a 409")
    gone = memories.delete(fmt.id, memory_store_id=sid, expected_content_sha256=up.content_sha256)
    check(gone.id == fmt.id and gone.type == "memory_deleted", "delete tombstone")
    expect(anthropic.NotFoundError, lambda: memories.retrieve(fmt.id, memory_store_id=sid),
           "deleted memory is a 404")
    vs = list(versions.list(sid, memory_id=fmt.id))
    check(vs[0].operation == "deleted" and vs[0].content_sha256 is None, "deleted version, history kept")

    # Archive: reads work, writes are 400, hidden from the default listing.
    arch = stores.archive(sid)
    check(arch.archived_at is not None, "archive sets archived_at")
    check(stores.archive(sid).archived_at == arch.archived_at, "archive is idempotent")
    expect(anthropic.BadRequestError, lambda: memories.create(sid, path="/new.md", content="x"),
           "no new memories in an archived store")
    expect(anthropic.BadRequestError, lambda: stores.update(sid, name="x"), "no store update when archived")
    check(len(memories.list(sid).data) == 2, "archived store still reads")
    check(sid not in [s.id for s in stores.list()], "archived stores are hidden by default")
    check(sid in [s.id for s in stores.list(include_archived=True)], "include_archived=true shows them")

    # Errors and deletion.
    expect(anthropic.NotFoundError, lambda: stores.retrieve("memstore_doesnotexist"), "unknown store is a 404")
    deleted = stores.delete(sid)
    check(deleted.id == sid and deleted.type == "memory_store_deleted", "store tombstone")
    expect(anthropic.NotFoundError, lambda: stores.retrieve(sid), "deleted store is a 404")
    stores.delete(other.id)


def retries(base_url):
    """With the SDK's default retries (2), every deterministic 409 is sent once, and carries
    `x-should-retry: false` and its reason; a malformed precondition is a 400."""
    sent = []
    http = anthropic.DefaultHttpxClient(event_hooks={"request": [lambda r: sent.append((r.method, r.url.path))]})
    client = anthropic.Anthropic(base_url=base_url, api_key="sk-sdk-test-secret", http_client=http)
    check(client.max_retries == 2, f"the SDK's default retries: {client.max_retries}")
    stores = client.beta.memory_stores
    sid = stores.create(name="Retries").id
    m = stores.memories.create(sid, path="/a.md", content="x")
    stale = {"type": "content_sha256", "content_sha256": sha256("not x")}
    cases = [
        ("path conflict", lambda: stores.memories.create(sid, path="/a.md", content="y"), "path_conflict"),
        ("stale precondition",
         lambda: stores.memories.update(m.id, memory_store_id=sid, content="y", precondition=stale),
         "precondition_failed"),
        ("stale delete", lambda: stores.memories.delete(m.id, memory_store_id=sid,
                                                       expected_content_sha256=sha256("not x")),
         "precondition_failed"),
        ("redacting the head", lambda: stores.memory_versions.redact(m.memory_version_id, memory_store_id=sid),
         "head_version"),
    ]
    for what, call, reason in cases:
        sent.clear()
        e = expect(anthropic.ConflictError, call, what)
        check(len(sent) == 1, f"{what}: sent {len(sent)} times: {sent}")
        check(e.response.headers.get("x-should-retry") == "false", f"{what}: x-should-retry")
        check(error_of(e).get("reason") == reason, f"{what}: reason {error_of(e)}")
    for bad in [{"type": "etag", "content_sha256": m.content_sha256},
                {"content_sha256": m.content_sha256},
                {"type": "content_sha256", "content_sha256": m.content_sha256, "extra": 1}]:
        sent.clear()
        e = expect(anthropic.BadRequestError,
                   lambda: stores.memories.update(m.id, memory_store_id=sid, content="y", precondition=bad),
                   f"precondition {bad} is a 400")
        check("precondition" in error_of(e).get("message", ""), f"the message names the precondition: {e.body}")
        check(len(sent) == 1, f"a 400 is sent once: {sent}")
    check(stores.memories.retrieve(m.id, memory_store_id=sid).content == "x", "nothing was changed")
    stores.delete(sid)
    http.close()


def workspaces(base_url):
    """Stores are workspace-scoped. anthropic 2.14.0 has no workspace option for an API-key
    client (a credentials profile's `workspace_id` is only for OAuth and federation), so the
    client sets `anthropic-workspace-id` through `default_headers`, which the SDK keeps on
    every request: a store made in one workspace is not found, listed, read or written from
    another, nor from the default workspace (no header)."""
    def client(workspace=None):
        headers = {"anthropic-workspace-id": workspace} if workspace else None
        return anthropic.Anthropic(base_url=base_url, api_key=KEY, max_retries=0, default_headers=headers)
    a, b, default = client("wrkspc_01SdkTestA"), client("wrkspc_01SdkTestB"), client()
    sid = a.beta.memory_stores.create(name="Workspace A").id
    mem = a.beta.memory_stores.memories.create(sid, path="/a.md", content="A only")
    check(sid in [s.id for s in a.beta.memory_stores.list()], "listed in its own workspace")
    for name, other in [("another workspace", b), ("the default workspace", default)]:
        stores = other.beta.memory_stores
        check(sid not in [s.id for s in stores.list(include_archived=True)], f"not listed in {name}")
        expect(anthropic.NotFoundError, lambda: stores.retrieve(sid), f"not found from {name}")
        expect(anthropic.NotFoundError, lambda: stores.memories.retrieve(mem.id, memory_store_id=sid),
               f"its memory is not found from {name}")
        expect(anthropic.NotFoundError,
               lambda: stores.memories.update(mem.id, memory_store_id=sid, content="overwritten"),
               f"its memory cannot be written from {name}")
        expect(anthropic.NotFoundError, lambda: stores.delete(sid), f"it cannot be deleted from {name}")
    check(a.beta.memory_stores.memories.retrieve(mem.id, memory_store_id=sid).content == "A only",
          "unchanged in its own workspace")
    a.beta.memory_stores.delete(sid)


KEY = "sk-sdk-test-secret"


def start_server(memory, db, keys, extra=()):
    """A `memory serve` on a free loopback port: (process, base URL)."""
    server = subprocess.Popen(
        [memory, "serve", "--db", db, "--listen", "127.0.0.1:0", "--api-keys", keys, *extra],
        stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline().strip()
    prefix = "memory serve: listening on "
    if not line.startswith(prefix):
        server.kill()
        raise AssertionError(f"unexpected first line from memory serve: {line!r}")
    return server, line[len(prefix):]


def alternating_http(base_urls, hooks=None):
    """An httpx client for the SDK that sends each request to the next of `base_urls` in turn
    (all of them serve one database, so any may answer any request)."""
    try:
        import httpx2 as httpx  # what anthropic 2.x is built on
    except ImportError:
        import httpx

    turn = itertools.cycle(base_urls)
    lock = threading.Lock()

    class Transport(httpx.HTTPTransport):
        def handle_request(self, request):
            with lock:
                target = httpx.URL(next(turn))
            request.url = request.url.copy_with(host=target.host, port=target.port)
            request.headers["host"] = f"{target.host}:{target.port}"
            return super().handle_request(request)

    return anthropic.DefaultHttpxClient(transport=Transport(), event_hooks=hooks or {})


def races(base_urls, max_memories, killable):
    """What holds only with several instances on one database."""
    clients = [anthropic.Anthropic(base_url=u, api_key=KEY, max_retries=0) for u in base_urls]
    stores = clients[0].beta.memory_stores
    sid = stores.create(name="Races").id
    m = stores.memories.create(sid, path="/race.md", content="v0")
    pre = {"type": "content_sha256", "content_sha256": m.content_sha256}

    # 8 updates with the same precondition, spread over the instances: exactly one wins.
    def update(i):
        c = clients[i % len(clients)].beta.memory_stores.memories
        try:
            c.update(m.id, memory_store_id=sid, content=f"writer {i}", precondition=pre)
            return "won"
        except anthropic.ConflictError as e:
            check(error_of(e)["type"] == "memory_precondition_failed_error", f"a lost race is a precondition 409: {e.body}")
            return "lost"
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(update, range(8)))
    check(outcomes.count("won") == 1, f"8 racing updates, one precondition: exactly one wins: {outcomes}")
    vs = list(stores.memory_versions.list(sid, memory_id=m.id))
    check(len(vs) == 2, f"one new version: {[v.operation for v in vs]}")

    # Creates racing at the limit, over every instance: exactly the limit.
    lim = stores.create(name="Limit").id
    short = 12
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: clients[i % len(clients)].beta.memory_stores.memories.create(
            lim, path=f"/fill/{i:05}.md", content="x"), range(max_memories - short)))

    def create(i):
        c = clients[i % len(clients)].beta.memory_stores.memories
        try:
            c.create(lim, path=f"/race/{i:03}.md", content="x")
            return "made"
        except anthropic.BadRequestError as e:
            check(error_of(e).get("reason") == "store_full", f"over the limit: store_full: {e.body}")
            return "full"
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        outcomes = list(pool.map(create, range(3 * short)))
    check(outcomes.count("made") == short, f"creates racing at the limit: {outcomes.count('made')} made, not {short}")
    total = sum(1 for _ in stores.memories.list(lim, limit=100))
    check(total == max_memories, f"the store holds exactly the limit: {total} != {max_memories}")
    stores.delete(lim)

    # SIGKILL of an instance in the middle of writes: every 200 it gave is there, nothing is
    # half written (each memory's head version exists with the memory's hash and path).
    server, url = killable()
    victim = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0, timeout=10)
    ks = stores.create(name="Killed").id
    answered, stop = [], threading.Event()

    def writer(w):
        i = 0
        while not stop.is_set():
            try:
                mem = victim.beta.memory_stores.memories.create(ks, path=f"/w{w}/{i}.md", content=f"{w}-{i}" * 50)
                answered.append(("create", mem.id, mem.content_sha256))
                up = victim.beta.memory_stores.memories.update(
                    mem.id, memory_store_id=ks, content=f"{w}-{i} changed" * 50,
                    precondition={"type": "content_sha256", "content_sha256": mem.content_sha256})
                answered.append(("update", up.id, up.content_sha256))
            except (anthropic.APIConnectionError, anthropic.APIStatusError):
                return
            i += 1
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    # Killed while its writers are busy, once it has answered some.
    deadline = time.monotonic() + 30
    while len(answered) < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=10)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    check(len(answered) >= 20, f"the killed instance answered writes before it died: {len(answered)}")
    survivors = {}
    for item in stores.memories.list(ks, limit=100):
        full = stores.memories.retrieve(item.id, memory_store_id=ks)
        check(full.content_sha256 == sha256(full.content), f"{full.path}: content and hash agree")
        head = stores.memory_versions.retrieve(full.memory_version_id, memory_store_id=ks)
        check(head.memory_id == full.id and head.content_sha256 == full.content_sha256
              and head.path == full.path and head.content == full.content,
              f"{full.path}: the head version is whole")
        survivors[full.id] = full.content_sha256
    for op, mid, sha in answered:
        check(mid in survivors, f"a {op} answered 200 survived the SIGKILL: {mid}")
    final = {mid: sha for op, mid, sha in answered if op == "update"}
    for mid, sha in final.items():
        check(survivors[mid] == sha, f"an update answered 200 survived the SIGKILL: {mid}")
    for v in stores.memory_versions.list(ks, limit=100):
        check(v.memory_id in survivors, f"no version without its memory: {v.id}")
    stores.delete(ks)
    stores.delete(sid)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memory", required=True, help="the memory binary")
    ap.add_argument("--db", help="the database of every instance (default: a new SQLite file)")
    ap.add_argument("--instances", type=int, default=1, help="how many `memory serve` on --db")
    ap.add_argument("--max-memories", type=int, default=2000, help="--max-memories-per-store of the instances")
    args = ap.parse_args()
    if args.instances > 1 and not args.db:
        ap.error("--instances above 1 needs --db (a database the instances share)")
    with tempfile.TemporaryDirectory() as tmp:
        keys = os.path.join(tmp, "keys.txt")
        with open(keys, "w") as f:
            f.write("# test key\napikey_01sdktest sk-sdk-test-secret\n")
        db = args.db or os.path.join(tmp, "stores.db")
        extra = ["--max-memories-per-store", str(args.max_memories)]
        servers = []
        try:
            for _ in range(args.instances):
                servers.append(start_server(args.memory, db, keys, extra))
            urls = [u for _, u in servers]
            bad = anthropic.Anthropic(base_url=urls[0], api_key="wrong", max_retries=0)
            expect(anthropic.AuthenticationError, lambda: bad.beta.memory_stores.list(), "a wrong key is a 401")
            client = anthropic.Anthropic(base_url=urls[0], api_key=KEY, max_retries=0,
                                         http_client=alternating_http(urls))
            run(client)
            retries(urls[0])
            workspaces(urls[0])
            if args.instances > 1:
                killed = []

                def killable():
                    killed.append(start_server(args.memory, db, keys, extra))
                    return killed[-1]
                races(urls, args.max_memories, killable)
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
    print(f"stores-sdk: {CHECKS} checks passed with anthropic {anthropic.__version__} ({where})")


if __name__ == "__main__":
    main()
