"""Memory: weights, KV cache, activations, overheads, the KV pool (vLLM's accounting), course figures."""
