"""``python -m calc estimate`` (filled in with the serving model)."""

from __future__ import annotations

import argparse


def add_estimate_parser(sub) -> None:
    e = sub.add_parser("estimate", help="TTFT, TPOT and throughput of a closed-loop load")
    e.add_argument("--batch", default=None)


def run_estimate(args: argparse.Namespace) -> int:
    raise NotImplementedError
