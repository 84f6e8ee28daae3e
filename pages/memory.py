import streamlit as st

st.title("Memory")
st.info("Not yet: the memory page is being built.")
