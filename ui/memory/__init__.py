"""Memory view: figures, sweeps and why-panels of the memory and KV-table pages."""
