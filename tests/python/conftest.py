"""Shared fixtures of the Python module's tests (run by ctest: tests/CMakeLists.txt sets PYTHONPATH to
the build's python/ folder and STEPSIM_BINARY to the command line built beside it)."""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Child Python processes (the interrupt driver, the docs example) run in other folders: the module's
# folder on PYTHONPATH must not be relative.
os.environ["PYTHONPATH"] = os.pathsep.join(
    os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)


def stepsim_binary() -> str:
    return os.environ.get("STEPSIM_BINARY", str(ROOT / "build" / "stepsim"))


def cli_json(*args: str) -> dict:
    """What `stepsim ARGS --json --quiet` prints, parsed (run from the checkout's root)."""
    out = subprocess.run([stepsim_binary(), *args, "--json", "--quiet"], cwd=ROOT, check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return json.loads(out.stdout)


def cli_error(*args: str) -> str:
    """The one error line `stepsim ARGS` prints, checking it exits with code 2."""
    out = subprocess.run([stepsim_binary(), *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert out.returncode == 2, out.stderr
    return out.stderr.strip()


def without_wall_time(report: dict) -> dict:
    """A simulate report less the one measurement in it (the replay's wall seconds)."""
    report = json.loads(json.dumps(report))
    del report["sim"]["wall_s"]
    return report


@pytest.fixture
def scratch():
    """A private folder (mkdtemp), removed with everything in it afterwards."""
    with tempfile.TemporaryDirectory(prefix="stepsim-pytest-") as d:
        yield Path(d)


@pytest.fixture(autouse=True)
def in_root(monkeypatch):
    """Every test runs from the checkout's root, as the README's commands do."""
    monkeypatch.chdir(ROOT)
