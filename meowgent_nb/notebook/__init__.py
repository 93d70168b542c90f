"""The notebook side: magics, the live display and its HTML, approvals in a running cell.

The only wing that imports IPython and ipywidgets; `load_ipython_extension` imports it.
"""
