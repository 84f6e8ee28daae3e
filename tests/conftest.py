"""Shared test fixtures: repository root on sys.path, the app path, Streamlit servers and the
browser for the e2e tests (Debian's chromium through pytest-playwright; see the testing recipe)."""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Shared, noisy machines: no per-example time limit (properties are about values, not speed).
settings.register_profile("project", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("project")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
APP = str(ROOT / "app.py")
SHARED = ROOT.parent / "shared"

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


SERVER_PIDS: dict[str, int] = {}  # base URL -> pid of the server process (for CPU measurements)


@contextmanager
def streamlit_server(log_dir: Path, app: Path | str = APP, cwd: Path | str = ROOT):
    """A fresh `streamlit run app.py` (or ``app``, from ``cwd``) on a free port, started and stopped as
    the load test does (``bench/load.py`` ``single_server``); yields its base URL. The log is in ``log_dir``."""
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    import load  # noqa: PLC0415 (bench/load.py)

    stack = ExitStack()
    try:
        url, pids = stack.enter_context(load.single_server(Path(log_dir), app=Path(app), cwd=Path(cwd)))
    except RuntimeError as exc:  # did not become healthy
        logs = "".join(p.read_text() for p in Path(log_dir).glob("streamlit-*.log"))
        pytest.fail(f"streamlit did not start ({exc}):\n{logs}")
    with stack:
        SERVER_PIDS[url] = pids[0]
        try:
            yield url
        finally:
            SERVER_PIDS.pop(url, None)


@pytest.fixture(scope="session")
def streamlit_url(tmp_path_factory):
    """One server shared by the e2e tests (not for the cold-start test: see fresh_streamlit_url)."""
    with streamlit_server(tmp_path_factory.mktemp("streamlit")) as url:
        yield url


@pytest.fixture
def fresh_streamlit_url(tmp_path):
    """A server no browser has visited yet (the first request decides legacy pages/ handling)."""
    with streamlit_server(tmp_path) as url:
        yield url


# pytest-playwright: Debian's Chromium instead of `playwright install` (which downloads a browser).
@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1800}}
