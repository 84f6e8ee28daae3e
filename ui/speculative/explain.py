"""Why-panels of the speculative view: tokens per step, and the step's cost at batch 1."""

from __future__ import annotations

from ui import format as F
from ui.memory.explain import Panel
from ui.speculative.view import outcome


def speculative_panels(sw, t) -> list[Panel]:
    k = sw.config.num_speculative_tokens
    tau = sw.drafter.tokens_per_step
    s = sw.step
    d1, v1, dr1, tp1 = (float(s.decode_step_s[0]) * 1e3, float(s.verify.step_s[0]) * 1e3, float(s.draft_s[0]) * 1e3,
                        float(s.tpot_s[0]) * 1e3)
    a = sw.config.accepted_at_position[0]
    return [
        Panel("sd_tau", t("sd.why.tau.title"),
              r"\tau = 1 + \sum_{i=1}^{k} a^i = \frac{1 - a^{k+1}}{1 - a}",
              rf"\tau = \frac{{1 - {F.number(a, 2)}^{{{k + 1}}}}}{{1 - {F.number(a, 2)}}} = {F.number(tau, 2)}",
              t("sd.why.tau.takeaway", tau=F.number(tau, 2), k=k), [t("sd.why.tau.note")]),
        Panel("sd_step", t("sd.why.step.title"),
              r"\mathrm{TPOT} = \frac{T_\mathrm{verify}(B\cdot(k+1)) + T_\mathrm{draft}}{\tau}",
              rf"\frac{{{F.number(v1, 2)} + {F.number(dr1, 2)}}}{{{F.number(tau, 2)}}} = {F.number(tp1, 2)}\ \mathrm{{ms}}"
              rf"\ \ (\mathrm{{plain}}: {F.number(d1, 2)}\ \mathrm{{ms}})",
              t("sd.why.step.takeaway", x=F.number(d1 / tp1, 2)), [t("sd.why.step.note")]),
    ]


def outcome_text(sw, fit: float | None, t) -> str:
    """The sentence under the cards: what the speed-up does over the batches shown
    (:func:`ui.speculative.view.outcome`), its numbers formatted."""
    key, n = outcome(sw, fit)
    lo, hi = F.number(n["lo"], 2), F.number(n["hi"], 2)
    return t(key, range=f"{hi}×" if lo == hi else f"{lo}×–{hi}×", top=F.integer(n["top"]), pool=F.integer(n["pool"]), last=F.integer(n["last"]),
             cross=F.integer(n["cross"]) if n["cross"] == n["cross"] else "",
             **{k: F.number(n[k], 2) for k in ("s1", "s_top")},
             **{k: F.number(n[k], 1) for k in ("kv_ms", "mem_ms", "compute_ms")})
