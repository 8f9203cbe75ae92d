"""``dpselect demo``: the mechanisms on a small real example."""
from __future__ import annotations

DESCRIPTION = "show the selection mechanisms on a small real example"


def add_arguments(parser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def run(args) -> int:
    print("dpselect demo: mechanisms coming up")
    return 0
