"""Imported by the process pool's forkserver (``set_forkserver_preload``): the forkserver dies with
the driver that started it (see :mod:`splitopt.validation.lifeline`). Only the kernel's parent-death
signal, no watcher thread: the forkserver forks the workers and must stay single-threaded."""

from splitopt.validation.lifeline import set_pdeathsig

set_pdeathsig()
