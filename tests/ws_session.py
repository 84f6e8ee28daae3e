"""A minimal client of Streamlit's WebSocket protocol: open a page as a browser tab would (minus
drawing) and collect what the script sent. For tests that need many sessions at once on a real
server, which a browser per session would make too heavy (the cold-start race, CPU per rerun).

One session: ``GET /<page>`` (the XSRF cookie), open ``/_stcore/stream`` with the sub-protocol
``streamlit``, send a ``BackMsg.rerun_script`` naming the page (as the frontend does on connect),
read ``ForwardMsg``s up to ``script_finished``. :func:`rerun` moves one slider and runs again.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import urllib.request
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


@dataclass
class RunResult:
    """What one script run sent: exception texts, element types, and how it finished."""

    exceptions: list[str] = field(default_factory=list)
    elements: list[str] = field(default_factory=list)
    finished: str = ""


def _cookie(url: str) -> str:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(url, timeout=30) as r:
        r.read()
    return "; ".join(f"{c.name}={c.value}" for c in jar)


def _wire_kind(el, etype: str) -> str:
    """How a widget's value travels back: an integer or float number_input, else a slider's array."""
    if etype == "number_input":
        return "int" if el.number_input.data_type == el.number_input.INT else "float"
    return "slider"


class Session:
    """One browser tab's worth of protocol on ``base_url`` (``http://127.0.0.1:port``)."""

    def __init__(self, base_url: str, page: str, *, query_string: str = "", timeout_s: float = 120):
        self.base_url, self.page, self.timeout_s = base_url.rstrip("/"), page, timeout_s
        self.query_string = query_string
        self.page_hash = ""
        self.widget_ids: dict[str, str] = {}  # user key -> widget id
        self.widget_kinds: dict[str, str] = {}  # user key -> "int" | "float" | "slider" (its wire format)
        self.cached: set[str] = set()  # hashes of cacheable messages received (the frontend's cache)
        self.ws = None

    async def open(self) -> RunResult:
        cookie = await asyncio.to_thread(_cookie, f"{self.base_url}/{self.page}")
        ws_url = "ws" + self.base_url.removeprefix("http") + "/_stcore/stream"
        self.ws = await websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None,
                                           additional_headers={"Cookie": cookie} if cookie else None)
        return await self._run({})

    async def rerun(self, widgets: dict[str, float]) -> RunResult:
        """Move sliders (user key -> value) and wait for the script to finish."""
        return await self._run(widgets)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def _run(self, widgets: dict[str, float]) -> RunResult:
        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string = self.query_string
        rs.page_script_hash = self.page_hash
        rs.page_name = "" if self.page_hash else self.page
        rs.cached_message_hashes.extend(sorted(self.cached))  # the server then sends references
        for key, value in widgets.items():
            w = rs.widget_states.widgets.add()
            w.id = self.widget_ids[key]
            kind = self.widget_kinds.get(key, "slider")
            if kind == "int":  # an integer number_input (the sidebar concurrency, ui.controls)
                w.int_value = int(value)
            elif kind == "float":
                w.double_value = float(value)
            else:
                w.double_array_value.data.append(float(value))
        await self.ws.send(msg.SerializeToString())
        out = RunResult()
        async with asyncio.timeout(self.timeout_s):
            while True:
                fm = ForwardMsg()
                fm.ParseFromString(await self.ws.recv())
                kind = fm.WhichOneof("type")
                if fm.metadata.cacheable and fm.hash:
                    self.cached.add(fm.hash)
                if kind == "navigation":
                    self.page_hash = fm.navigation.page_script_hash
                elif kind == "page_info_changed":
                    self.query_string = fm.page_info_changed.query_string
                elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                    el = fm.delta.new_element
                    etype = el.WhichOneof("type")
                    out.elements.append(etype)
                    if etype == "exception":
                        out.exceptions.append(f"{el.exception.type}: {el.exception.message}")
                    widget_id = getattr(getattr(el, etype), "id", "") if etype else ""
                    if widget_id and "-" in widget_id:  # "$$ID-<hash>-<user key>"
                        user_key = widget_id.rsplit("-", 1)[-1]
                        self.widget_ids[user_key] = widget_id
                        self.widget_kinds[user_key] = _wire_kind(el, etype)
                elif kind == "script_finished":
                    out.finished = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
                    return out


async def open_all(base_url: str, pages: list[str]) -> list[RunResult | BaseException]:
    """Open one session per page, all at the same moment; their first runs (or the error)."""
    sessions = [Session(base_url, p) for p in pages]

    async def one(s: Session) -> RunResult:
        try:
            return await s.open()
        finally:
            await s.close()

    return await asyncio.gather(*(one(s) for s in sessions), return_exceptions=True)
