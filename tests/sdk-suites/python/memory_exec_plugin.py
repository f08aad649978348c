"""pytest plugin: the SDK's memory-tool tests run against `memory exec` (load with `-p memory_exec_plugin`).

Loaded before collection, it replaces `BetaLocalFilesystemMemoryTool` and
`BetaAsyncLocalFilesystemMemoryTool` in the SDK module the tests import them from, so the
unmodified test file gets the adapters of `memory_exec_tool`. After each test it stops the
`memory exec` processes that test started.

`SDK_SUITES_HIDE_STORE_FILES=1` (diagnostic only, never the reported result) makes the tests'
`get_directory_snapshot` leave out the folder store's bookkeeping beside `memories/`
(`.memories.lock`, `.memories.count`, `.memory-tmp/`), to see what else a test would find.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterator

import pytest

import anthropic.lib.tools._beta_builtin_memory_tool as sdk_memory
import memory_exec_tool

sdk_memory.BetaLocalFilesystemMemoryTool = memory_exec_tool.MemoryExecTool  # type: ignore[misc]
sdk_memory.BetaAsyncLocalFilesystemMemoryTool = memory_exec_tool.AsyncMemoryExecTool  # type: ignore[misc]

STORE_FILES = (".memories.lock", ".memories.count")
STORE_DIRS = (".memory-tmp",)


def _hide_store_files(snapshot: Dict[str, str]) -> Dict[str, str]:
    def kept(rel: str) -> bool:
        first = rel.split(os.sep, 1)[0]
        return rel not in STORE_FILES and first not in STORE_DIRS

    return {k: v for k, v in snapshot.items() if kept(k)}


@pytest.fixture(autouse=True)
def _memory_exec_session(request: pytest.FixtureRequest) -> Iterator[None]:
    module: Any = request.module
    original = getattr(module, "get_directory_snapshot", None)
    if original is not None and os.environ.get("SDK_SUITES_HIDE_STORE_FILES") == "1":
        module.get_directory_snapshot = lambda base: _hide_store_files(original(base))
    try:
        yield
    finally:
        if original is not None:
            module.get_directory_snapshot = original
        memory_exec_tool.close_all()


def pytest_report_header(config: pytest.Config) -> str:
    return f"memory tool under test: memory exec ({os.environ.get('MEMORY_BIN', 'MEMORY_BIN unset')})"
