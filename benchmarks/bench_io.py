"""Edge-list parsing (`dpselect.datasets.load_edge_list`) on Enron and GitHub.

Run: ``python benchmarks/bench_io.py`` (writes its section of benchmarks/RESULTS.md). Baselines timed in
the same interleaved rounds (the record's protocol, ``_common.interleaved``), each followed by the same ``from_edges``: the previous parser (Python ``str.split`` of
the whole text, then ``np.array`` of the tokens) and ``np.loadtxt``. All three give the same graph.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_speedup, fmt_time, host_header, interleaved, median, record  # noqa: E402

from dpselect.datasets import data_path, load_edge_list  # noqa: E402
from dpselect.graphs import from_edges  # noqa: E402


def previous_parser(path: Path, delimiter: str | None):
    """The parser this release replaced: comment filter, one str.split of the text, np.array of the tokens."""
    lines = [ln for ln in path.read_text().splitlines() if ln.lstrip()[:1] not in ("#", "%", "")]
    if delimiter:
        lines = lines[1:] if not lines[0].split(delimiter)[0].strip().lstrip("-").isdigit() else lines
    body = "\n".join(lines)
    if delimiter:
        body = body.replace(delimiter, " ")
    ids = np.array(body.split(), dtype=np.int64)
    return from_edges(ids[0::2], ids[1::2], warn=False)


def loadtxt_parser(path: Path, delimiter: str | None):
    a = np.loadtxt(path, dtype=np.int64, comments=("#", "%"), delimiter=delimiter, ndmin=2,
                   )
    return from_edges(a[:, 0], a[:, 1], warn=False)


def main() -> None:
    rows = []
    for label, file, delim in (("Enron", "Email-Enron.txt", None), ("GitHub", "musae_git_edges.csv", ",")):
        path = data_path("graphs", file)
        g = load_edge_list(path, warn=False)
        for other in (previous_parser(path, delim), loadtxt_parser(path, delim)):
            assert other.node_ids.tolist() == g.node_ids.tolist() and (other.adjacency != g.adjacency).nnz == 0
        coo = g.adjacency.tocoo()
        src, dst = g.node_ids[coo.row], g.node_ids[coo.col]
        t = interleaved({
            "new": lambda: load_edge_list(path, warn=False),
            "old": lambda: previous_parser(path, delim),
            "loadtxt": lambda: loadtxt_parser(path, delim),
            "from_edges": lambda: from_edges(src, dst, warn=False),
        })
        rows.append(f"| {label} ({g.n_edges:,} edges) | {fmt_time(median(t['new']))} | "
                    f"{fmt_time(median(t['old']))}: {fmt_speedup(t, 'old', 'new', 2)} | "
                    f"{fmt_time(median(t['loadtxt']))}: {fmt_speedup(t, 'loadtxt', 'new', 2)} | "
                    f"{fmt_time(median(t['from_edges']))} |")
        print(rows[-1])
    record("io", "\n".join([
        "## Edge-list parsing (`dpselect.datasets.load_edge_list`, benchmarks/bench_io.py)",
        "",
        host_header(),
        "",
        "Median wall times over 9 interleaved rounds; every column ends with the same `from_edges` (graph build, "
        "last column: its share). Speed-ups: baseline / `load_edge_list` per round (median, and the worst round: "
        "the smallest); "
        "`load_edge_list` is the reference time. Re-run: `python benchmarks/bench_io.py` (under a minute).",
        "",
        "| graph | `load_edge_list` | previous parser (str.split) | `np.loadtxt` | of which `from_edges` |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "The line structure (comments, blank lines, two fields per line, one delimiter per line) is checked",
        "with whole-array byte operations, then one C pass parses the ids; Python looks at single lines only",
        "to name the first malformed line (`path:line` in the error) or for ids of 19+ digits.",
    ]))


if __name__ == "__main__":
    main()
