"""ui.memory.cached: the memory page's memoized calculator calls give what calc gives, shared read-only;
ui.compare's chip labels made once per language are the ones formatted per call."""

import numpy as np
import pytest

from calc.sizing import scenario as S
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from ui import controls as C
from ui.i18n import Translator
from ui.memory import cached, explain
from ui.state import build_scenario

ARCH, GPU = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")
SERVING = ServingConfig(dtype="float16", max_model_len=4096)


def _same(a: S.MemoryResult, b: S.MemoryResult) -> None:
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name


@pytest.mark.parametrize("concurrency, context", [(16, 2048), (1, 4096), (np.array([1, 2, 8, 58, 64]), 2048),
                                                  (16, np.array([512, 1024, 4096])), (None, None)])
def test_same_numbers_as_calc(concurrency, context):
    kw = dict(concurrency=concurrency, context_tokens=context)
    _same(cached.memory_for(ARCH, GPU, SERVING, Efficiency(), **kw),
          S.memory_for(ARCH, GPU, SERVING, Efficiency(), **kw))


def test_known_value_and_one_result_per_inputs():
    # Llama-2-7B FP16: 2 (K, V) x 32 layers x 32 heads x 128 x 2 B = 524,288 B per token; x 2,048 tokens = 1 GiB
    r = cached.memory_for(ARCH, GPU, SERVING, Efficiency(), concurrency=16, context_tokens=2048)
    assert float(r.kv_bytes_per_token) == 2 * 32 * 32 * 128 * 2
    assert float(r.kv_bytes_per_request) == 2**30
    assert cached.memory_for(ARCH, GPU, SERVING, Efficiency(), concurrency=16, context_tokens=2048) is r
    other = cached.memory_for(ARCH, GPU, SERVING, Efficiency(), concurrency=17, context_tokens=2048)
    assert other is not r and float(other.kv_in_use_bytes) == 17 * 2**30  # 17 requests of 1 GiB fit (58 do)


def test_shared_results_are_read_only():
    r = cached.memory_for(ARCH, GPU, SERVING, Efficiency(), concurrency=np.array([1, 2, 4]), context_tokens=2048)
    with pytest.raises(ValueError):
        r.kv_in_use_bytes[0] = 0.0


def test_the_callers_array_is_not_kept():
    x = np.array([1, 2, 4])
    r = cached.memory_for(ARCH, GPU, SERVING, Efficiency(), concurrency=x, context_tokens=2048)
    x[0] = 99  # the caller's array changes afterwards: the cached result does not
    np.testing.assert_array_equal(r.kv_in_use_bytes, np.array([1, 2, 4]) * 2**30)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_panels_are_the_explain_panels(lang):
    sc = build_scenario({c.key: c.default for c in C.SHARED})
    s, t = sc.serving, Translator(lang)
    numbers = S.model_numbers(sc.arch, dtype=s.dtype, quantization=s.quantization, kv_cache_dtype=s.kv_cache_dtype,
                              mxfp4_backend=S.mxfp4_backend(sc.gpu))
    from calc.sizing.layout import rank_numbers

    numbers = rank_numbers(sc.arch, numbers, tensor_parallel_size=s.tensor_parallel_size,
                           pipeline_parallel_size=s.pipeline_parallel_size, data_parallel_size=s.data_parallel_size,
                           enable_expert_parallel=s.enable_expert_parallel)
    r = S.memory_for(sc.arch, sc.gpu, s, sc.efficiency, concurrency=sc.concurrency, context_tokens=sc.context_tokens)
    inputs = explain.Inputs(arch=sc.arch, serving=s, resolved=sc.resolved, efficiency=sc.efficiency, numbers=numbers,
                            result=r, context_tokens=sc.context_tokens)
    assert cached.memory_panels(sc, t) == explain.memory_panels(inputs, t)


def test_panels_follow_the_language():
    sc = build_scenario({c.key: c.default for c in C.SHARED})
    en, zh = cached.memory_panels(sc, Translator("en")), cached.memory_panels(sc, Translator("zh"))
    assert [p.key for p in en] == [p.key for p in zh] and en[0].title != zh[0].title


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chip_labels_once_per_language_are_the_formatted_ones(lang):
    from ui.compare import _chip_labels, chip_label
    from ui.perf.controls import OVERLAYS

    t = Translator(lang)
    labels = _chip_labels(lang)
    assert set(labels) == set(OVERLAYS.choices())
    assert all(labels[tok] == chip_label(tok, t) for tok in OVERLAYS.choices())
