"""Command line: ``python -m calc`` (models, gpus, memory, estimate)."""
