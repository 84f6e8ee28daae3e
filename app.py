"""Entry point: page setup and navigation only."""

import streamlit as st

st.set_page_config(page_title="LLM inference calculator", page_icon="🧮", layout="wide")
pg = st.navigation([st.Page("pages/memory.py", title="Memory", default=True)])
pg.run()
