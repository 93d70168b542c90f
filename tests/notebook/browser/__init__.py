"""The browser tests: a person's view of the notebook in JupyterLab and Notebook 7 (a package, so
that its conftest's Chromium and pages are shared by its modules and closed when a worker leaves it)."""
