"""The ``dpselect`` command line (``dpselect demo``), and the driver the reproductions' command reuses.

User errors never end in a traceback: a bad option value, a missing or misplaced data directory, a
file that cannot be read or written, or an argument the library rejects is reported as **one line**
on stderr, ``dpselect <command>: error: <what is wrong>; <what to do>``, with exit status 2 (130 when
interrupted). Set ``DPSELECT_TRACEBACK=1`` to get the full traceback instead (for bug reports).
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from ._version import __version__
from .datasets import DATA_SUBDIRS, data_root

__all__ = ["main", "COMMANDS", "USAGE_ERROR", "UsageError"]

# Commands: name -> module providing DESCRIPTION, add_arguments(parser), run(args) -> int.
COMMANDS: dict[str, str] = {"demo": "dpselect.demo"}

#: Exit status of every user error (the argparse convention).
USAGE_ERROR = 2


class UsageError(Exception):
    """A user error found by the command line itself (reported as one ``error:`` line, exit 2).

    Parameters
    ----------
    *args
        The message, as for :class:`Exception`: what is wrong, naming the option and the value.

    Examples
    --------
    >>> raise UsageError("--k must be an int >= 1, got 0")
    Traceback (most recent call last):
    ...
    dpselect.cli.UsageError: --k must be an int >= 1, got 0
    """


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``prog: error: message (see 'prog --help')``, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _build_parser(prog: str, commands: Mapping[str, str], description: str) -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"dpselect {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, modname in commands.items():
        mod = importlib.import_module(modname)
        p = sub.add_parser(name, help=mod.DESCRIPTION, description=mod.DESCRIPTION)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run, _prog=p.prog)
    parser.set_defaults(_missing=f"{prog}: error: a COMMAND is required, one of {', '.join(commands)} "
                                 f"(see '{prog} --help')")
    return parser


# -- checks of the options every command shares ----------------------------------------------------
def _positive(value: object, flag: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise UsageError(f"{flag} must be a finite number > 0, got {value!r}")


def _int_at_least(value: object, flag: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UsageError(f"{flag} must be an int >= {minimum}, got {value!r}")


def _check_common_options(args: argparse.Namespace) -> None:
    """Options with the same meaning in every command, checked before any work starts."""
    if getattr(args, "epsilon", None) is not None:
        _positive(args.epsilon, "--epsilon")
    if getattr(args, "epsilons", None) is not None:
        eps = list(args.epsilons)
        if not eps:
            raise UsageError("--epsilons must list at least one privacy budget, got none")
        for e in eps:
            _positive(e, "--epsilons entries")
    for name, minimum in (("k", 1), ("runs", 1), ("jobs", 1), ("seed", 0)):
        value = getattr(args, name, None)
        if value is not None:
            _int_at_least(value, f"--{name}", minimum)
    if getattr(args, "ks", None) is not None:
        if not list(args.ks):
            raise UsageError("--ks must list at least one k, got none")
        for k in args.ks:
            _int_at_least(k, "--ks entries", 1)


# -- turning exceptions into one line ----------------------------------------------------------------
def _looks_like_data_root(p: Path) -> bool:
    return any((p / s).is_dir() for s in DATA_SUBDIRS)


def _data_hint() -> str:
    """What to do about a missing data file: diagnose ``DPSELECT_DATA`` or the default lookup."""
    env = os.environ.get("DPSELECT_DATA")
    need = "the directory holding " + ", ".join(f"{s}/" for s in DATA_SUBDIRS)
    if env:
        p = Path(env).expanduser()
        if not p.exists():
            return f"DPSELECT_DATA={env} does not exist: set DPSELECT_DATA to {need}"
        if not p.is_dir():
            return f"DPSELECT_DATA={env} is a file, not a directory: set DPSELECT_DATA to {need}"
        if _looks_like_data_root(p):
            return (f"DPSELECT_DATA={env} is a data directory but lacks this file: restore it there, or set "
                    f"DPSELECT_DATA to a complete copy")
        below = [p / "datasets", p / "shared" / "datasets"]
        try:
            below += sorted(c for c in p.iterdir() if c.is_dir())
        except OSError:  # unreadable directory: the diagnosis falls back to the two standard places
            pass
        for cand in below:
            if cand.is_dir() and _looks_like_data_root(cand):
                return f"DPSELECT_DATA={env} points one level too high: set DPSELECT_DATA={cand}"
        if p.name in DATA_SUBDIRS and _looks_like_data_root(p.parent):
            return f"DPSELECT_DATA={env} points one level too low: set DPSELECT_DATA={p.parent}"
        return f"DPSELECT_DATA={env} holds none of {', '.join(DATA_SUBDIRS)}: set DPSELECT_DATA to {need}"
    try:
        root = data_root()
    except FileNotFoundError:
        return f"set DPSELECT_DATA to {need}"
    return f"the data directory found is {root}: restore the file there, or set DPSELECT_DATA to {need}"


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _describe(exc: BaseException) -> str | None:
    """One line for a user error, or None for an exception that is a bug (traceback kept)."""
    if isinstance(exc, UsageError):
        return str(exc)
    if isinstance(exc, ImportError) and (exc.name or "").split(".")[0] == "matplotlib":
        return "PNG figures need matplotlib, which is not installed: pip install dpselect[plot]"
    if isinstance(exc, (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError)):
        if exc.filename is None:  # raised by dpselect's loaders with their own message
            msg = _one_line(exc)
            if "DPSELECT_DATA" in msg:
                return msg
            if "dataset" in msg.lower():  # a file of the shared data directory (datasets.data_path)
                return f"{msg}; {_data_hint()}"
            return f"{msg}; check the path given on the command line"
        target = exc.filename if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
        what = {FileNotFoundError: "no such file or directory", NotADirectoryError: "a parent is not a directory",
                IsADirectoryError: "is a directory", PermissionError: "permission denied"}.get(type(exc), exc.strerror)
        return f"cannot use {target}: {what}; check the path given on the command line"
    if isinstance(exc, OSError):
        return f"{_one_line(exc)}; check the paths given on the command line and the free disk space"
    if isinstance(exc, ValueError):
        # dpselect's public entry points check their arguments with messages naming parameter, value, rule;
        # option values reach them already typed by argparse, so a TypeError here is a bug (traceback kept)
        return _one_line(exc)
    return None


def main(argv: list[str] | None = None, *, prog: str = "dpselect", commands: Mapping[str, str] = COMMANDS,
         description: str = "Differentially private selection.") -> int:
    """Run the command line; returns the exit status (0 success, 2 user error, 130 interrupted).

    A user error is printed as one line on stderr, ``dpselect <command>: error: ...``; set
    ``DPSELECT_TRACEBACK=1`` for the traceback instead.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; None reads ``sys.argv[1:]``.
    prog : str
        The program name of the usage and error lines.
    commands : mapping of str to str
        Command name -> module providing ``DESCRIPTION``, ``add_arguments(parser)`` and ``run(args)``
        (default :data:`COMMANDS`; the reproductions' ``dpselect-reproduce`` passes its own).
    description : str
        The first line of ``--help``.

    Returns
    -------
    int
        The exit status: 0 on success, :data:`USAGE_ERROR` (2) for a user error, 130 when interrupted.

    Examples
    --------
    >>> main([])                      # no command: one error line on stderr
    2
    >>> main(["demo", "--k", "0"])    # refused before any work starts
    2
    """
    parser = _build_parser(prog, commands, description)
    args = parser.parse_args(argv)
    if not hasattr(args, "_run"):
        print(args._missing, file=sys.stderr)
        return USAGE_ERROR
    prog = getattr(args, "_prog", prog)
    try:
        _check_common_options(args)
        return int(args._run(args) or 0)
    except SystemExit as exc:
        if not isinstance(exc.code, str):  # an explicit exit status: kept as it is
            raise
        # commands report option errors as SystemExit("error: ..."): same one-line form, exit status 2
        text = _one_line(exc.code)
        text = text[len("error:"):].strip() if text.lower().startswith("error:") else text
        print(f"{prog}: error: {text}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `dpselect demo | head`: the reader left, nothing to report
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:  # no devnull: Python may print one "Exception ignored" line at exit, nothing worse
            pass
        return 0
    except Exception as exc:
        line = _describe(exc)
        if line is None or os.environ.get("DPSELECT_TRACEBACK"):
            raise
        print(f"{prog}: error: {line}", file=sys.stderr)
        return USAGE_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
