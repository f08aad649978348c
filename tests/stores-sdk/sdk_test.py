#!/usr/bin/env python3
"""Drive `memory serve` with the official Python SDK (anthropic==2.14.0), a client no one here wrote.

    python3 tests/stores-sdk/sdk_test.py --memory target/debug/memory

Runs in the oracle's venv (tests/oracle/setup.sh makes it when missing; ORACLE_VENV picks
where). Starts `memory serve` on a loopback port with a fresh database and an API key file,
then uses client.beta.memory_stores, .memories and .memory_versions: create, list with depth=1,
update with a precondition (stale: ConflictError), rename, delete, versions listing, redact,
archive. A client with the SDK's default retries sends each deterministic 409 once (the server
says `x-should-retry: false`). Stops the server with SIGTERM and checks it exits cleanly. Exit 0
when all pass.
"""

import argparse
import hashlib
import os
import signal
import subprocess
import sys
import tempfile

SDK_VERSION = "2.14.0"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def ensure_sdk():
    """Re-exec inside the oracle venv unless this interpreter already has the pinned SDK."""
    try:
        import importlib.metadata as m

        if m.version("anthropic") == SDK_VERSION:
            return
    except Exception:
        pass
    venv = os.environ.get("ORACLE_VENV", os.path.expanduser("~/.cache/memory-oracle/py"))
    py = os.path.join(venv, "bin", "python")
    if os.environ.get("STORES_SDK_REEXEC"):
        sys.exit(f"anthropic=={SDK_VERSION} is not importable from {py}")
    subprocess.run(["bash", os.path.join(REPO, "tests", "oracle", "setup.sh")], check=True,
                   stdout=sys.stderr)
    os.environ["STORES_SDK_REEXEC"] = "1"
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memory", required=True, help="the memory binary")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        keys = os.path.join(tmp, "keys.txt")
        with open(keys, "w") as f:
            f.write("# test key\napikey_01sdktest sk-sdk-test-secret\n")
        server = subprocess.Popen(
            [args.memory, "serve", "--db", os.path.join(tmp, "stores.db"),
             "--listen", "127.0.0.1:0", "--api-keys", keys],
            stdout=subprocess.PIPE, text=True)
        try:
            line = server.stdout.readline().strip()
            prefix = "memory serve: listening on "
            if not line.startswith(prefix):
                raise AssertionError(f"unexpected first line from memory serve: {line!r}")
            base_url = line[len(prefix):]
            bad = anthropic.Anthropic(base_url=base_url, api_key="wrong", max_retries=0)
            expect(anthropic.AuthenticationError, lambda: bad.beta.memory_stores.list(), "a wrong key is a 401")
            client = anthropic.Anthropic(base_url=base_url, api_key="sk-sdk-test-secret", max_retries=0)
            run(client)
            retries(base_url)
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                code = server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                raise AssertionError("memory serve did not stop on SIGTERM")
        check(code == 0, f"memory serve exits 0 on SIGTERM (got {code})")
    print(f"stores-sdk: {CHECKS} checks passed with anthropic {anthropic.__version__}")


if __name__ == "__main__":
    main()
