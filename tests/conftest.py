"""Shared test fixtures: repository root on sys.path, the app path, Streamlit servers and the
browser for the e2e tests (Debian's chromium through pytest-playwright; see the testing recipe)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVER_PIDS: dict[str, int] = {}  # base URL -> pid of the server process (for CPU measurements)


@contextmanager
def streamlit_server(log_path: Path, app: Path | str = APP, cwd: Path | str = ROOT):
    """A fresh `streamlit run app.py` (or ``app``, from ``cwd``) on a free port; yields its base URL, stops it after."""
    port = _free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "STREAMLIT_SERVER_HEADLESS": "true"}
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
           "--browser.gatherUsageStats", "false"]
    with open(log_path, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    SERVER_PIDS[url] = proc.pid
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start:\n{log_path.read_text()}")
            time.sleep(0.1)
        yield url
    finally:
        SERVER_PIDS.pop(url, None)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def streamlit_url(tmp_path_factory):
    """One server shared by the e2e tests (not for the cold-start test: see fresh_streamlit_url)."""
    with streamlit_server(tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


@pytest.fixture
def fresh_streamlit_url(tmp_path):
    """A server no browser has visited yet (the first request decides legacy pages/ handling)."""
    with streamlit_server(tmp_path / "fresh_server.log") as url:
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
