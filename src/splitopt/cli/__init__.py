"""The ``splitopt`` command.

User errors (bad files, bad options, unknown names, infeasible inputs) print one line
``splitopt: error: <field path>: <message>`` and exit with status 2; never a traceback.

Commands live in one module per group (``graphs``, ``solve``, ``checks``); each module has an
``add_parsers(sub)`` that declares its sub-commands. A new command group is a new module plus one
entry in ``COMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from splitopt.errors import SplitoptError

COMMAND_MODULES = ("graphs", "solve", "checks", "pytorch")

#: the command being parsed (``None``: all of them, e.g. for documentation); see :func:`wants`
_COMMAND: str | None = None


def wants(command: str) -> bool:
    """Whether ``command``'s full parser is needed now. A command module adds arguments that cost
    imports (the families' options of ``make`` and ``solve``) only when this is true, so
    ``splitopt --help`` and the other commands start without importing the families, numpy or a
    solver (cold start, issue 24)."""
    return _COMMAND is None or _COMMAND == command


def _command_of(argv: Sequence[str] | None) -> str | None:
    args = sys.argv[1:] if argv is None else list(argv)
    return next((a for a in args if not a.startswith("-")), "")


def build_parser(argv: Sequence[str] | None = None, *, full: bool = True) -> argparse.ArgumentParser:
    """The ``splitopt`` parser. With ``full=False`` only the command named in ``argv`` gets its
    family-dependent arguments (what :func:`main` does)."""
    global _COMMAND
    from splitopt import __version__

    _COMMAND = None if full else _command_of(argv)

    p = argparse.ArgumentParser(prog="splitopt", description="Optimal splitting of DNNs across devices: "
                                "exact models, fast algorithms, audited papers.")
    p.add_argument("--version", action="version", version=f"splitopt {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"splitopt.cli.{name}").add_parsers(sub)
    _show_defaults(p)
    return p


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends ``(default: X)`` where it says something: not for ``None``/``False`` defaults (an
    unset option, an off flag) nor where the help text already names its default."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default in (None, False) or "default" in text.lower():
            return text
        return super()._get_help_string(action)


def _show_defaults(parser) -> None:
    """Every command's help shows each option's default (where it has one worth showing)."""
    parser.formatter_class = _DefaultsFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _show_defaults(sub)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser(argv, full=False)
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except SplitoptError as exc:
        print(f"splitopt: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:  # an instance (or a model built from it) too large for the memory available
        print("splitopt: error: out of memory (the input is too large for this machine's memory limit)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("splitopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # pragma: no cover - e.g. `splitopt zoo show x | head`
        return 0
    except OSError as exc:  # a file the user named cannot be written or read (permissions, disk full, ...)
        where = exc.filename if exc.filename is not None else ""
        print(f"splitopt: error: {where}{': ' if where else ''}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
