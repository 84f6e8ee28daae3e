"""Property tests (hypothesis) of the memory model's invariants."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from calc.sizing import memory as mem
from calc.spec.catalog import get_gpu, get_model, gpu_ids, model_ids
from calc.spec.inputs import ServingConfig, describe_validation_error
from calc.sizing.scenario import memory_for, memory_model

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

block_sizes = st.sampled_from([1, 8, 16, 32, 64, 128])
layers = st.integers(1, 200)
head_dims = st.sampled_from([32, 64, 80, 96, 128, 256])
bytes_per_element = st.sampled_from([1, 2, 4])


@st.composite
def memory_inputs(draw, *, absurd=False):
    """Keyword arguments of calc.sizing.scenario.memory_model for one configuration (plain numbers)."""
    big = 1e30 if absurd else 2e12  # absurd: a 1e30-byte GPU or model
    kv_heads = draw(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128]))
    group = draw(st.sampled_from([1, 2, 4, 8]))
    max_model_len = draw(st.integers(2, 10**9 if absurd else 2_000_000))
    block = draw(block_sizes)
    return dict(
        usable_memory_bytes=draw(st.floats(1.0 if absurd else 1e9, big)),
        gpu_memory_utilization=draw(st.floats(0.01, 1.0)),
        tensor_parallel_size=draw(st.sampled_from([1, 2, 4, 8, 16, 32, 64])),
        sharded_weight_bytes=draw(st.floats(0.0, big)),
        replicated_weight_bytes=draw(st.floats(0.0, 1e9)),
        kv_proj_bytes_per_head=draw(st.floats(0.0, 1e10)),
        num_kv_heads=kv_heads,
        kv_bytes_per_token_per_head_full=float(draw(st.integers(1, 1_000_000))),
        kv_bytes_per_token_per_head_sliding=float(draw(st.sampled_from([0, 0, 512, 4096]))),
        sliding_window=draw(st.integers(1, 200_000)),
        hidden_size=draw(st.integers(64, 65536)),
        ffn_intermediate_per_token=draw(st.integers(64, 262_144)),
        num_heads=kv_heads * group,
        head_dim=draw(head_dims),
        vocab_size=draw(st.integers(1000, 1_000_000)),
        activation_bytes=draw(st.sampled_from([2.0, 4.0])),
        max_model_len=max_model_len,
        max_num_seqs=draw(st.integers(1, 4096)),
        max_num_batched_tokens=draw(st.integers(1, 65536)),
        block_size=block,
        non_torch_overhead_bytes=draw(st.floats(0.0, 4e9)),
        nccl_overhead_bytes=draw(st.floats(0.0, 4e9)),
        live_hidden_buffers=draw(st.floats(0.0, 8.0)),
        concurrency=draw(st.integers(1, 10**9 if absurd else 100_000)),
        context_tokens=draw(st.integers(1, max_model_len)),
    )


class TestKvLinearInTokens:
    @SETTINGS
    @given(layers, st.integers(1, 128), head_dims, bytes_per_element, st.integers(0, 10**7), st.integers(0, 10**7))
    def test_per_token_size_times_tokens_is_additive(self, L, kv_heads, d, b, t1, t2):
        per_token = mem.kv_bytes_per_token(num_layers=L, num_kv_heads=kv_heads, head_dim=d, bytes_per_element=b)
        kv = lambda t: mem.kv_bytes_per_sequence(context_tokens=t, kv_bytes_per_token_full=per_token, block_size=1)  # noqa: E731
        assert kv(t1 + t2) == kv(t1) + kv(t2)
        assert kv(t1) == t1 * per_token

    @SETTINGS
    @given(st.integers(1, 10**6), block_sizes, st.integers(0, 10**5), st.integers(1, 50))
    def test_whole_blocks_scale_linearly(self, per_token, block, n_blocks, k):
        kv = lambda t: mem.kv_bytes_per_sequence(context_tokens=t, kv_bytes_per_token_full=per_token,  # noqa: E731
                                                 block_size=block)
        assert kv(k * n_blocks * block) == k * kv(n_blocks * block)

    @SETTINGS
    @given(st.integers(1, 10**6), block_sizes, st.integers(0, 10**7), st.integers(0, 10**7))
    def test_paged_kv_never_shrinks_with_more_tokens(self, per_token, block, t1, t2):
        lo, hi = sorted((t1, t2))
        kv = lambda t: mem.kv_bytes_per_sequence(context_tokens=t, kv_bytes_per_token_full=per_token,  # noqa: E731
                                                 block_size=block)
        assert kv(lo) <= kv(hi) < kv(lo) + (hi - lo + block) * per_token


class TestGqaDividesKv:
    @SETTINGS
    @given(layers, st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([1, 2, 4, 8, 16, 32]), head_dims, bytes_per_element)
    def test_group_factor(self, L, kv_heads, group, d, b):
        kw = dict(num_layers=L, head_dim=d, bytes_per_element=b)
        mha = mem.kv_bytes_per_token(num_kv_heads=kv_heads * group, **kw)
        gqa = mem.kv_bytes_per_token(num_kv_heads=kv_heads, **kw)
        assert mha == gqa * group  # heads / kv_heads = group


class TestKvPerGpuUnderTp:
    @SETTINGS
    @given(st.sampled_from([1, 2, 4, 8, 16, 32, 64]), st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256]))
    def test_heads_per_rank(self, kv_heads, tp):
        got = mem.kv_heads_per_rank(num_kv_heads=kv_heads, tensor_parallel_size=tp)
        assert got == (1 if tp >= kv_heads else kv_heads // tp)

    @SETTINGS
    @given(memory_inputs())
    def test_kv_per_gpu_stops_shrinking_past_kv_heads(self, kw):
        tps = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256])
        r = memory_model(**dict(kw, tensor_parallel_size=tps))
        kv = np.broadcast_to(r.kv_bytes_per_token, tps.shape)
        assert np.all(np.diff(kv) <= 0)  # never grows with TP
        past = tps >= kw["num_kv_heads"]
        assert np.all(kv[past] == kv[past][0])  # flat once TP >= KV heads (heads replicated)
        per_head = kw["kv_bytes_per_token_per_head_full"] + kw["kv_bytes_per_token_per_head_sliding"]
        assert kv[past][0] == per_head


class TestStackSumsToBudget:
    @SETTINGS
    @given(memory_inputs())
    def test_weights_activation_overhead_pool(self, kw):
        r = memory_model(**kw)
        total = r.weights_bytes + r.activation_bytes + r.overhead_bytes + r.kv_pool_bytes
        assert total == pytest.approx(kw["usable_memory_bytes"] * kw["gpu_memory_utilization"], rel=1e-9, abs=1e-3)
        assert r.budget_bytes + r.reserved_bytes == pytest.approx(kw["usable_memory_bytes"])

    @SETTINGS
    @given(memory_inputs())
    def test_pool_holds_whole_blocks(self, kw):
        r = memory_model(**kw)
        block_bytes = kw["block_size"] * r.kv_bytes_per_token
        used = r.num_blocks * block_bytes
        assert used <= max(float(r.kv_pool_bytes), 0.0) + 1e-6 * block_bytes
        assert max(float(r.kv_pool_bytes), 0.0) - used < block_bytes * (1 + 1e-9)
        assert 0 <= r.kv_in_use_bytes <= used * (1 + 1e-12) + 1e-6


class TestConcurrencyMonotoneInMemory:
    @SETTINGS
    @given(memory_inputs(), st.floats(1.0, 10.0))
    def test_more_gpu_memory_never_lowers_concurrency(self, kw, factor):
        small = memory_model(**kw)
        large = memory_model(**dict(kw, usable_memory_bytes=kw["usable_memory_bytes"] * factor))
        assert large.num_blocks >= small.num_blocks
        assert large.max_concurrency >= small.max_concurrency
        assert large.max_concurrency_at_context >= small.max_concurrency_at_context
        assert large.contiguous_max_sequences >= small.contiguous_max_sequences
        assert bool(large.fits) or not bool(small.fits)

    @SETTINGS
    @given(memory_inputs())
    def test_catalog_gpus_sweep(self, kw):
        # every catalog GPU's memory, sorted: max concurrency is sorted too
        usable = np.sort([get_gpu(g).usable_memory_bytes for g in gpu_ids()])
        r = memory_model(**dict(kw, usable_memory_bytes=usable))
        assert np.all(np.diff(np.broadcast_to(r.max_concurrency, usable.shape)) >= 0)


class TestPagedWaste:
    @SETTINGS
    @given(st.integers(1, 10**7), block_sizes, st.integers(1, 10**6))
    def test_less_than_one_block(self, tokens, block, per_token):
        waste = mem.paged_waste_bytes(tokens=tokens, block_size=block, kv_bytes_per_token=per_token)
        assert 0 <= waste < block * per_token

    @SETTINGS
    @given(block_sizes, st.integers(1, 10**5), st.integers(1, 10**7), st.integers(1, 10**6))
    def test_never_more_than_contiguous(self, block, max_blocks, tokens, per_token):
        # max_model_len a whole number of blocks (4096, 8192, 131072, ... in practice)
        max_model_len = max_blocks * block
        tokens = min(tokens, max_model_len)
        paged = mem.paged_waste_bytes(tokens=tokens, block_size=block, kv_bytes_per_token=per_token)
        contiguous = mem.contiguous_waste_bytes(tokens=tokens, max_model_len=max_model_len, kv_bytes_per_token=per_token)
        assert paged <= contiguous

    @SETTINGS
    @given(block_sizes, st.integers(2, 10**7), st.integers(1, 10**7), st.integers(1, 10**6))
    def test_any_max_model_len_within_one_block(self, block, max_model_len, tokens, per_token):
        # If max_model_len is not a multiple of the block, a request near it can waste more than
        # a contiguous reservation, but by less than one block.
        tokens = min(tokens, max_model_len)
        paged = mem.paged_waste_bytes(tokens=tokens, block_size=block, kv_bytes_per_token=per_token)
        contiguous = mem.contiguous_waste_bytes(tokens=tokens, max_model_len=max_model_len, kv_bytes_per_token=per_token)
        assert paged < contiguous + block * per_token

    @SETTINGS
    @given(memory_inputs())
    def test_in_the_memory_model(self, kw):
        r = memory_model(**kw)
        assert 0 <= r.paged_waste_bytes < kw["block_size"] * r.kv_bytes_per_token


class TestFitsIsData:
    @SETTINGS
    @given(memory_inputs(absurd=True))
    def test_boolean_never_an_exception(self, kw):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow / divide-by-zero either
            r = memory_model(**kw)
        assert isinstance(r.fits, np.ndarray) and r.fits.dtype == np.bool_
        assert r.concurrency_fits.dtype == np.bool_
        if not r.fits:
            assert r.kv_pool_bytes <= 0 or r.max_concurrency < 1

    @SETTINGS
    @given(st.lists(memory_inputs(absurd=True), min_size=2, max_size=20))
    def test_vectorized_equals_scalar(self, configs):
        keys = configs[0].keys()
        arrays = {k: np.array([c[k] for c in configs]) for k in keys}
        r = memory_model(**arrays)
        assert r.fits.shape == (len(configs),)
        for i, c in enumerate(configs):
            one = memory_model(**c)
            assert r.fits[i] == one.fits and r.num_blocks[i] == one.num_blocks
            assert r.kv_pool_bytes[i] == one.kv_pool_bytes and r.max_concurrency[i] == one.max_concurrency

    @settings(max_examples=60, deadline=None)
    @given(st.sampled_from(sorted(model_ids())), st.sampled_from(sorted(gpu_ids())),
           st.sampled_from([1, 2, 4, 8]), st.floats(0.05, 1.0), st.sampled_from(["none", "fp8", "awq"]),
           st.integers(1, 10**6))
    def test_catalog_scenarios(self, model_id, gpu_id, tp, util, quantization, concurrency):
        arch = get_model(model_id)
        assume(arch.num_attention_heads % tp == 0)
        serving = ServingConfig(tensor_parallel_size=tp, gpu_memory_utilization=util, quantization=quantization,
                                max_model_len=min(arch.max_position_embeddings, 32768), concurrency=concurrency)
        r = memory_for(arch, get_gpu(gpu_id), serving)
        assert r.fits.dtype == np.bool_ and r.fits.shape == ()


class TestValidationProperties:
    @SETTINGS
    @given(st.sampled_from(["tensor_parallel_size", "max_model_len", "max_num_seqs", "max_num_batched_tokens",
                            "input_len", "output_len", "concurrency"]),
           st.one_of(st.integers(max_value=0), st.integers(min_value=10**9)))
    def test_out_of_range_ints_name_the_field_and_range(self, field, value):
        with pytest.raises(ValidationError) as info:
            ServingConfig(**{field: value})
        msg = describe_validation_error(info.value)
        assert msg.startswith(f"{field}: ") and f"allowed: 1 <= {field} <= " in msg and "\n" not in msg

    @SETTINGS
    @given(st.floats(allow_nan=True, allow_infinity=True))
    def test_utilization(self, value):
        try:
            ServingConfig(gpu_memory_utilization=value)
        except ValidationError as e:
            assert "allowed: 0 < gpu_memory_utilization <= 1" in describe_validation_error(e)
        else:
            assert 0 < value <= 1
