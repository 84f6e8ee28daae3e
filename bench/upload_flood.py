"""Upload flood: server memory before and after one session pushes many files (issue 8 item 11).

    .venv/bin/python bench/upload_flood.py [--files 100] [--mb 1.9]

Starts a server (the app, then bench/minimal_app.py as the same Streamlit without our release),
opens one session over Streamlit's WebSocket protocol, then in each round PUTs ``--files`` files
straight to the upload endpoint the way a hostile client can (no widget references them) and
sends one rerun, reporting the server's RSS above its baseline after the flood and after the
run. Streamlit keeps such files until the session ends; the app releases every upload on each
run (``ui.state.release_uploads``), so its RSS stays at about one flood however many come.
Measured 2026-11-30 (shared 2-core machine), 3 rounds of 100 x 1.9 MB: the app +183/+129,
+185/+129, +185/+129 MiB (after flood / after run); the minimal app +183, +364, +546 MiB.

RSS is an indication (the allocator may keep some pages); the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import ROOT, rss_bytes, single_server  # noqa: E402
from ws_session import Session  # noqa: E402

MiB = 2 ** 20


def _put(url: str, cookie: str, token: str, payload: bytes) -> int:
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.json\"\r\n"
            f"Content-Type: application/json\r\n\r\n").encode() + payload + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(url, data=body, method="PUT", headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}", "Cookie": cookie, "X-Xsrftoken": token})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status


async def flood(url: str, pids: list[int], files: int, size: int, rounds: int) -> dict:
    async with Session(url, "memory", timeout_s=120) as s:  # bench/ws_session.py
        await s.open()
        sid, cookie, token = s.session_id, s.cookie, s.xsrf_token
        await asyncio.sleep(1.0)
        base = rss_bytes(pids)
        t0 = time.monotonic()
        statuses, after_flood, after_run = [], [], []
        for _ in range(rounds):
            for _ in range(files):
                payload = os.urandom(size)
                statuses.append(await asyncio.to_thread(
                    _put, f"{url}/_stcore/upload_file/{sid}/{uuid.uuid4().hex}", cookie, token, payload))
            await asyncio.sleep(1.0)
            after_flood.append(rss_bytes(pids))
            await s.rerun()  # any interaction runs the script
            await asyncio.sleep(1.0)
            after_run.append(rss_bytes(pids))
        push_s = time.monotonic() - t0
    return {"accepted": sum(s in (200, 204) for s in statuses), "push_s": push_s, "base": base,
            "after_flood": after_flood, "after_run": after_run}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3, help="floods, each followed by one run of the script")
    p.add_argument("--mb", type=float, default=1.9, help="size of each file in MB (1e6 bytes); the limit is 2 MB")
    args = p.parse_args(argv)
    apps = {"app.py (releases uploads every run)": ROOT / "app.py",
            "bench/minimal_app.py (Streamlit as is: no release)": ROOT / "bench" / "minimal_app.py"}
    print(f"{args.rounds} rounds of {args.files} uploads of {args.mb} MB each, then one run of the script; "
          "server RSS above its baseline (machine shared, RSS indicative)")
    for label, script in apps.items():
        with tempfile.TemporaryDirectory() as tmp, single_server(Path(tmp), script, cwd=ROOT) as (url, pids):
            r = asyncio.run(flood(url, pids, args.files, int(args.mb * 1e6), args.rounds))
        rounds = ", ".join(f"+{(f - r['base']) / MiB:.0f} / +{(a - r['base']) / MiB:.0f}"
                           for f, a in zip(r["after_flood"], r["after_run"]))
        print(f"{label}: baseline {r['base'] / MiB:.0f} MiB; per round (after flood / after run, MiB): {rounds}; "
              f"{r['accepted']} accepted in {r['push_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
