"""Model and GPU catalogs, read from the data files in ``calc/data`` (each with its sources).

Models: ``calc/data/models/*.json`` are Hugging Face ``config.json`` files with ``_id``,
``_name`` and ``_source`` keys. GPUs: ``calc/data/gpus.json``; their on-demand prices (USD per
GPU-hour, source and date, the other providers' quotes) in ``calc/data/gpu_prices.json``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from calc.spec.hf_config import MAX_CONFIG_BYTES, ConfigError, arch_from_hf_config, parse_config_text
from pydantic import ValidationError

from calc.spec.inputs import CustomGPU, GPUSpec, ModelArch, describe_validation_error
from calc.spec.untrusted import quote

DATA_DIR = Path(__file__).resolve().parents[1] / "data"


class CatalogError(ValueError):
    """An unknown model or GPU id."""


@lru_cache(maxsize=1)
def _models() -> dict[str, ModelArch]:
    out: dict[str, ModelArch] = {}
    for path in sorted((DATA_DIR / "models").glob("*.json")):
        cfg = json.loads(path.read_text())
        arch = arch_from_hf_config(cfg, model_id=cfg.get("_id", path.stem))
        out[arch.id] = arch
    return out


@lru_cache(maxsize=1)
def _model_files() -> dict[str, dict]:
    return {json.loads(p.read_text()).get("_id", p.stem): json.loads(p.read_text())
            for p in sorted((DATA_DIR / "models").glob("*.json"))}


def model_ids() -> list[str]:
    """Catalog model ids (Hugging Face repo ids)."""
    return list(_models())


def list_models() -> list[ModelArch]:
    return list(_models().values())


def model_config_json(model_id: str) -> dict:
    """The raw ``config.json`` (with its ``_source``) of a catalog model."""
    return dict(_model_files()[get_model(model_id).id])


# Words a checkpoint name adds to its base model's without changing the architecture: the chat / instruct
# tunes (-Instruct, -Chat, -it, -Thinking, -Instruct-2507's release date) and Hugging Face's -hf.
_VARIANT_WORDS = frozenset({"instruct", "chat", "it", "hf", "thinking", "base"})


def variant_key(name: str) -> str:
    """The architecture a checkpoint name points at: its last path part, lower case, without a leading
    ``Meta-`` and without the tune words of :data:`_VARIANT_WORDS` (and a 4-digit release date after
    one). Two names with the same key are the same architecture in the catalog.

    >>> [variant_key(n) for n in ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B",
    ...                           "Qwen/Qwen3-235B-A22B-Instruct-2507", "google/gemma-3-27b-it", "meta-llama/Llama-2-7b-chat-hf")]
    ['llama-3.1-8b', 'llama-3.1-8b', 'qwen3-235b-a22b', 'gemma-3-27b', 'llama-2-7b']
    """
    words = name.strip().rsplit("/", 1)[-1].lower().removeprefix("meta-").split("-")
    kept: list[str] = []
    for i, w in enumerate(words):
        dated = w.isdigit() and len(w) == 4 and i > 0 and words[i - 1] in _VARIANT_WORDS
        if w not in _VARIANT_WORDS and not dated:
            kept.append(w)
    return "-".join(kept)


def resolve_variant(name: str) -> ModelArch | None:
    """The catalog model whose architecture ``name`` (an -Instruct / -Chat / -it / -Instruct-2507 … checkpoint
    of it) has, or None.

    >>> resolve_variant("meta-llama/Llama-3.1-8B-Instruct").id, resolve_variant("Qwen/Qwen3-235B-A22B-Instruct-2507").id
    ('meta-llama/Llama-3.1-8B', 'Qwen/Qwen3-235B-A22B')
    >>> resolve_variant("meta-llama/Llama-3.3-70B").id, resolve_variant("meta-llama/Llama-3.1-8B-FP8") is None
    ('meta-llama/Llama-3.3-70B-Instruct', True)
    """
    key = variant_key(name)
    found = [a for a in _models().values() if variant_key(a.id) == key]
    return found[0] if len(found) == 1 else None


def get_model(name_or_path: str) -> ModelArch:
    """A catalog model by Hugging Face id (case-insensitive), short name or file stem, an -Instruct /
    -Chat / -it / -Instruct-2507 … checkpoint of a catalog model (:func:`resolve_variant`: the same
    architecture), or a path to a ``config.json``.

    >>> get_model("META-LLAMA/llama-2-7b-hf").name, get_model("meta-llama/Llama-3.1-8B-Instruct").id
    ('Llama-2-7B', 'meta-llama/Llama-3.1-8B')
    """
    if not isinstance(name_or_path, str):
        raise CatalogError(f"model: got {quote(name_or_path)}, allowed a catalog id or a path to a config.json")
    key = name_or_path.strip().lower()
    for arch in _models().values():
        if key in (arch.id.lower(), arch.name.lower(), arch.id.split("/")[-1].lower()):
            return arch
    if not key.endswith(".json") and len(key) <= 200:
        variant = resolve_variant(key)
        if variant is not None:
            return variant
    path = Path(name_or_path)
    try:  # a 256-character name raises "File name too long" (OSError), a NUL byte ValueError
        is_config = path.suffix == ".json" or path.is_file()
    except (OSError, ValueError):
        is_config = False
    if is_config:
        try:
            with path.open("rb") as f:  # read at most one byte past the limit: size-checked there
                text = f.read(MAX_CONFIG_BYTES + 1)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise CatalogError(f"cannot read model config file {quote(name_or_path)}: {reason}") from None
        return parse_config_text(text, model_id=path.stem)
    raise CatalogError(f"unknown model {quote(name_or_path)}; catalog ids: {', '.join(model_ids())}; "
                       "or give a path to a config.json")


@lru_cache(maxsize=1)
def gpu_prices() -> dict[str, dict]:
    """``calc/data/gpu_prices.json`` ``prices``: per GPU id the default on-demand USD per GPU-hour
    (None where no source was found), its provider, date and source, and ``other_quotes``."""
    return json.loads((DATA_DIR / "gpu_prices.json").read_text())["prices"]


def _price_source(p: dict) -> str | None:
    if p.get("usd_per_gpu_hour") is None:
        return p.get("source")
    return f"{p['provider']}, {p['date']}: {p['source']}"


@lru_cache(maxsize=1)
def _gpus() -> dict[str, GPUSpec]:
    data = json.loads((DATA_DIR / "gpus.json").read_text())
    prices = gpu_prices()
    return {g["id"]: GPUSpec(**g, price_usd_per_hour=prices.get(g["id"], {}).get("usd_per_gpu_hour"),
                             price_source=_price_source(prices.get(g["id"], {})) if g["id"] in prices else None)
            for g in data["gpus"]}


def gpu_ids() -> list[str]:
    return list(_gpus())


def list_gpus() -> list[GPUSpec]:
    return list(_gpus().values())


def get_gpu(gpu_id: str) -> GPUSpec:
    """A catalog GPU by id (case-insensitive).

    >>> get_gpu("A100-80GB").hbm_bw_bytes_per_s
    2039000000000.0
    """
    gpus = _gpus()
    key = gpu_id.strip().lower() if isinstance(gpu_id, str) else None
    if key in gpus:
        return gpus[key]
    raise CatalogError(f"unknown GPU {quote(gpu_id)}; catalog ids: {', '.join(gpus)}")


CUSTOM_GPU_ID = "custom"
MAX_GPU_SPEC_CHARS = 2_000


def custom_gpu(spec: dict | str) -> GPUSpec:
    """A user-defined GPU from a JSON object (or its text) of :class:`calc.spec.inputs.CustomGPU`
    fields: ``memory_gib``, ``hbm_tb_per_s``, ``bf16_tflops``, ``link_gb_per_s`` (required),
    ``fp8_tflops``, ``int8_tops``, ``fp4_tflops``, ``price_usd_per_hour``, ``name`` (optional).

    Raises :class:`CatalogError` naming the field and its allowed range.

    >>> custom_gpu('{"memory_gib": 48, "hbm_tb_per_s": 0.864, "bf16_tflops": 362, "link_gb_per_s": 32}').bf16_flops_per_s
    362000000000000.0
    >>> try:
    ...     custom_gpu({"memory_gib": 0, "hbm_tb_per_s": 1, "bf16_tflops": 1, "link_gb_per_s": 1})
    ... except CatalogError as e:
    ...     print(e)
    gpu_spec: memory_gib: Input should be greater than 0 (got 0); allowed: 0 < memory_gib <= 4096
    """
    if isinstance(spec, (str, bytes)):
        if len(spec) > MAX_GPU_SPEC_CHARS:
            raise CatalogError(f"gpu_spec: longer than {MAX_GPU_SPEC_CHARS:,} characters")
        try:
            spec = json.loads(spec)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CatalogError(f"gpu_spec: not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(spec, dict):
        raise CatalogError("gpu_spec: must be a JSON object of " + ", ".join(CustomGPU.model_fields))
    try:
        return CustomGPU(**{str(k): v for k, v in spec.items()}).to_gpu_spec()
    except ValidationError as exc:
        raise CatalogError(f"gpu_spec: {describe_validation_error(exc)}") from None
    except TypeError as exc:
        raise CatalogError(f"gpu_spec: {exc}") from None


__all__ = ["CUSTOM_GPU_ID", "custom_gpu", "CatalogError", "ConfigError", "get_gpu", "get_model", "gpu_ids", "gpu_prices", "list_gpus", "list_models",
           "model_config_json", "model_ids", "parse_config_text"]
