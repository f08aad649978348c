"""The pinned official Python SDK for the stores-sdk checks: a check script calls
ensure_sdk() before importing anthropic, and is re-executed inside the oracle venv
(tests/oracle/setup.sh installs it) unless this interpreter already has that version."""

import os
import subprocess
import sys

SDK_VERSION = "2.14.0"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def ensure_sdk():
    """Re-exec the running script inside the oracle venv unless anthropic==SDK_VERSION is
    importable here."""
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
    script = os.path.abspath(sys.argv[0])
    os.execv(py, [py, script] + sys.argv[1:])
