"""The command line's speculative-decoding flags (vLLM's ``--speculative-config`` JSON and our
``--acceptance-rate``) and the fields they add to a JSON result."""

from __future__ import annotations

import argparse
from typing import Any

from calc.spec.speculative import SpeculativeConfig, parse_speculative_config
from calc.timing.speculative import drafter_and_kv_capacity as speculative_drafter  # noqa: F401 (re-exported)


def add_speculative_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--speculative-config", metavar="JSON", default=None,
                   help='vLLM\'s flag: e.g. \'{"method": "eagle3", "num_speculative_tokens": 3}\' (methods ngram, '
                        'eagle, eagle3, mtp, draft_model; "model" names the draft model). Acceptance defaults per '
                        "method are sourced in calc/data/speculative.json")
    p.add_argument("--acceptance-rate", type=float, default=None,
                   help="probability each draft token is accepted (0 to below 1, i.i.d.); overrides the default")


def speculative_option(raw: Any, acceptance_rate: Any) -> SpeculativeConfig | None:
    """The validated config of a flag or a ``--batch`` line (JSON text or object); None without one.
    An acceptance rate without a config is refused (it would silently do nothing).

    >>> speculative_option(None, None) is None
    True
    >>> speculative_option('{"method": "ngram", "num_speculative_tokens": 2}', 0.5).accepted_at_position
    (0.5, 0.25)
    """
    if raw is None:
        if acceptance_rate is not None:
            from calc.cli.args import UsageError  # noqa: PLC0415

            raise UsageError("acceptance_rate needs speculative_config (e.g. --speculative-config "
                             "'{\"method\": \"eagle3\", \"num_speculative_tokens\": 3}')")
        return None
    return parse_speculative_config(raw, acceptance_rate=acceptance_rate)


def speculative_fields(config: SpeculativeConfig, plain, drafter=None) -> dict[str, Any]:
    """The fields a JSON result gains: method, k, mean tokens per step (accepted drafts + 1), its
    source, the drafter's memory per GPU (``drafter``: calc.timing.speculative.Drafter), and the same
    load's TPOT and throughput without speculation (``plain``: a ServingResult)."""
    memory = {} if drafter is None else {"speculative_weights_bytes": float(drafter.weight_bytes),
                                         "speculative_kv_bytes_per_token": float(drafter.kv_bytes_per_token)}
    return {**memory,
        "speculative_method": config.method, "num_speculative_tokens": config.num_speculative_tokens,
        "speculative_draft_model": config.draft_model,
        "mean_accepted_tokens_per_step": 1.0 + sum(config.accepted_at_position),
        "acceptance_source": config.acceptance_source,
        "tpot_without_speculation_s": plain.tpot_s,
        "output_tokens_per_s_without_speculation": plain.output_tokens_per_s,
    }

