"""LLM-inference calculator: pure, vectorized NumPy formulas with pydantic inputs.

Layers: ``units`` / ``precision`` / ``params`` / ``memory`` / ``roofline`` / ``perf`` /
``serving`` (one function per formula) → ``scenario`` (composition) → ``cli``.
This package imports neither streamlit nor plotly.
"""
