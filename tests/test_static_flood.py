"""bench/static_flood.py, small: a first visit's files are found in Chromium, then fetched by 2
clients at once, directly and through the nginx front (when nginx is installed).

No speed is asserted (shared machines): the benchmark reports the times and the server CPU.
"""

import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

pytestmark = pytest.mark.e2e


def test_static_flood_bench_runs(capsys):
    pytest.importorskip("playwright")
    import static_flood

    NGINX = shutil.which("nginx") or Path("/usr/sbin/nginx").exists()

    if not Path(static_flood.CHROMIUM).exists():
        pytest.skip(f"{static_flood.CHROMIUM} not installed")
    # In a thread of its own: Playwright's sync API refuses a thread where pytest-playwright's loop runs.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(static_flood.main, ["--clients", "2", "--replicas", "1" if NGINX else "0"]).result() == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\| (1 process|nginx \+ 1, (?:cold|warm) cache) \| 2 \| (\d+) \| .* \| ([\d.]+) MB \| ([\d.]+) s \|$",
                      out, re.M)
    assert len(rows) == (3 if NGINX else 1), out
    assert all(int(files) >= 20 and float(mb) > 1 for _, files, mb, _ in rows), out
    if NGINX:  # the front sends the same files compressed
        assert float(rows[1][2]) < float(rows[0][2]) / 2, out


def test_static_flood_refuses_a_remote_url():
    import static_flood

    with pytest.raises(SystemExit) as exc:
        static_flood.main(["--url", "http://example.com", "--clients", "2"])
    assert exc.value.code == 2
