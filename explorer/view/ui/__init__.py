"""The only package besides pages/ that imports streamlit: cached loaders, state keys, widgets."""
