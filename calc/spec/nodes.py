"""Multi-GPU nodes and their links: how many GPUs share a server, an NVLink (or xGMI) domain, and
the scale-out network between domains (``calc/data/nodes.json``, every number with its source).

The GPU's own link (NVLink / Infinity Fabric per GPU) stays in ``gpus.json``; this file adds what a
multi-node deployment crosses: 8-GPU HGX boards (NVLink domain = node), GB200 NVL72 racks (one
NVLink domain of 72 GPUs over trays of 4), PCIe servers (domain of 1 or a bridged pair), and the
InfiniBand / RoCE NIC per GPU (e.g. 8 × 400 Gb/s = 50 GB/s per GPU, one direction).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from calc.spec.catalog import DATA_DIR
from calc.spec.inputs import GPUSpec


@dataclass(frozen=True)
class NodeSpec:
    """One GPU's server and network, SI units (bytes/s one direction per GPU)."""

    gpus_per_node: int
    nvlink_domain_gpus: int
    scale_out_bw_bytes_per_s: float
    scale_out: str
    sources: tuple[str, ...] = ()
    uncertain: tuple[str, ...] = ()


@lru_cache(maxsize=1)
def _nodes() -> tuple[dict, dict]:
    data = json.loads((DATA_DIR / "nodes.json").read_text())
    return data["_default"], data["nodes"]


def _spec(entry: dict) -> NodeSpec:
    return NodeSpec(gpus_per_node=int(entry["gpus_per_node"]), nvlink_domain_gpus=int(entry["nvlink_domain_gpus"]),
                    scale_out_bw_bytes_per_s=float(entry["scale_out_bw_bytes_per_s"]), scale_out=entry["scale_out"],
                    sources=tuple(entry.get("sources", ())), uncertain=tuple(entry.get("uncertain", ())))


def node_for(gpu: GPUSpec | str) -> NodeSpec:
    """The node a GPU comes in (the ``_default`` 8-GPU, 400 Gb/s-per-GPU server when unknown).
    A PCIe-only GPU of unknown id gets an NVLink domain of 1.

    >>> n = node_for("h200"); (n.gpus_per_node, n.nvlink_domain_gpus, n.scale_out_bw_bytes_per_s / 1e9)
    (8, 8, 50.0)
    >>> node_for("gb200").nvlink_domain_gpus
    72
    """
    default, nodes = _nodes()
    gid = gpu if isinstance(gpu, str) else gpu.id
    if gid in nodes:
        return _spec(nodes[gid])
    spec = _spec(default)
    if not isinstance(gpu, str) and gpu.link_topology == "pcie":
        spec = NodeSpec(spec.gpus_per_node, 1, spec.scale_out_bw_bytes_per_s, spec.scale_out, spec.sources,
                        spec.uncertain)
    return spec


def node_ids() -> tuple[str, ...]:
    """GPU ids with an entry of their own."""
    return tuple(_nodes()[1])
