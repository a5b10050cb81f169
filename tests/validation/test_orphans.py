"""Issue 21: ``splitopt validate --jobs 2`` killed with SIGKILL left its forkserver and pool workers
alive forever. Each test starts a validation in a subprocess, kills it with SIGKILL once its pool is
running, and checks that every process it had started is gone within a few seconds."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of ``pid``, None if it does not exist."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return None
    rest = raw[raw.rindex(b")") + 2:].split()
    return int(rest[1]), rest[0].decode()


def _descendants(root: int) -> set[int]:
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(int(d))
            if st is not None:
                parent[int(d)] = st[0]
    out, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in out}
        out |= frontier
    return out


def _living(pids) -> set[int]:
    return {p for p in pids if (st := _stat(p)) is not None and st[1] not in ("Z", "X")}


def _kill_and_watch(cmd: list[str], tmp_path, min_children: int) -> tuple[set[int], set[int]]:
    """Start ``cmd``, wait for its pool, SIGKILL it; returns ``(children seen, survivors 10 s later)``."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: set[int] = set()
    try:
        end = time.monotonic() + 120  # start-up on a loaded machine; not a speed assertion
        while time.monotonic() < end and proc.poll() is None:
            children = _living(_descendants(proc.pid))
            if len(children) >= min_children:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the validation ended before its pool was seen"
        assert len(children) >= min_children, children
        time.sleep(1.0)  # the workers are inside their first tasks
        children |= _living(_descendants(proc.pid))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        end = time.monotonic() + 10
        while _living(children) and time.monotonic() < end:
            time.sleep(0.2)
        return set(children), _living(children)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in _living(children):  # clean up what this test started, if the check failed
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_killed_cli_validate_leaves_no_process(tmp_path):
    """The command as users run it (its pool uses the forkserver: forkserver + 2 workers + the
    resource tracker)."""
    cmd = [sys.executable, "-m", "splitopt.cli", "validate", "quick", "--jobs", "2", "--store",
           str(tmp_path / "runs.sqlite"), "--quiet"]
    children, survivors = _kill_and_watch(cmd, tmp_path, min_children=4)
    assert len(children) >= 4
    assert not survivors, f"processes outlived the killed validation: {sorted(survivors)}"


FORK_SCRIPT = """
from splitopt.validation import run_validation
run_validation("quick", jobs=2, store={store!r}, progress=False, mp_context="fork")
"""


@pytest.mark.slow
def test_killed_fork_pool_leaves_no_process(tmp_path):
    """The ``fork`` start method: the workers are the driver's own children."""
    cmd = [sys.executable, "-c", FORK_SCRIPT.format(store=str(tmp_path / "runs.sqlite"))]
    children, survivors = _kill_and_watch(cmd, tmp_path, min_children=2)
    assert len(children) >= 2
    assert not survivors, f"processes outlived the killed validation: {sorted(survivors)}"
