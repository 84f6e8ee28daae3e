"""Tensor-parallel all-reduce: which link a TP group crosses, and what one all-reduce costs.

Link per topology and TP size n (one-direction bytes/s per GPU, physics.md A6; ``link_topology``
in ``calc/data/gpus.json``):

    switch        B(n) = B_link                       NVSwitch: every GPU at full NVLink speed
    mesh          B(n) = (n − 1) · B_peer             fully connected peer links (AMD xGMI: 64 GB/s each)
    bridge_pairs  B(2) = B_link,  B(n > 2) = B_pcie   a 2-GPU NVLink bridge; larger groups ring over PCIe
    pcie          B(n) = B_pcie

Time of one all-reduce of S bytes over n GPUs (ring / bus-bandwidth formula, NCCL
``doc/PERFORMANCE.md``; the mesh's direct reduce-scatter + all-gather gives the same 2·S/(n·B_peer)):

    NCCL     t = α_nccl + 2(n − 1)/n · S / (η · B(n))
    custom   t = α_c    + 2(n − 1)/n · S / min(η · B(n), B_c)        (vLLM's custom all-reduce)

vLLM uses its custom all-reduce (``custom_all_reduce.py``) only for n ∈ {2, 4, 6, 8}, messages
below 8 MiB, with GPU peer-to-peer access, and at n > 2 only when the GPUs are fully connected
(NVLink switch or xGMI mesh: "not supported on more than two PCIe-only GPUs"). Where it is
allowed the faster of the two is taken: vLLM's backend order (custom, symmetric-memory, NCCL)
was tuned by benchmark to pick the fastest per size. Every function broadcasts over n and S.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOPOLOGIES: tuple[str, ...] = ("switch", "mesh", "bridge_pairs", "pcie")
CUSTOM_ALLREDUCE_WORLD_SIZES: tuple[int, ...] = (2, 4, 6, 8)  # vLLM CustomAllreduce._SUPPORTED_WORLD_SIZES
CUSTOM_ALLREDUCE_MAX_BYTES = 8192 * 1024  # vLLM CustomAllreduce(max_size=8192 * 1024); used when size < max


def allreduce_bandwidth_bytes_per_s(*, link_topology: str, tensor_parallel_size, link_bw_bytes_per_s,
                                    peer_link_bw_bytes_per_s=None, pcie_bw_bytes_per_s=None):
    """One-direction per-GPU bandwidth an all-reduce over ``tensor_parallel_size`` GPUs can use
    (before the achievable fraction η): the table in the module docstring.

    H100 PCIe (bridge 300 GB/s, PCIe Gen5 64 GB/s) at TP 2 and 8; MI300X (64 GB/s per peer) at
    TP 2, 4, 8: 64, 192, 448 GB/s.

    >>> allreduce_bandwidth_bytes_per_s(link_topology="bridge_pairs", tensor_parallel_size=[2, 8],
    ...     link_bw_bytes_per_s=300e9, pcie_bw_bytes_per_s=64e9).tolist()
    [300000000000.0, 64000000000.0]
    >>> allreduce_bandwidth_bytes_per_s(link_topology="mesh", tensor_parallel_size=[2, 4, 8],
    ...     link_bw_bytes_per_s=448e9, peer_link_bw_bytes_per_s=64e9).tolist()
    [64000000000.0, 192000000000.0, 448000000000.0]
    """
    n = np.asarray(tensor_parallel_size, dtype=float)
    link = np.asarray(link_bw_bytes_per_s, dtype=float)
    pcie = link if pcie_bw_bytes_per_s is None else np.asarray(pcie_bw_bytes_per_s, dtype=float)
    if link_topology == "switch":
        out = link + 0.0 * n
    elif link_topology == "mesh":
        peer = link / 7.0 if peer_link_bw_bytes_per_s is None else np.asarray(peer_link_bw_bytes_per_s, dtype=float)
        out = np.maximum(n - 1.0, 1.0) * peer
    elif link_topology == "bridge_pairs":
        out = np.where(n <= 2, link, pcie)
    elif link_topology == "pcie":
        out = pcie + 0.0 * n
    else:
        raise ValueError(f"link_topology {link_topology!r} is not one of {TOPOLOGIES}")
    return out if np.ndim(out) else float(out)


def custom_allreduce_available(*, link_topology: str, tensor_parallel_size, p2p: bool):
    """Whether vLLM can run its custom all-reduce for a TP group of n GPUs: n ∈ {2, 4, 6, 8},
    peer-to-peer access, and n = 2 or a fully connected group (switch / mesh).

    >>> custom_allreduce_available(link_topology="bridge_pairs", tensor_parallel_size=[1, 2, 4], p2p=True).tolist()
    [False, True, False]
    """
    n = np.asarray(tensor_parallel_size)
    fully_connected = link_topology in ("switch", "mesh")
    supported = (n >= 2) & (n <= 8) & (n % 2 == 0)  # CUSTOM_ALLREDUCE_WORLD_SIZES (np.isin is 10x slower)
    return supported & bool(p2p) & ((n == 2) | fully_connected)


def custom_allreduce_latency_s(gpu, efficiency) -> float:
    """The custom all-reduce's latency term α_c for this GPU's vendor: vLLM's ROCm build on AMD GPUs
    (``rocm_custom_allreduce_latency_s``), its CUDA kernel elsewhere (``custom_allreduce_latency_s``).

    >>> from calc.spec.catalog import get_gpu
    >>> from calc.spec.inputs import Efficiency
    >>> [custom_allreduce_latency_s(get_gpu(g), Efficiency()) * 1e6 for g in ("h100-sxm", "mi300x")]
    [8.0, 30.0]
    """
    if getattr(gpu, "vendor", "nvidia") == "amd":
        return float(efficiency.rocm_custom_allreduce_latency_s)
    return float(efficiency.custom_allreduce_latency_s)


@dataclass(frozen=True)
class AllReduceLink:
    """The link a TP group of a GPU crosses: bandwidth before η, whether the custom kernel runs,
    and the latency term of a small (decode-sized) all-reduce."""

    bandwidth_bytes_per_s: object  # one direction, per GPU
    custom_allreduce: object  # bool (array) per TP size
    link: str  # what the bandwidth is ("NVLink bridge", "PCIe", ...) for explanations
    latency_s: object = 0.0  # α of a small message: the custom kernel's where it runs, else NCCL's (0 at TP 1)


def allreduce_link(gpu, tensor_parallel_size, efficiency=None) -> AllReduceLink:
    """:func:`allreduce_bandwidth_bytes_per_s`, :func:`custom_allreduce_available` and the
    small-message latency (``efficiency``: :class:`calc.spec.inputs.Efficiency`, default its
    defaults) for a :class:`calc.spec.inputs.GPUSpec` and TP size(s).

    >>> from calc.spec.catalog import get_gpu
    >>> l = allreduce_link(get_gpu("h100-pcie"), [1, 2, 8])
    >>> l.bandwidth_bytes_per_s.tolist(), l.custom_allreduce.tolist(), (l.latency_s * 1e6).round(1).tolist()
    ([300000000000.0, 300000000000.0, 64000000000.0], [False, True, False], [0.0, 8.0, 50.0])
    """
    bw = allreduce_bandwidth_bytes_per_s(
        link_topology=gpu.link_topology, tensor_parallel_size=tensor_parallel_size,
        link_bw_bytes_per_s=gpu.interconnect_bw_bytes_per_s, peer_link_bw_bytes_per_s=gpu.link_peer_bw_bytes_per_s,
        pcie_bw_bytes_per_s=gpu.pcie_bw_bytes_per_s)
    custom = custom_allreduce_available(link_topology=gpu.link_topology, tensor_parallel_size=tensor_parallel_size,
                                        p2p=gpu.p2p)
    names = {"switch": "NVLink (switch)", "mesh": "Infinity Fabric peer links", "pcie": "PCIe"}
    n = np.asarray(tensor_parallel_size)
    link = names.get(gpu.link_topology) or ("NVLink bridge" if np.all(n <= 2) else "PCIe")
    if efficiency is None:
        from calc.spec.inputs import Efficiency  # noqa: PLC0415 (calc.spec imports nothing from calc.timing)

        efficiency = Efficiency()
    latency = np.where(n > 1, np.where(custom, custom_allreduce_latency_s(gpu, efficiency), efficiency.allreduce_latency_s), 0.0)
    return AllReduceLink(bandwidth_bytes_per_s=bw, custom_allreduce=custom, link=link,
                         latency_s=latency if np.ndim(latency) else float(latency))


def allreduce_time_s(*, tensor_parallel_size, bytes_per_allreduce, link_bw_bytes_per_s, latency_s,
                     custom_allreduce=False, custom_latency_s=0.0, custom_bw_bytes_per_s=np.inf,
                     custom_max_bytes=CUSTOM_ALLREDUCE_MAX_BYTES):
    """One all-reduce of S bytes over n GPUs (module docstring); 0 for n = 1.

    ``link_bw_bytes_per_s`` is the achievable one-direction bandwidth η·B(n); ``latency_s`` is
    NCCL's α. Where ``custom_allreduce`` holds and S < ``custom_max_bytes`` the custom kernel's
    time α_c + 2(n − 1)/n · S / min(η·B, B_c) is taken if it is lower.

    Llama-2-7B, 512 tokens, TP 2 on NVLink 3 (η·B = 300 GB/s): S = 512·4096·2 B = 4 MiB,
    t = α + 1 · 4.19e6 / 3e11 = α + 14 µs. Llama-3.1-8B decode at batch 1, TP 2 on H100 NVLink:
    S = 4096·2 B = 8 KiB; custom 8 µs + 8192 / 50e9 = 8.16 µs against NCCL 50 µs + 8192 / 315e9.

    >>> round(float(allreduce_time_s(tensor_parallel_size=2, bytes_per_allreduce=512*4096*2,
    ...     link_bw_bytes_per_s=3e11, latency_s=0.0)) * 1e6, 1)
    14.0
    >>> round(float(allreduce_time_s(tensor_parallel_size=2, bytes_per_allreduce=8192, link_bw_bytes_per_s=315e9,
    ...     latency_s=50e-6, custom_allreduce=True, custom_latency_s=8e-6, custom_bw_bytes_per_s=50e9)) * 1e6, 2)
    8.16
    """
    n = np.asarray(tensor_parallel_size, dtype=float)
    s = np.asarray(bytes_per_allreduce, dtype=float)
    if np.all(n <= 1.0):  # no all-reduce anywhere: the zeros of the last line, its terms not computed
        return np.zeros(np.broadcast_shapes(*(np.shape(v) for v in (
            n, s, link_bw_bytes_per_s, latency_s, custom_allreduce, custom_latency_s, custom_bw_bytes_per_s,
            custom_max_bytes))))
    bus = 2.0 * (n - 1.0) / np.maximum(n, 1.0) * s
    link = np.asarray(link_bw_bytes_per_s, dtype=float)
    nccl = np.asarray(latency_s, dtype=float) + bus / link
    custom_bw = np.minimum(link, np.asarray(custom_bw_bytes_per_s, dtype=float))
    custom = np.asarray(custom_latency_s, dtype=float) + bus / custom_bw
    use_custom = np.asarray(custom_allreduce, dtype=bool) & (s < custom_max_bytes)
    t = np.where(use_custom, np.minimum(custom, nccl), nccl)
    return np.where(n > 1, t, 0.0)
