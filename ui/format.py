"""Number formatting for the UI: the same digits and unit symbols in every language.

GiB (2**30 bytes, what nvidia-smi, PyTorch and vLLM print) is shown first, GB (1e9, what
datasheets print) beside it where both matter. Nothing here computes a model quantity.
"""

from __future__ import annotations

import math

from calc.spec.units import GB, GiB, KiB, MiB


def _finite(x: float) -> bool:
    return x is not None and math.isfinite(float(x))


def gib(n_bytes: float, digits: int = 2) -> str:
    """``12.55 GiB``."""
    if not _finite(n_bytes):
        return "—"
    return f"{float(n_bytes) / GiB:,.{digits}f} GiB"


def gb(n_bytes: float, digits: int = 2) -> str:
    """``13.48 GB``."""
    if not _finite(n_bytes):
        return "—"
    return f"{float(n_bytes) / GB:,.{digits}f} GB"


def binary(n_bytes: float) -> str:
    """Bytes in the largest binary unit that keeps the number ≥ 1: B, KiB, MiB or GiB.

    >>> binary(524288), binary(1536), binary(3 * 2**30), binary(12)
    ('512 KiB', '1.50 KiB', '3 GiB', '12 B')
    """
    if not _finite(n_bytes):
        return "—"
    v = float(n_bytes)
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if abs(v) >= size:
            q = v / size
            return f"{q:,.0f} {unit}" if q == int(q) and abs(q) < 10_000 else f"{q:,.2f} {unit}"
    return f"{v:,.0f} B"


def both(n_bytes: float, digits: int = 2) -> str:
    """``12.55 GiB (13.48 GB)``: binary and decimal side by side.

    >>> both(13_476_831_232)
    '12.55 GiB (13.48 GB)'
    """
    if not _finite(n_bytes):
        return "—"
    if abs(float(n_bytes)) < GiB:
        return f"{binary(n_bytes)} ({float(n_bytes) / 1e6:,.{digits}f} MB)"
    return f"{gib(n_bytes, digits)} ({gb(n_bytes, digits)})"


def exact_bytes(n_bytes: float) -> str:
    """``524,288 B``."""
    if not _finite(n_bytes):
        return "—"
    return f"{float(n_bytes):,.0f} B"


def integer(n: float) -> str:
    """``1,024``."""
    if not _finite(n):
        return "—"
    return f"{float(n):,.0f}"


def number_against(x: float, target: float, digits: int = 0) -> str:
    """:func:`number` of ``x`` with one more decimal where it rounds to ``target`` at ``digits``, so a
    value judged against that target shows the digit the verdict turns on (a P95 of 500.4 ms misses
    a 500 ms SLA; "500 ms" would not say why).

    >>> number_against(500.4, 500), number_against(488.2, 500), number_against(26.04, 50, 1)
    ('500.4', '488', '26.0')
    """
    return number(x, digits + 1 if _finite(x) and _finite(target) and round(float(x), digits) == round(float(target), digits)
                  else digits)


def expected_count(x: float) -> str:
    """An expected number of things (prefixes that stay cached): whole when within 0.05 of a whole number ("10",
    not "10.0" of 10), else one decimal.

    >>> expected_count(9.98), expected_count(7.34), expected_count(0.0)
    ('10', '7.3', '0')
    """
    return number(x, 0 if _finite(x) and abs(float(x) - round(float(x))) < 0.05 else 1)


def number(x: float, digits: int = 2) -> str:
    """``28.09``; integers without decimals, also an integer that floating-point arithmetic left a
    hair off (3 × 0.05 s × 1000 = 150.00000000000003 ms printed "150.0" among "100" and "200").

    >>> number(28.0912), number(150.00000000000003, 1), number(149.96, 1), number(1e-12, 1)
    ('28.09', '150', '150.0', '0')
    """
    if not _finite(x):
        return "—"
    x = float(x)
    whole = abs(x - round(x)) <= 1e-9 * max(1.0, abs(x))
    return f"{round(x):,.0f}" if whole else f"{x:,.{digits}f}"


def duration(seconds: float) -> str:
    """A latency in the unit a reader takes in at a glance: milliseconds below 10 s, seconds
    below 10 minutes, minutes above (the thresholds on the magnitude: a negative difference to a
    target keeps its sign). The symbols (ms, s, min) are SI and the same in every language.

    >>> duration(0.2863), duration(9.99994), duration(12.345), duration(599.9), duration(1446.6494)
    ('286.3 ms', '9,999.9 ms', '12.3 s', '599.9 s', '24.1 min')
    >>> duration(-0.2137), duration(-1446.6), duration(9.99996), duration(float("nan"))
    ('-213.7 ms', '-24.1 min', '10.0 s', '—')
    """
    return duration_like(seconds, seconds)


def duration_like(seconds: float, like: float) -> str:
    """``seconds`` in the unit :func:`duration` picks for ``like``: the two ends of a range read in one
    unit (a range 6.8–16.9 s, not 6,817.5 ms–16.9 s).

    >>> duration_like(6.8175, 11.5), duration_like(16.9, 11.5), duration_like(0.2376, 0.3495), duration_like(12.0, 0.3)
    ('6.8 s', '16.9 s', '237.6 ms', '12,000.0 ms')
    """
    if not _finite(seconds):
        return "—"
    x, m = float(seconds), abs(float(like)) if _finite(like) else abs(float(seconds))
    if m < 10.0 - 0.05e-3:  # (what rounds to 10,000.0 ms reads as 10.0 s)
        return f"{x * 1e3:,.1f} ms"
    if m < 600.0 - 0.05:
        return f"{x:,.1f} s"
    return f"{x / 60.0:,.1f} min"


def tokens_short(n: int) -> str:
    """``4K`` for 4096, ``128K`` for 131072, else the number: axis labels.

    >>> tokens_short(4096), tokens_short(131072), tokens_short(2050)
    ('4K', '128K', '2,050')
    """
    n = int(n)
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024:,}K"
    return f"{n:,}"


def params_billions(n: float) -> str:
    """``6.74 B`` parameters."""
    return "—" if not _finite(n) else f"{float(n) / 1e9:,.2f} B"


def percent(fraction: float, digits: int = 0) -> str:
    return "—" if not _finite(fraction) else f"{100 * float(fraction):.{digits}f} %"


def gpu_short(name: str) -> str:
    """A GPU's catalog name without its vendor, for cards and chips where space is short.

    >>> gpu_short("NVIDIA H100 SXM5 80GB"), gpu_short("AMD Instinct MI300X 192GB")
    ('H100 SXM5 80GB', 'Instinct MI300X 192GB')
    """
    return name.removeprefix("NVIDIA ").removeprefix("AMD ")
