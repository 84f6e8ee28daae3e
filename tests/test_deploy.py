"""deploy/: the nginx template (nginx -t, the CSP against the installed Streamlit frontend), the
compose file and the Kubernetes manifest (yamllint, their schemas, what they must say), and a
short live run of deploy/run-replicas.sh (2 replicas + nginx): headers, /_stcore/metrics blocked,
protocol sessions through the WebSocket upgrade, sticky routing, the rate limit, and a headless
Chromium page through it without a single CSP violation.

The live part needs nginx (Debian's package; scripts/test.sh installs it) and is skipped without it.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import re
import shutil
import signal
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path

import pytest
import streamlit
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
TEMPLATE = DEPLOY / "nginx" / "llm-calc.conf.template"
LOCAL = DEPLOY / "nginx" / "local.conf.template"
sys.path.insert(0, str(ROOT / "bench"))
import load  # noqa: E402

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx not installed (apt-get install nginx)")
PLACEHOLDERS = {"LISTEN", "UPSTREAM_SERVERS", "TRUSTED_PROXIES", "RATE_PER_S", "BURST", "CONN_PER_CLIENT",
                "STATIC_CACHE_DIR"}


def placeholders(text: str) -> set[str]:
    return set(re.findall(r"\$\{([A-Z_]+)\}", text))


def csp() -> str:
    return re.search(r'Content-Security-Policy "([^"]+)"', TEMPLATE.read_text()).group(1)


def yaml_docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def yamllint(path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "yamllint", "-s", "-c", str(DEPLOY / ".yamllint"), str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


# --- static checks ---------------------------------------------------------------------------------

def test_template_names_every_placeholder_it_uses():
    assert placeholders(TEMPLATE.read_text()) == PLACEHOLDERS
    assert placeholders(LOCAL.read_text()) == {"RUN_DIR", "NGINX_TMP"}


def test_csp_allows_streamlits_inline_script_by_hash_and_nothing_loose():
    index = (Path(streamlit.__file__).parent / "static" / "index.html").read_text()
    inline = re.findall(r"<script>(.*?)</script>", index, re.S)
    assert inline, "Streamlit's index.html changed: review the CSP"
    policy = csp()
    for body in inline:
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy, "update the script hash in the CSP (Streamlit upgraded?)"
    # nothing else inline: the copy buttons' script is a file of the app's own origin (script-src 'self')
    hashes = re.findall(r"'sha256-[^']+'", policy)
    assert len(hashes) == len(inline), "a script hash in the CSP that Streamlit's index.html does not need"
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert "'unsafe-eval'" not in policy and "'unsafe-inline'" not in directives["script-src"]
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
    assert directives["default-src"] == "'self'" and directives["connect-src"] == "'self'"


def test_template_has_the_parts_a_front_must_have():
    text = TEMPLATE.read_text()
    for needle in ("hash $llmcalc_route consistent", "location = /_stcore/stream", "proxy_set_header Upgrade",
                   "proxy_read_timeout 86400s", 'X-Frame-Options "DENY" always',
                   'X-Content-Type-Options "nosniff" always', "limit_req ", "limit_conn ",
                   "location ^~ /_stcore/metrics"):
        assert needle in text, needle


@needs_nginx
def test_nginx_accepts_the_rendered_config(tmp_path):
    values = {"LISTEN": "127.0.0.1:1", "UPSTREAM_SERVERS": "server 127.0.0.1:2; server 127.0.0.1:3;",
              "TRUSTED_PROXIES": "127.0.0.1/32", "RATE_PER_S": "20", "BURST": "200", "CONN_PER_CLIENT": "100",
              "RUN_DIR": str(tmp_path), "NGINX_TMP": str(tmp_path), "STATIC_CACHE_DIR": str(tmp_path / "static")}
    rendered = string.Template(TEMPLATE.read_text()).safe_substitute(values)  # as run-replicas.sh does
    assert not placeholders(rendered)
    (tmp_path / "llm-calc.conf").write_text(rendered)
    (tmp_path / "nginx.conf").write_text(string.Template(LOCAL.read_text()).safe_substitute(values))
    out = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "syntax is ok" in out.stderr


def test_compose_file():
    path = DEPLOY / "compose.yaml"
    yamllint(path)
    out = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
                          str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    (doc,) = yaml_docs(path)
    services = doc["services"]
    apps = {name for name, s in services.items() if s.get("image") == "llm-calc:latest"}
    assert len(apps) >= 2
    for name in apps:
        assert (path.parent / services[name]["build"]["context"] / services[name]["build"]["dockerfile"]).is_file()
    proxy = services["proxy"]
    env = proxy["environment"]
    assert set(env) == PLACEHOLDERS
    assert set(re.findall(r"server (\w+):8501;", env["UPSTREAM_SERVERS"])) == apps  # every replica, no other
    assert proxy["ports"] == [f"8080:{env['LISTEN']}"]
    (mount,) = proxy["volumes"]
    src, dst, _ = mount.split(":")
    assert (path.parent / src).resolve() == TEMPLATE and dst.startswith("/etc/nginx/templates/")
    assert {k: v["condition"] for k, v in proxy["depends_on"].items()} == dict.fromkeys(apps, "service_healthy")


def test_kubernetes_manifest():
    import kubernetes_validate

    path = DEPLOY / "kubernetes.yaml"
    yamllint(path)
    docs = yaml_docs(path)
    for doc in docs:
        kubernetes_validate.validate(doc, "1.37.0", strict=True)  # raises on any schema error
    by_kind = {d["kind"]: d for d in docs}
    # The sidecar's config is the template itself, not a copy that drifts.
    assert by_kind["ConfigMap"]["data"]["llm-calc.conf.template"] == TEMPLATE.read_text()
    dep = by_kind["Deployment"]["spec"]
    assert dep["replicas"] >= 2
    pod = dep["template"]["spec"]
    app = next(c for c in pod["containers"] if c["name"] == "app")
    proxy = next(c for c in pod["containers"] if c["name"] == "proxy")
    assert "--server.address=127.0.0.1" in app["command"]  # only reachable through the proxy
    env = {e["name"]: e["value"] for e in proxy["env"]}
    assert set(env) == PLACEHOLDERS and env["UPSTREAM_SERVERS"] == "server 127.0.0.1:8501;"
    assert proxy["readinessProbe"]["httpGet"]["path"] == "/_stcore/health"
    mounts = {m["mountPath"]: m["name"] for m in proxy["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes[mounts["/etc/nginx/templates"]]["configMap"]["name"] == by_kind["ConfigMap"]["metadata"]["name"]
    svc = by_kind["Service"]["spec"]
    assert svc["sessionAffinity"] == "ClientIP" and svc["selector"] == dep["selector"]["matchLabels"]
    ann = by_kind["Ingress"]["metadata"]["annotations"]
    assert ann["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert int(ann["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600


def test_run_replicas_rejects_bad_settings():
    for env in ({"REPLICAS": "0"}, {"REPLICAS": "x"}, {"REPLICAS": "99"}, {"PORT": "80"}):
        out = subprocess.run(["bash", str(DEPLOY / "run-replicas.sh")], env={**os.environ, **env},
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 2, (env, out.stderr)


# --- live: 2 replicas behind nginx -----------------------------------------------------------------

@pytest.fixture(scope="module")
def front(tmp_path_factory):
    if NGINX is None:
        pytest.skip("nginx not installed (apt-get install nginx)")
    run_dir = tmp_path_factory.mktemp("replicas")
    port = load._free_port()
    log = open(run_dir.parent / "run-replicas.log", "w")
    proc = subprocess.Popen(["bash", str(DEPLOY / "run-replicas.sh")], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "REPLICAS": "2", "PORT": str(port), "RUN_DIR": str(run_dir),
                                 "PYTHON": sys.executable, "RATE_PER_S": "10", "BURST": "100"})
    try:
        deadline = time.monotonic() + 120
        while not (run_dir / "ready").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail("run-replicas.sh did not start:\n" + (run_dir.parent / "run-replicas.log").read_text())
            time.sleep(0.2)
        replica_ports = sorted(int(p.stem.split("-")[1]) for p in run_dir.glob("streamlit-*.log"))
        for p in replica_ports:  # first runs one by one (the cold-start import race is not this test's subject)
            assert load.run_blocking(load.warm_up(f"http://127.0.0.1:{p}")) == []
        yield {"url": f"http://127.0.0.1:{port}", "run_dir": run_dir, "replicas": replica_ports}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    assert not (run_dir / "ready").exists()  # the script cleaned up after itself


def _get(url: str, headers: dict | None = None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def test_front_sends_security_headers_and_blocks_metrics(front):
    status, headers, body = _get(front["url"] + "/")
    assert status == 200 and b"<html" in body
    assert headers["Content-Security-Policy"] == csp()
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    assert re.match(r"llmcalc_route=[0-9a-f]{32}; Path=/; HttpOnly; SameSite=Lax", headers["Set-Cookie"])
    assert headers["Server"] == "nginx"  # no version
    for path in ("/_stcore/metrics", "/_stcore/metrics/", "/_stcore/metrics?x=1"):
        status, headers, _ = _get(front["url"] + path)
        assert status == 403, path
        assert headers["X-Frame-Options"] == "DENY"  # `always`: on errors too
    # ... while each replica still serves it locally (so the 403 above is nginx's doing).
    assert _get(f"http://127.0.0.1:{front['replicas'][0]}/_stcore/metrics")[0] == 200


def test_sessions_through_the_front_are_sticky_and_spread(front):
    summary = load.run_blocking(load.run_sessions(front["url"], 4, 6, seed=3, timeout_s=60))
    assert summary["errors"] == [], summary["errors"]
    assert all(r.reruns_finished >= 1 and len(r.page_digests) >= 1 for r in summary["results"])
    for _ in range(30):  # browsers without our cookie: each gets a fresh route
        _get(front["url"] + "/_stcore/health")
    time.sleep(0.5)  # access log lines are written when requests end
    by_route = defaultdict(set)
    upgraded = 0
    for line in (front["run_dir"] / "access.log").read_text().splitlines():
        m = re.search(r'"GET (\S+) [^"]*" (\d+) .* upstream=(\S+) route=(\w+)', line)
        if m and m.group(3) != "-":
            by_route[m.group(4)].add(m.group(3))
            upgraded += m.group(1) == "/_stcore/stream" and m.group(2) == "101"
    assert upgraded >= 4  # the WebSocket upgrade went through nginx
    assert all(len(ups) == 1 for ups in by_route.values()), by_route  # one replica per browser
    assert len(set().union(*by_route.values())) == 2  # and both replicas used


@pytest.mark.e2e
def test_browser_page_through_the_front_has_no_csp_violation(front, page):
    pytest.importorskip("pytest_playwright")
    from playwright.sync_api import expect

    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.on("pageerror", lambda e: console.append(f"page error: {e}"))
    page.add_init_script("document.addEventListener('securitypolicyviolation', e => "
                         "console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + "
                         "e.blockedURI))")
    for path in ("/?lang=en", "/frontier?lang=en"):
        page.goto(front["url"] + path)
        chart = page.locator(".js-plotly-plot").first
        try:
            expect(chart).to_be_visible(timeout=60_000)
        except AssertionError:
            raise AssertionError(f"no chart on {path}; browser console: {console}") from None
        expect(page.get_by_test_id("stMetric").first).to_be_visible()
    # the share box's copy button: its script (static/command-copy.js, by URL) runs under script-src 'self'
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Share and save").click()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sidebar.get_by_role("button", name="Copy link").click(timeout=60_000)
    expect(sidebar.get_by_role("button", name="Copied")).to_be_visible(timeout=15_000)  # the script ran
    page.wait_for_timeout(500)
    assert [m for m in console if "Content Security Policy" in m] == []


def test_front_rate_limits_a_flooding_client(front):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(16) as pool:  # 300 requests in a second or two (rate 10/s, burst 100 here)
        statuses = list(pool.map(lambda _: _get(front["url"] + "/_stcore/health")[0], range(300)))
    # The burst is served (less what this module's earlier tests took from the same bucket, which
    # refills at 10/s: how much depends on how fast the machine ran them).
    assert statuses.count(200) >= 50
    assert statuses.count(429) > 0, "limit_req did not answer 429 to 300 back-to-back requests"
    # The frontend's own files stay outside the request-rate limit (a first visit loads ~250).
    index = (Path(streamlit.__file__).parent / "static" / "index.html").read_text()
    asset = re.search(r'src="\./(static/js/[^"]+)"', index).group(1)
    assert _get(f"{front['url']}/{asset}")[0] == 200


def test_front_caches_and_compresses_the_frontends_files(front):
    """A room's first visits: each content-hashed file reaches a replica once, later copies come from
    nginx's cache (access log ``cache=HIT``), compressed for a client that accepts gzip, and with
    the same security headers as every other response."""
    index = (Path(streamlit.__file__).parent / "static" / "index.html").read_text()
    asset = "/" + re.search(r'src="\./(static/js/[^"]+)"', index).group(1)
    plain = _get(front["url"] + asset)
    status, headers, body = _get(front["url"] + asset, {"Accept-Encoding": "gzip"})
    assert plain[0] == status == 200
    assert headers["Content-Encoding"] == "gzip" and len(body) < len(plain[2]) / 2
    assert gzip.decompress(body) == plain[2]
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Content-Security-Policy"] == csp()
    for _ in range(3):
        _get(front["url"] + asset)
    time.sleep(0.5)  # access log lines are written when requests end
    caches = [m.group(1) for line in (front["run_dir"] / "access.log").read_text().splitlines()
              if f"GET {asset} " in line and (m := re.search(r"cache=(\S+)", line))]
    assert len(caches) >= 5 and caches.count("HIT") >= len(caches) - 1, caches  # at most the first went upstream
