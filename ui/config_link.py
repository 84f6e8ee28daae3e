"""The user's own model (a config.json) in the link, so a reload or a shared link keeps it.

The config is written as ``?model_config=`` : its JSON (compact, keys sorted), zlib-compressed,
URL-safe base64 without padding. A Llama config of ~700 bytes becomes ~500 characters. A config
whose encoding passes :data:`MAX_LINK_CHARS` is left out of the link (the scenario file carries
it) and the page says so.

Read back as untrusted input: the text's length is checked before decoding, decompression stops
at :data:`~calc.spec.hf_config.MAX_CONFIG_BYTES` (a small text cannot inflate to gigabytes), then
the same checks as an uploaded config.json (:func:`calc.spec.untrusted.load_json`,
:func:`calc.spec.hf_config.arch_from_hf_config`). Every failure is an
:class:`~calc.spec.untrusted.InputError` naming ``model_config``. Pure, no streamlit.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib

from calc.spec.hf_config import MAX_CONFIG_BYTES
from calc.spec.untrusted import InputError, json_type, load_json

KEY = "model_config"
MAX_LINK_CHARS = 8_000  # browsers and proxies take links of 8 KB; a config of ~10 KB of JSON fits


def encode(cfg: dict) -> str | None:
    """The config as link text, or None when it would pass :data:`MAX_LINK_CHARS`.

    >>> text = encode({"model_type": "llama", "hidden_size": 2048})
    >>> decode(text)
    {'hidden_size': 2048, 'model_type': 'llama'}
    """
    raw = json.dumps(cfg, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
    text = base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")
    return text if len(text) <= MAX_LINK_CHARS else None


def decode(text: str) -> dict:
    """The config dict from link text; :class:`InputError` naming ``model_config`` otherwise.

    >>> decode("not base64!")
    Traceback (most recent call last):
    ...
    calc.spec.untrusted.InputError: model_config: not a config written by this app
    """
    shown = text[:40] + ("…" if len(text) > 40 else "")
    bad = dict(code="invalid", detail="not a config written by this app")
    if not isinstance(text, str) or len(text) > MAX_LINK_CHARS:
        raise InputError(KEY, code="too_large", allowed=f"{MAX_LINK_CHARS:,}")
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_CONFIG_BYTES + 1)
    except (binascii.Error, ValueError, zlib.error):
        raise InputError(KEY, shown, **bad) from None
    if len(raw) > MAX_CONFIG_BYTES or inflater.unconsumed_tail:
        raise InputError(KEY, code="too_large", allowed=f"{MAX_CONFIG_BYTES:,}")
    if not inflater.eof:
        raise InputError(KEY, shown, **bad)
    cfg = load_json(raw, what=KEY, max_bytes=MAX_CONFIG_BYTES)
    if not isinstance(cfg, dict):
        raise InputError(KEY, json_type(cfg), code="not_object")
    return cfg
