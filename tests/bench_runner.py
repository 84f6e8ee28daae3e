"""Run one of bench/'s browser benchmarks small from a test: skipped without Playwright or Chromium."""

from __future__ import annotations

import importlib
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def run_bench(name: str, argv: list[str]) -> None:
    """``bench/<name>.py``'s ``main(argv)``, asserted to exit 0 (its output stays for capsys)."""
    pytest.importorskip("playwright")
    module = importlib.import_module(name)
    if not Path(module.CHROMIUM).exists():
        pytest.skip(f"{module.CHROMIUM} not installed")
    # In a thread of its own: Playwright's sync API refuses a thread where pytest-playwright's loop runs.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(module.main, argv).result() == 0
