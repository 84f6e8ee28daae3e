"""The one client of Streamlit's WebSocket protocol here: a browser tab minus the drawing.

Used by the load test (bench/load.py), the server-CPU bench (bench/bench_pages.py), the upload
flood (bench/upload_flood.py), the first-paint bench's server side (bench/first_paint.py) and the
tests that need many sessions on a real server (tests/test_cold_start.py, tests/test_load.py).
Tests import it from here (``bench/`` on ``sys.path``), never the other way round.

One session, as the frontend does it:
1. ``GET /<page>`` and ``GET /_stcore/health`` with a cookie jar of its own: the XSRF cookie (and
   whatever a cookie-affinity front such as ``deploy/nginx.conf`` sets to pin it to one replica);
2. opens ``/_stcore/stream`` (sub-protocol ``streamlit``, the page's origin, the cookies, a browser's
   User-Agent) and sends a ``BackMsg.rerun_script`` with the page name and the query string; where the
   app answers with a first view (ui.first_view: the page down to its first chart), presses its button
   for the whole page, as the browser does (:meth:`Session.first_run`);
3. reads ``ForwardMsg``s up to ``script_finished``. Later runs send the page hash (from the
   ``navigation`` message), the query string the server last set (``page_info_changed``), the
   hashes of the cacheable messages it holds (the frontend's message cache: the server then sends
   ``ref_hash`` references instead of repeating large charts, resolved here from the cache) and the
   widgets moved, each in its wire format (:func:`wire_kind`). Widgets not moved are not re-sent:
   the server keeps their values, as it does for a browser.

Each run gives a :class:`RunResult`: the exceptions shown, the element kinds, how the script
finished, a digest of the page content (the last element at each position at the end of the run,
input widgets left out; a keyed chart or a dataframe carries a widget-style id but is content), the
references resolved, the bytes received and timings from the rerun sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.cookiejar
import time
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

# Elements that carry an id (for selections or media) but show content rather than take input.
CONTENT_WITH_ID = frozenset({"plotly_chart", "vega_lite_chart", "deck_gl_json_chart", "echarts_chart",
                             "dataframe", "audio", "video"})
# Every status but "stopped early for a rerun" ends a run (a fragment's run included).
_ENDS_RUN = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
             ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
EXCEPTION_CHARS = 200  # an exception's message is cut to this length in RunResult.exceptions
# A browser's User-Agent (they all start "Mozilla/"): the app sends such a session a first view
# (ui.first_view) on its first run, and FIRST_VIEW_BUTTON is what the browser presses for the rest.
BROWSER_USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) ws_session (a browser tab minus the drawing)"
FIRST_VIEW_BUTTON = "first_view_more_button"


@dataclass
class RunResult:
    """What one script run sent."""

    exceptions: list[str] = field(default_factory=list)  # "Type: message" (message cut short)
    error_alerts: list[str] = field(default_factory=list)  # st.error texts (cut short), e.g. a refused run
    elements: list[str] = field(default_factory=list)  # element kinds in arrival order (references resolved)
    finished: str = ""  # the ScriptFinishedStatus name
    digest: str = ""  # sha256 over the page content at the end of the run (see _page_digest)
    refs: int = 0  # ref_hash messages (cached elements the server did not resend)
    unknown_refs: list[str] = field(default_factory=list)  # references to messages this client never got
    bytes_in: int = 0  # ForwardMsg bytes received
    elapsed_s: float | None = None  # rerun sent -> script_finished
    first_element_s: float | None = None  # rerun sent -> first element
    first_chart_s: float | None = None  # rerun sent -> first Plotly chart


def wire_kind(el, etype: str) -> str:
    """How a widget's value travels back: an integer or float number_input, a button's press, else a
    slider's array."""
    if etype == "button":
        return "trigger"
    if etype == "number_input":
        return "int" if el.number_input.data_type == el.number_input.INT else "float"
    return "slider"


class Session:
    """One browser tab's worth of protocol on ``base_url`` (``http://127.0.0.1:port``).

    ``timeout_s`` bounds each wait: the HTTP requests, the connection, and every message while a
    run is under way (a run that sends nothing for that long raises ``TimeoutError``).
    ``open()`` is ``fetch_cookie()`` + ``connect()`` + the first ``run()``; a caller that must
    open many sessions at one moment calls the parts itself.
    """

    def __init__(self, base_url: str, page: str, *, query_string: str = "", timeout_s: float = 120,
                 browser: bool = True):
        self.base_url, self.page, self.timeout_s = base_url.rstrip("/"), page, timeout_s
        # Say "browser" (User-Agent): the app then sends a fresh session a first view (ui.first_view),
        # which :meth:`first_run` completes as a browser does. False: the whole page at once.
        self.browser = browser
        self.first_view: RunResult | None = None  # the first view of the last first_run(), if it was one
        self.query_string = query_string
        self.page_hash = ""
        self.session_id = ""
        self.cookie: str | None = None  # Cookie header value, after fetch_cookie()
        self.xsrf_token = ""
        self.widget_ids: dict[str, str] = {}  # user key -> widget id
        self.widget_kinds: dict[str, str] = {}  # user key -> "int" | "float" | "slider" (its wire format)
        self.widget_fragments: dict[str, str] = {}  # user key -> id of the st.fragment drawing it ("" if none)
        self.cache: dict[str, ForwardMsg] = {}  # hash -> cacheable message (the frontend's message cache)
        self.current = RunResult()  # the run under way (or the last one): what came before a failure
        self.ws = None

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def fetch_cookie(self) -> None:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = self.page + (f"?{self.query_string}" if self.query_string else "")  # the link as opened
        for path in (page, "_stcore/health"):
            await asyncio.to_thread(_http_get, opener, f"{self.base_url}/{path}", self.timeout_s)
        self.cookie = "; ".join(f"{c.name}={c.value}" for c in jar)
        self.xsrf_token = next((c.value for c in jar if c.name == "_streamlit_xsrf"), "")

    async def connect(self) -> None:
        if self.cookie is None:
            await self.fetch_cookie()
        ws_url = "ws" + self.base_url.removeprefix("http") + "/_stcore/stream"
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(self.base_url))
        agent = {"user_agent_header": BROWSER_USER_AGENT} if self.browser else {}
        self.ws = await websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None, origin=origin,
                                           additional_headers={"Cookie": self.cookie} if self.cookie else None,
                                           open_timeout=self.timeout_s, ping_interval=None, **agent)

    async def open(self) -> RunResult:
        """Connect and run the page once (what opening the tab does: :meth:`first_run`)."""
        await self.connect()
        return await self.first_run()

    async def first_run(self) -> RunResult:
        """The session's first run as a browser has it. Where the app sent a first view (the page down
        to its first chart, ui.first_view), press its button as ``static/first-view.js`` does once the
        chart is shown (here at once: the server's work is what this measures) and read the whole
        page's run. Returns that run with the first view's exceptions, alerts, bytes and references
        added, its first element and chart timed from the first view's rerun, and ``elapsed_s`` the
        two runs' sum; the first view itself is kept in :attr:`first_view`."""
        first = await self.run()
        self.first_view = None
        if FIRST_VIEW_BUTTON not in self.widget_ids:
            return first
        self.first_view = first
        whole = await self.run({FIRST_VIEW_BUTTON: True})
        whole.exceptions[:0] = first.exceptions
        whole.error_alerts[:0] = first.error_alerts
        whole.unknown_refs[:0] = first.unknown_refs
        whole.bytes_in += first.bytes_in
        whole.refs += first.refs
        whole.first_element_s, whole.first_chart_s = first.first_element_s, first.first_chart_s
        whole.elapsed_s = (first.elapsed_s or 0.0) + (whole.elapsed_s or 0.0)
        return whole

    async def rerun(self, widgets: dict[str, float] | None = None) -> RunResult:
        """Move widgets (user key -> value) and wait for the script to finish."""
        return await self.run(widgets)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    def rerun_message(self, widgets: dict[str, float] | None = None) -> bytes:
        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string = self.query_string
        rs.page_script_hash = self.page_hash
        rs.page_name = "" if self.page_hash else self.page
        rs.cached_message_hashes.extend(self.cache)  # the server then sends references
        # A widget drawn inside an st.fragment reruns only that fragment, as the frontend asks
        fragments = {self.widget_fragments.get(key, "") for key in (widgets or {})}
        if len(fragments) == 1 and "" not in fragments:
            rs.fragment_id = fragments.pop()
        for key, value in (widgets or {}).items():
            w = rs.widget_states.widgets.add()
            w.id = self.widget_ids[key]
            kind = self.widget_kinds.get(key, "slider")
            if kind == "trigger":  # a button pressed (its value is ignored)
                w.trigger_value = True
            elif kind == "int":  # an integer number_input (the sidebar concurrency, ui.controls)
                w.int_value = int(value)
            elif kind == "float":
                w.double_value = float(value)
            else:
                w.double_array_value.data.append(float(value))
        return msg.SerializeToString()

    async def run(self, widgets: dict[str, float] | None = None) -> RunResult:
        """Send one rerun and read up to its ``script_finished``."""
        out = self.current = RunResult()
        content: dict[tuple[int, ...], bytes] = {}  # delta path -> digest of the element shown there
        t0 = time.perf_counter()
        await self.ws.send(self.rerun_message(widgets))
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), self.timeout_s)
            out.bytes_in += len(raw)
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "ref_hash":
                out.refs += 1
                cached = self.cache.get(fm.ref_hash)
                if cached is None:
                    out.unknown_refs.append(fm.ref_hash)
                    continue
                fm, kind = cached, "delta"  # (the cache keeps the message itself, never the reference)
            elif fm.metadata.cacheable and fm.hash:
                self.cache[fm.hash] = fm
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                self._element(fm.delta.new_element, out, content, tuple(fm.metadata.delta_path),
                              time.perf_counter() - t0, fm.delta.fragment_id)
            elif kind == "new_session":
                self.session_id = fm.new_session.initialize.session_id or self.session_id
            elif kind == "navigation":
                self.page_hash = fm.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = fm.page_info_changed.query_string
            elif kind == "script_finished" and fm.script_finished in _ENDS_RUN:
                out.finished = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
                out.elapsed_s = time.perf_counter() - t0
                out.digest = _page_digest(content)
                return out

    def _element(self, el, out: RunResult, content: dict, path: tuple[int, ...], t: float,
                 fragment_id: str = "") -> None:
        etype = el.WhichOneof("type")
        out.elements.append(etype)
        if out.first_element_s is None:
            out.first_element_s = t
        if etype == "plotly_chart" and out.first_chart_s is None:
            out.first_chart_s = t
        if etype == "exception":
            out.exceptions.append(f"{el.exception.type}: {el.exception.message[:EXCEPTION_CHARS]}")
        if etype == "alert" and el.alert.format == el.alert.ERROR:
            out.error_alerts.append(el.alert.body[:EXCEPTION_CHARS])
        widget_id = getattr(getattr(el, etype), "id", "") if etype else ""
        if isinstance(widget_id, str) and widget_id.startswith("$$ID-"):  # "$$ID-<hash>-<user key>"
            user_key = widget_id.rsplit("-", 1)[-1]
            self.widget_ids[user_key] = widget_id
            self.widget_kinds[user_key] = wire_kind(el, etype)
            self.widget_fragments[user_key] = fragment_id
            if etype not in CONTENT_WITH_ID:
                content.pop(path, None)  # an input's own value is not "the page changed"
                return
        content[path] = hashlib.sha256(el.SerializeToString(deterministic=True)).digest()


def _page_digest(content: dict[tuple[int, ...], bytes]) -> str:
    """sha256 over what the page shows at the end of a run: the last element at each delta path.

    Not over the messages in arrival order: a placeholder (``st.empty()``) filled later in the same
    run reaches the client either as two messages or as one, depending on whether the server's queue
    was flushed in between (Streamlit then sends only the last), so the same page can arrive as
    different message sequences.
    """
    h = hashlib.sha256()
    for path in sorted(content):
        h.update(repr(path).encode() + content[path])
    return h.hexdigest()


def _http_get(opener: urllib.request.OpenerDirector, url: str, timeout_s: float) -> None:
    with opener.open(url, timeout=timeout_s) as r:
        r.read()


async def open_all(base_url: str, pages: list[str], timeout_s: float = 120) -> list[RunResult | BaseException]:
    """Open one session per page, all at the same moment; their first runs (or the error)."""

    async def one(page: str) -> RunResult:
        async with Session(base_url, page, timeout_s=timeout_s) as s:
            return await s.open()

    return await asyncio.gather(*(one(p) for p in pages), return_exceptions=True)
