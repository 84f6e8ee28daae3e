"""The app frame: page config, language, navigation, shared controls, and the page contract.

``app.py`` calls :func:`run` with the page list; every page script starts with
``sc, t = shell.page()`` and gets the validated :class:`~ui.state.Scenario` and a translator.

Why our own navigation: the page folder is named ``pages/``, and Streamlit treats a script
folder of that name as a legacy multipage app until the first ``st.navigation`` call in the
process. On a fresh server whose first visitor opens a deep link (``/kv_table``), that first run
executes ``pages/kv_table.py`` directly, without ``app.py``, under Streamlit's automatic page
list. Two measures make that harmless, and a browser test covers it:

1. ``[client] showSidebarNavigation = false`` hides Streamlit's page list in every mode; the
   sidebar shows only the ``st.page_link`` list drawn here.
2. :func:`page` notices that ``app.py`` did not run (no shell marker in this run) and runs the
   frame itself: its ``st.navigation`` call switches the whole process to ``st.navigation``
   mode, resolves the same page from the URL and runs it inside the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Callable

import streamlit as st

from ui import preload  # noqa: F401  (first: libraries fully imported before any page runs)
from ui import eventloop
from ui import charts, compare, config_read, first_view, i18n, layout, lengths, preload_chart, state, vllm_paste, widget_state
from ui.i18n import Translator

eventloop.install()  # a page run's messages reach the event loop in batches (ui.eventloop)
widget_state.install()  # a keyed widget reads its own session-state entry, not all of them (ui.widget_state)
config_read.install()  # Streamlit's options read without its process-wide lock (ui.config_read)
charts.install_json_check()  # a chart's JSON encoded once, not twice when its base64 holds "NaN" (ui.charts)

_IN_SHELL = first_view.FRAME  # True only while app.py runs the page
_SCENARIO = "_scenario"


@dataclass(frozen=True)
class PageSpec:
    """One page: script path, translation key of its title, a Material icon, the shared controls it ignores.

    Icons are Streamlit's ``:material/name:`` spellings: the Material Symbols font is bundled with
    Streamlit's frontend (nothing fetched), unlike emoji, which need an emoji font on the viewer's machine.
    Not the favicon: a ``:material/...:`` page_icon makes the browser fetch the symbol's SVG from
    fonts.gstatic.com (tests/test_e2e_hostile.py watches every request), so it stays an emoji.
    ``ignores`` lists sidebar control keys that have no effect on this page; the sidebar dims them
    and says "not used on this page".
    """

    path: str
    title_key: str
    icon: str
    default: bool = False
    ignores: frozenset[str] = frozenset()


# The app's pages, in navigation order. Add a page here (its script in pages/).
_TIMING = frozenset(("eff_hbm_bw_fraction", "eff_prefill_flops_fraction", "eff_decode_flops_fraction",
                     "eff_hopper_flops_scale", "eff_ampere_moe_flops_scale", "eff_geforce_flops_fraction",
                     "eff_fp16_accumulate_share",
                     "eff_triton_attention_prefill_fraction", "eff_triton_attention_decode_fraction",
                     "eff_mxfp4_moe_half_saturation_rows", "eff_moe_layer_fixed_us", "eff_mla_layer_fixed_us",
                     "eff_gemm_half_saturation_tokens", "eff_step_overhead_ms", "eff_sequence_overhead_us",
                     "eff_request_overhead_ms", "eff_api_server_request_ms", "eff_api_server_harmony_request_ms",
                     "eff_api_server_final_share",
                     "eff_allreduce_latency_us", "eff_interconnect_bw_fraction"))
PAGES: list[PageSpec] = [
    PageSpec("pages/memory.py", "nav.memory", ":material/memory:", default=True, ignores=_TIMING),
    # The course table is fixed; "your own table" takes the precisions and block size, not the
    # sidebar model (it has its own model list), GPU, parallelism or load.
    PageSpec("pages/kv_table.py", "nav.kv_table", ":material/table_chart:",
             ignores=_TIMING | {"model", "gpu", "tp", "context", "concurrency", "gpu_memory_utilization",
                                "max_model_len", "max_num_seqs", "max_num_batched_tokens", "output_len",
                                "eff_non_torch_overhead_gib", "eff_nccl_overhead_gib", "eff_cuda_context_gib",
                                "eff_cuda_graph_gib", "eff_activation_live_hidden_buffers"}),
    # Its own decode batch slider replaces the sidebar concurrency.
    PageSpec("pages/roofline.py", "nav.roofline", ":material/show_chart:", ignores=frozenset({"concurrency"})),
    PageSpec("pages/frontier.py", "nav.frontier", ":material/balance:"),
    # The course's fixed case: only the efficiency assumptions apply.
    PageSpec("pages/case_study.py", "nav.case_study", ":material/school:",
             ignores=frozenset({"model", "gpu", "tp", "context", "concurrency", "gpu_memory_utilization", "max_model_len",
                                "max_num_seqs", "max_num_batched_tokens", "output_len", "dtype", "quantization",
                                "kv_cache_dtype", "block_size"})),
    # Its own requests, prompt lengths, token budget and max sequences replace these.
    PageSpec("pages/scheduler.py", "nav.scheduler", ":material/view_timeline:",
             ignores=frozenset({"concurrency", "context", "output_len", "max_num_seqs", "max_num_batched_tokens"})),
    PageSpec("pages/load_test.py", "nav.load_test", ":material/traffic:"),
    PageSpec("pages/planner.py", "nav.planner", ":material/explore:"),
    # Its own batch axis replaces the sidebar concurrency.
    PageSpec("pages/speculative.py", "nav.speculative", ":material/fast_forward:", ignores=frozenset({"concurrency"})),
    PageSpec("pages/disaggregation.py", "nav.disagg", ":material/call_split:", ignores=frozenset({"concurrency"})),
    # Its own rate replaces the sidebar concurrency.
    PageSpec("pages/prefix_cache.py", "nav.prefix_cache", ":material/cached:", ignores=frozenset({"concurrency"})),
]


def alias_path(spec: PageSpec) -> str:
    """The URL path a page's script name gives it (``pages/memory.py`` → ``memory``), as Streamlit
    infers it for every page but the default one.

    >>> alias_path(PAGES[0])
    'memory'
    """
    return spec.path.removeprefix("pages/").removesuffix(".py")


def default_aliases(pages: list[PageSpec], t: Translator) -> list:
    """The default page under its own name too: Streamlit gives the default page the root URL only
    (``st.Page.url_path`` is always ``""`` for it), so ``/memory`` said "Page not found". A hidden
    page (not in the navigation) with the same script, title and ``url_path="memory"`` opens it
    (the default page is given ``url_path=""``: by its script name it would reserve ``memory``)."""
    return [st.Page(p.path, title=t(p.title_key), icon=p.icon, url_path=alias_path(p), visibility="hidden")
            for p in pages if p.default]


_ST_PAGES = "_st_pages"


def _st_pages(pages: list[PageSpec], t: Translator) -> tuple[list, list]:
    """The ``st.Page`` objects of ``pages`` and of their aliases (:func:`default_aliases`), made once
    per session and language: each resolves its script's path on the disk (12 pages: ~0.8 ms of
    every rerun). Kept per session, not per process: ``st.navigation`` marks the page it runs on the
    object itself."""
    key = (t.lang, tuple(pages))
    made = st.session_state.get(_ST_PAGES)
    if made is None or made[0] != key:
        # The default page at "/" only (url_path ""): its script name is left to the alias.
        st_pages = [st.Page(p.path, title=t(p.title_key), icon=p.icon, default=True, url_path="") if p.default else
                    st.Page(p.path, title=t(p.title_key), icon=p.icon) for p in pages]
        made = st.session_state[_ST_PAGES] = (key, st_pages, default_aliases(pages, t))
    return made[1], made[2]


def run(pages: list[PageSpec] | None = None) -> None:
    """The whole frame around the current page (called by app.py)."""
    pages = PAGES if pages is None else pages
    presenting = layout.present_in_url() or layout.presenting()
    # "auto": open on a wide screen, collapsed on a phone (Streamlit's breakpoint); presenter mode
    # starts collapsed so the chart gets the projector's width.
    st.set_page_config(page_title="LLM inference calculator", page_icon="🧮", layout="wide",
                       initial_sidebar_state="collapsed" if presenting else "auto")
    lang, lang_warnings = i18n.resolve_language()
    t = Translator(lang)
    st_pages, aliases = _st_pages(pages, t)
    current = st.navigation(st_pages + aliases, position="hidden")
    spec = next((p for p, sp in zip(pages, st_pages) if sp.title == current.title), None)
    ignored = spec.ignores if spec is not None else frozenset()
    messages = lang_warnings + state.prepare_sidebar(t)
    layout.init_present()
    # A fresh browser session's first run draws the page down to its first chart, no sidebar controls
    # (ui.first_view); not where there is something to say, or a comparison to show after the page.
    quiet = None
    if first_view.possible() and not messages and compare.KEY not in st.query_params:
        quiet = state.quiet_scenario()
    first = first_view.begin(plain=quiet is not None)
    with st.sidebar:
        preload_chart.render()  # Plotly's JavaScript starts loading now, not after the controls
        st.markdown(f"**{t('app.title')}**")
        if first:
            first_view.render_signal(t)
        else:
            with st.container(key="app_nav"):
                for p in st_pages:
                    st.page_link(p, label=p.title, icon=p.icon)
            i18n.render_language_switch(t)
            layout.render_present_switch(t)
    layout.apply_style(ignored | {lengths.VIEW_OF[k] for k in ignored & lengths.VIEW_OF.keys()})
    if first:
        sc = quiet
    else:
        sc, messages = state.render_sidebar(t, messages, ignored=ignored)
        vllm_paste.render(t)
        compare.render_controls(t)
        share_slot = st.sidebar.container()
    # One slot for the messages, drawn whether or not there are any: the page's elements keep their
    # places when a message comes or goes. (A card's place is its identity in the browser: drawn one
    # place lower after an upload's message, the new card stood beside the old one until the run ended.)
    notices = st.empty()
    if messages:
        with notices.container():
            for level, text in messages:
                getattr(st, level)(text)
    st.session_state[_SCENARIO] = sc
    st.session_state[_IN_SHELL] = True
    try:
        current.run()
    finally:
        st.session_state[_IN_SHELL] = False
    first_view.page_ended()  # a first view that drew no chart: the whole page now
    compare.render_comparison(st.session_state[_SCENARIO], t)
    state.render_share(st.session_state[_SCENARIO], t, lang, share_slot)


_APP_RERUN = "_app_rerun"


def request_app_rerun() -> None:
    """From the callback of a widget inside a page fragment that changed sidebar values: the next
    run is the whole app's, not only the fragment's."""
    st.session_state[_APP_RERUN] = True


def run_fragment(body: Callable[[], None]) -> None:
    """Run a page's body (everything below its header) as an ``st.fragment``: moving one of the
    page's own controls reruns only the body, not the sidebar and the frame around it (on the
    frontier page ~10 ms of server CPU per change, bench/bench_pages.py). The whole app reruns
    instead when a callback asked for it (:func:`request_app_rerun`), or when something outside the
    body shows the page's controls: the open share box (its link) or a pinned comparison."""

    @st.fragment
    def page_body() -> None:
        if layout.in_fragment_rerun() and (st.session_state.pop(_APP_RERUN, False) or layout.lazy_open("sec_share")
                                           or st.session_state.get(compare.KEY)):
            st.rerun(scope="app")
        st.session_state.pop(_APP_RERUN, None)
        body()

    page_body()


def page() -> tuple[state.Scenario, Translator]:
    """Start of every page script: the scenario and the translator of this run."""
    if not st.session_state.get(_IN_SHELL):
        # Run directly by Streamlit's legacy pages/ mode (cold start on a deep link): run the
        # frame here instead. Its st.navigation call switches the process to st.navigation mode
        # and runs this same page inside the frame; then stop this outer, frameless run.
        run()
        st.stop()
    return st.session_state[_SCENARIO], Translator(i18n.current_language())
