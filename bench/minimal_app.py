"""The reference for bench/bench_pages.py: one title, one slider, one Plotly line chart."""

import plotly.graph_objects as go
import streamlit as st

st.title("Minimal app")
n = st.slider("concurrency", 1, 1024, 16, key="concurrency")
st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3, 4], y=[1, 4, 2, n])), key="chart")
