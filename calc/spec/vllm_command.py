"""``vllm serve`` command lines, both ways: :func:`serve_command` writes one for a scenario,
:func:`parse_serve_command` reads a pasted one (or the flags after a ``docker run …
vllm/vllm-openai`` image) back into options. Pure text processing, no UI.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from calc.spec.inputs import ServingConfig


def serve_command(*, model_id: str, serving: ServingConfig, max_model_len: int, max_num_seqs: int,
                  max_num_batched_tokens: int, chunked: bool) -> str:
    """The ``vllm serve`` line of a scenario (one flag per line, ready to paste in a shell).

    >>> print(serve_command(model_id="meta-llama/Llama-2-7b-hf", serving=ServingConfig(dtype="float16"),
    ...       max_model_len=4096, max_num_seqs=24, max_num_batched_tokens=2048, chunked=True))
    vllm serve meta-llama/Llama-2-7b-hf \\
      --tensor-parallel-size 1 \\
      --dtype float16 \\
      --max-model-len 4096 \\
      --max-num-seqs 24 \\
      --max-num-batched-tokens 2048 \\
      --gpu-memory-utilization 0.9 \\
      --kv-cache-dtype auto \\
      --enable-chunked-prefill
    """
    s = serving
    flags = [f"--tensor-parallel-size {s.tensor_parallel_size}", f"--dtype {s.dtype}"]
    if s.quantization != "none":
        flags.append(f"--quantization {s.quantization}")
    flags += [f"--max-model-len {max_model_len}", f"--max-num-seqs {max_num_seqs}",
              f"--max-num-batched-tokens {max_num_batched_tokens}",
              f"--gpu-memory-utilization {s.gpu_memory_utilization:g}", f"--kv-cache-dtype {s.kv_cache_dtype}"]
    if s.block_size != 16:
        flags.append(f"--block-size {s.block_size}")
    flags.append("--enable-chunked-prefill" if chunked else "--no-enable-chunked-prefill")
    return " \\\n  ".join([f"vllm serve {shlex.quote(model_id)}"] + flags)
