"""The prefix-cache page: hit rate against the cache size and the load, TTFT with and without."""
