#!/usr/bin/env bash
# K Streamlit processes on local ports behind nginx (deploy/nginx/llm-calc.conf.template), all on
# 127.0.0.1, no root-only paths: nginx runs with `-p $RUN_DIR` and a config rendered there.
#
#   deploy/run-replicas.sh                    # 3 replicas, http://127.0.0.1:8080, until Ctrl-C
#   REPLICAS=2 PORT=8090 deploy/run-replicas.sh
#
# Environment: REPLICAS (1-16, default 3), PORT (default 8080), RUN_DIR (default a new temp dir:
# rendered configs, logs, pids), PYTHON (default .venv/bin/python), RATE_PER_S / BURST /
# CONN_PER_CLIENT (per-client limits, defaults 20 / 400 / 400: a room of 50 behind one NAT address).
# Writes $RUN_DIR/streamlit.pids and $RUN_DIR/nginx.pid, then $RUN_DIR/ready once every replica
# answers its health check. Stops everything it started on SIGINT/SIGTERM or when one of them exits.
# Installs Debian's nginx when it is missing and this runs as root with apt-get (like scripts/test.sh
# installs chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

REPLICAS=${REPLICAS:-3}
PORT=${PORT:-8080}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
RATE_PER_S=${RATE_PER_S:-20}
BURST=${BURST:-400}
CONN_PER_CLIENT=${CONN_PER_CLIENT:-400}
if ! [[ $REPLICAS =~ ^[0-9]+$ ]] || ((REPLICAS < 1 || REPLICAS > 16)); then
  echo "REPLICAS must be an integer 1-16, got '${REPLICAS:0:20}'" >&2; exit 2
fi
if ! [[ $PORT =~ ^[0-9]+$ ]] || ((PORT < 1024 || PORT > 65535)); then
  echo "PORT must be an integer 1024-65535, got '${PORT:0:20}'" >&2; exit 2
fi

NGINX=$(command -v nginx || true)
[ -z "$NGINX" ] && [ -x /usr/sbin/nginx ] && NGINX=/usr/sbin/nginx
if [ -z "$NGINX" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's nginx" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
    NGINX=/usr/sbin/nginx
  else
    echo "nginx is missing (apt-get install nginx)" >&2; exit 3
  fi
fi

RUN_DIR=${RUN_DIR:-$(mktemp -d -t llm-calc-replicas.XXXXXX)}
mkdir -p "$RUN_DIR"
RUN_DIR=$(cd "$RUN_DIR" && pwd)
rm -f "$RUN_DIR"/ready

PIDS=()
NGINX_PID=""
NGINX_TMP=""
cleanup() {
  trap - EXIT INT TERM
  [ -n "$NGINX_PID" ] && kill -QUIT "$NGINX_PID" 2>/dev/null || true
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$NGINX_TMP" ] && rm -rf "$NGINX_TMP"
  rm -f "$RUN_DIR"/ready
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# nginx's buffers for large responses and uploads. Run as root, nginx's workers are `nobody`,
# who may not be able to enter RUN_DIR's parents: a directory of its own under /tmp then.
NGINX_TMP=$(mktemp -d -t llm-calc-nginx.XXXXXX)
mkdir -p "$NGINX_TMP"/{client,proxy,fastcgi,uwsgi,scgi,static}
if [ "$(id -u)" = 0 ]; then chown -R nobody "$NGINX_TMP"; fi

# K free loopback ports for the replicas.
mapfile -t PORTS < <("$PYTHON" - "$REPLICAS" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in socks))
PY
)

UPSTREAM=""
for p in "${PORTS[@]}"; do
  STREAMLIT_BROWSER_GATHER_USAGE_STATS=false "$PYTHON" -m streamlit run app.py --server.headless true \
    --server.address 127.0.0.1 --server.port "$p" --server.fileWatcherType none \
    --browser.gatherUsageStats false >"$RUN_DIR/streamlit-$p.log" 2>&1 </dev/null &
  PIDS+=("$!")
  UPSTREAM+="server 127.0.0.1:$p max_fails=0; "
done
echo "${PIDS[*]}" >"$RUN_DIR/streamlit.pids"

# Render the configs (only our ${NAMES}; nginx's own $variables stay as they are).
LISTEN="127.0.0.1:$PORT" UPSTREAM_SERVERS="$UPSTREAM" TRUSTED_PROXIES=127.0.0.1/32 RUN_DIR="$RUN_DIR" NGINX_TMP="$NGINX_TMP" \
STATIC_CACHE_DIR="$NGINX_TMP/static" \
RATE_PER_S="$RATE_PER_S" BURST="$BURST" CONN_PER_CLIENT="$CONN_PER_CLIENT" "$PYTHON" - "$ROOT/deploy/nginx" "$RUN_DIR" <<'PY'
import os, string, sys
src, dst = sys.argv[1], sys.argv[2]
names = ("LISTEN", "UPSTREAM_SERVERS", "TRUSTED_PROXIES", "RUN_DIR", "NGINX_TMP", "RATE_PER_S", "BURST", "CONN_PER_CLIENT",
         "STATIC_CACHE_DIR")
values = {k: os.environ[k] for k in names}
for name, out in (("llm-calc.conf.template", "llm-calc.conf"), ("local.conf.template", "nginx.conf")):
    text = string.Template(open(os.path.join(src, name)).read()).safe_substitute(values)
    open(os.path.join(dst, out), "w").write(text)
PY

"$NGINX" -t -q -p "$RUN_DIR" -c "$RUN_DIR/nginx.conf"
"$NGINX" -p "$RUN_DIR" -c "$RUN_DIR/nginx.conf" &
NGINX_PID=$!

deadline=$((SECONDS + 90))
for p in "${PORTS[@]}"; do
  until "$PYTHON" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$p/_stcore/health', timeout=2)" 2>/dev/null; do
    if ((SECONDS > deadline)); then echo "replica on port $p did not start: $RUN_DIR/streamlit-$p.log" >&2; exit 1; fi
    for pid in "${PIDS[@]}" "$NGINX_PID"; do
      kill -0 "$pid" 2>/dev/null || { echo "process $pid exited early (logs in $RUN_DIR)" >&2; exit 1; }
    done
    sleep 0.2
  done
done
touch "$RUN_DIR/ready"
echo "http://127.0.0.1:$PORT  ($REPLICAS replicas on ports ${PORTS[*]}; logs and configs in $RUN_DIR)"

# Until stopped, or until one of the processes exits.
wait -n "${PIDS[@]}" "$NGINX_PID" || true
echo "a process exited; stopping the others" >&2
exit 1
