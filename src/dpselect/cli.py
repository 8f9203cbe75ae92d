"""The ``dpselect`` command line: demos and reproductions of the papers' experiments."""
from __future__ import annotations

import argparse
import importlib
import sys

from .experiments import REPRODUCTIONS

# Extra top-level commands: name -> module providing DESCRIPTION, add_arguments(parser), run(args) -> int.
COMMANDS: dict[str, str] = {
    "demo": "dpselect.demo",
    "binary-demo": "dpselect.binary_demo",
}


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="dpselect", description="Differentially private selection.")
    parser.add_argument("--version", action="version", version=f"dpselect {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, modname in COMMANDS.items():
        mod = importlib.import_module(modname)
        p = sub.add_parser(name, help=mod.DESCRIPTION, description=mod.DESCRIPTION)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    rep = sub.add_parser("reproduce", help="reproduce a table or figure of the papers",
                         description="Reproduce a table or figure of the papers.")
    rsub = rep.add_subparsers(dest="name", metavar="NAME")
    for name, modname in REPRODUCTIONS.items():
        mod = importlib.import_module(modname)
        p = rsub.add_parser(name, help=mod.DESCRIPTION, description=mod.DESCRIPTION)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    rep.set_defaults(_run=lambda args: (rep.print_help(), 2)[1])
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "_run"):
        parser.print_help()
        return 2
    return int(args._run(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
