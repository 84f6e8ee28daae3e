"""The memory page's line on the multi-GPU layout (PP, DP, EP, nodes): what "per GPU" and "per rank" mean."""

from __future__ import annotations

from calc.sizing.layout import expert_parallel_size, nodes_needed
from calc.spec.nodes import node_for


def layout_note(sc, result, t) -> str | None:
    """Markdown for a layout beyond TP alone (None for TP alone): GPUs, nodes, EP, and the requests of
    max_model_len the DP ranks hold together; for MLA with DP, why the latent is no longer copied."""
    s = sc.serving
    tp, pp, dp = s.tensor_parallel_size, s.pipeline_parallel_size, s.data_parallel_size
    if pp == 1 and dp == 1 and not s.enable_expert_parallel and s.nodes is None:
        return None
    gpus = tp * pp * dp
    nodes = s.nodes or int(nodes_needed(world_size=gpus, gpus_per_node=node_for(sc.gpu).gpus_per_node))
    ep = int(expert_parallel_size(tensor_parallel_size=tp, data_parallel_size=dp,
                                  enable_expert_parallel=s.enable_expert_parallel))
    text = t("layout.summary", tp=tp, pp=pp, dp=dp, gpus=gpus, nodes=nodes,
             ep=t("layout.ep", ep=ep) if ep > 1 and sc.arch.moe is not None else "",
             total=float(result.max_concurrency) * dp if bool(result.fits) else 0.0)
    if sc.arch.mla is not None and dp > 1:
        text += "  \n" + t("layout.mla_dp", tp=max(tp, dp), dp=dp)
    return text
