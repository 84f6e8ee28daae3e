"""Unit constants. Everything inside ``calc`` is SI: bytes, seconds, FLOPs, bytes/s, FLOP/s.

GB (1e9 bytes, what vendors print on datasheets) and GiB (2**30 bytes, what CUDA, PyTorch,
nvidia-smi "MiB" and vLLM logs print) are different units; convert only where a number is shown.

>>> 80 * GB / GiB
74.50580596923828
>>> round(13_476_831_232 / GiB, 2)   # Llama-2-7B FP16 weights, as vLLM logs them
12.55
"""

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KiB = 2.0**10
MiB = 2.0**20
GiB = 2.0**30
TiB = 2.0**40

MS = 1e-3  # seconds per millisecond
US = 1e-6  # seconds per microsecond

TERA = 1e12
PETA = 1e15
