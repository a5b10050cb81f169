"""Worker processes that die with their parent (issue 21: ``splitopt validate --jobs 2`` killed with
SIGKILL left its forkserver and pool workers alive forever, about 175 MB each).

A killed driver cannot clean up, so each child watches its parent itself, two ways:

* Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (through ``ctypes``): the kernel kills the child the
  moment the thread that forked it ends. The pool's forkserver and workers are forked by a main
  thread, which ends only with its process;
* a daemon thread that polls every :data:`POLL_SECONDS` and ends the process when its parent has
  changed (re-parented to init or a subreaper) or when the *driver* (the process that created the
  pool; under ``forkserver`` the workers' parent is the forkserver, not the driver) is gone or a
  zombie: the fallback where ``prctl`` is missing (other POSIX systems) or was armed too late.

:func:`die_with_parent` is the pool's ``initializer``; the forkserver (which forks the workers under
the ``forkserver`` start method) imports :mod:`splitopt.validation._forkserver_lifeline`, which sets
only the ``prctl`` part (a forking process must not run a second thread).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

#: seconds between two looks at the parent process id (watcher thread)
POLL_SECONDS = 0.5
PR_SET_PDEATHSIG = 1


def set_pdeathsig(sig: int = signal.SIGKILL) -> bool:
    """Ask the Linux kernel to send ``sig`` to this process when its parent ends; False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def pool_context(method: str):
    """The multiprocessing context of ``method`` whose forkserver (if any) dies with its driver."""
    import multiprocessing

    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        mods = ["__main__", "splitopt.validation._forkserver_lifeline"]
        ctx.set_forkserver_preload(mods)
    return ctx


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a killed driver stays a zombie until its
    own parent reaps it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (not Linux): signal 0 tests existence only
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _orphaned(parent: int, driver: int | None) -> bool:
    return os.getppid() != parent or (driver is not None and driver != parent and not alive(driver))


def _watch(parent: int, driver: int | None) -> None:
    while True:
        time.sleep(POLL_SECONDS)
        if _orphaned(parent, driver):
            os._exit(1)


def die_with_parent(driver: int | None = None, *, watcher: bool = True) -> None:
    """End this process when its parent, or ``driver`` (a pid further up), ends. Exits at once if
    either is already gone (it died before this ran). Never raises: a pool initializer that raises
    breaks the pool."""
    try:
        parent = os.getppid()
        set_pdeathsig()
        if parent == 1 or _orphaned(parent, driver):
            os._exit(1)
        if watcher:
            threading.Thread(target=_watch, args=(parent, driver), name="splitopt-lifeline", daemon=True).start()
    except Exception:  # pragma: no cover - best effort
        pass


__all__ = ["die_with_parent", "set_pdeathsig", "alive", "POLL_SECONDS", "pool_context"]
