"""The Python SDK's memory-tool interface, answered by `memory exec` instead of the SDK's own code.

`MemoryExecTool` and `AsyncMemoryExecTool` take the constructor and attributes of the SDK's
`BetaLocalFilesystemMemoryTool` / `BetaAsyncLocalFilesystemMemoryTool` (`base_path`,
`memory_root = base_path / "memories"`) and subclass the SDK's abstract memory tools, so the
SDK's dispatch (`call`, `execute`) runs unchanged. Each command is sent as one JSON line to a
long-running `memory exec --store file:BASE_PATH` process; an answer with `is_error: true`
raises the SDK's `ToolError` with the answer's content, anything else is returned as it came
(a string, or the image content blocks).

The binary is `$MEMORY_BIN`. With `$SDK_SUITES_LOG` set, every exchange is appended to that
file as one JSON line (`{"test": ..., "sent": ..., "got": ...}`, strings over 2,000 characters cut), for repros.
"""

from __future__ import annotations

import os
import json
import select
import weakref
import subprocess
from typing import Any, List, Optional
from pathlib import Path

from anyio import Path as AsyncPath
from anyio.to_thread import run_sync

from anthropic.lib.tools._beta_functions import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import (
    BetaAbstractMemoryTool,
    BetaAsyncAbstractMemoryTool,
)

ANSWER_TIMEOUT_S = float(os.environ.get("SDK_SUITES_TIMEOUT", "60"))
LOG_VALUE_MAX = 2000

# Every process started, so the plugin can stop those a test left running.
_LIVE: "weakref.WeakSet[MemoryExecProcess]" = weakref.WeakSet()


class AdapterError(RuntimeError):
    """The `memory exec` process misbehaved (died, hung, or answered something that is not a result)."""


def memory_bin() -> str:
    """The `memory` binary under test, from `$MEMORY_BIN`."""
    path = os.environ.get("MEMORY_BIN")
    if not path:
        raise AdapterError("set MEMORY_BIN to the `memory` binary under test")
    return path


def _current_test() -> Optional[str]:
    return os.environ.get("PYTEST_CURRENT_TEST")


def _shorten(value: Any) -> Any:
    """`value` with strings over LOG_VALUE_MAX characters cut, for the exchange log."""
    if isinstance(value, str) and len(value) > LOG_VALUE_MAX:
        return f"{value[:LOG_VALUE_MAX]}...({len(value)} chars)"
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    return value


class MemoryExecProcess:
    """One `memory exec --store file:BASE` child: one JSON line in, one JSON line out."""

    def __init__(self, base_path: str) -> None:
        self.base_path = base_path
        self._buf = b""
        self.proc = subprocess.Popen(
            [memory_bin(), "exec", "--store", f"file:{base_path}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        _LIVE.add(self)

    def exchange(self, request: Any) -> Any:
        """Send `request` (JSON-serializable) as one line; return the decoded answer line."""
        line = json.dumps(request, ensure_ascii=False)
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError as err:
            raise AdapterError(f"memory exec exited with status {self.proc.wait()}") from err
        answer = json.loads(self._read_line())
        log = os.environ.get("SDK_SUITES_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                entry = {"test": _current_test(), "sent": _shorten(request), "got": _shorten(answer)}
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")
        return answer

    def _read_line(self) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            ready, _, _ = select.select([fd], [], [], ANSWER_TIMEOUT_S)
            if not ready:
                raise AdapterError(f"memory exec gave no answer within {ANSWER_TIMEOUT_S}s")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise AdapterError(f"memory exec closed its output (exit status {self.proc.wait()})")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def close(self) -> None:
        """End input and wait for the child; kill it if it does not exit."""
        if self.proc.poll() is not None:
            return
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def close_all() -> None:
    """Stop every `memory exec` child still running."""
    for p in list(_LIVE):
        p.close()


def _to_input(command: Any) -> Any:
    """The command model as the JSON object Claude would have sent (only the fields set)."""
    if hasattr(command, "to_dict"):
        return command.to_dict()
    if hasattr(command, "model_dump"):
        return command.model_dump(exclude_unset=True)
    return dict(command)


def _result(answer: Any) -> Any:
    if not isinstance(answer, dict) or "content" not in answer or "is_error" not in answer:
        raise AdapterError(f"not a result line: {answer!r}")
    content = answer["content"]
    if answer["is_error"]:
        raise ToolError(content)
    return content


class _Core:
    """What the sync and async adapters share: the child process, started on first need."""

    base_path_str: str
    _process: Optional[MemoryExecProcess] = None

    def _proc(self) -> MemoryExecProcess:
        if self._process is None or self._process.proc.poll() is not None:
            self._process = MemoryExecProcess(self.base_path_str)
            # The store opens (creating base_path/memories) before the first line is read;
            # a read-only view waits for that, so the folders exist when the caller returns.
            _result(self._process.exchange({"command": "view", "path": "/memories"}))
        return self._process

    def _run(self, command: Any) -> Any:
        return _result(self._proc().exchange(_to_input(command)))

    def close(self) -> None:
        """Stop this tool's `memory exec` process."""
        if self._process is not None:
            self._process.close()


class MemoryExecTool(_Core, BetaAbstractMemoryTool):
    """`BetaLocalFilesystemMemoryTool`'s interface over `memory exec --store file:BASE_PATH`."""

    def __init__(self, base_path: str = "./memory") -> None:
        super().__init__()
        self.base_path = Path(base_path)
        self.memory_root = self.base_path / "memories"
        self.base_path_str = str(base_path)
        # The SDK tool creates its folders in the constructor: so does this one.
        self._proc()

    def view(self, command: Any) -> Any:  # type: ignore[override]
        return self._run(command)

    def create(self, command: Any) -> Any:  # type: ignore[override]
        return self._run(command)

    def str_replace(self, command: Any) -> Any:  # type: ignore[override]
        return self._run(command)

    def insert(self, command: Any) -> Any:  # type: ignore[override]
        return self._run(command)

    def delete(self, command: Any) -> Any:  # type: ignore[override]
        return self._run(command)

    def rename(self, command: Any) -> Any:  # type: ignore[override]
        return self._run(command)


class AsyncMemoryExecTool(_Core, BetaAsyncAbstractMemoryTool):
    """`BetaAsyncLocalFilesystemMemoryTool`'s interface over `memory exec --store file:BASE_PATH`.

    Like the SDK's async tool, the folders come into being on first use (or `_ensure_memory_root`).
    """

    def __init__(self, base_path: str = "./memory") -> None:
        super().__init__()
        self.base_path = AsyncPath(base_path)
        self.memory_root = self.base_path / "memories"
        self.base_path_str = str(base_path)

    async def _ensure_memory_root(self) -> None:
        """The SDK's lazy folder creation: here, starting the process (which opens the store)."""
        await run_sync(self._proc)

    async def _arun(self, command: Any) -> Any:
        return await run_sync(self._run, command)

    async def view(self, command: Any) -> Any:  # type: ignore[override]
        return await self._arun(command)

    async def create(self, command: Any) -> Any:  # type: ignore[override]
        return await self._arun(command)

    async def str_replace(self, command: Any) -> Any:  # type: ignore[override]
        return await self._arun(command)

    async def insert(self, command: Any) -> Any:  # type: ignore[override]
        return await self._arun(command)

    async def delete(self, command: Any) -> Any:  # type: ignore[override]
        return await self._arun(command)

    async def rename(self, command: Any) -> Any:  # type: ignore[override]
        return await self._arun(command)


__all__: List[str] = ["MemoryExecTool", "AsyncMemoryExecTool", "AdapterError", "close_all"]
