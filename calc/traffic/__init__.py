"""Request-level traffic: workloads, a step-by-step vLLM scheduler simulator, percentiles and SLAs."""
