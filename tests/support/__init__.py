"""Helpers the tests share, built on `meowgent_nb.testing` where it offers the same thing.

- `tool_calls`: `call` (a call as a scripted model writes it) and `parsed_call` (the value the
  parser makes of one).
- `kernel_driver`: a real ipykernel driven as a frontend drives it (cells, iopub, widget clicks).
- `browser_notebook`, `browser_pages`: a real JupyterLab or Notebook 7 server and Chromium pages
  that open, run and read a notebook (the browser tests' fixtures are in tests/notebook/conftest.py).
- `doc_blocks`: the code blocks of README.md and docs/ run in a kernel; ``python -m
  tests.support.doc_blocks`` writes docs/getting-started.ipynb from its page.
- `model_streams`, `ollama_wire`, `openai_sse`: what the backend tests read and serve (a whole
  stream, Ollama's NDJSON wire, random Chat Completions event streams).
- `llama_server`: a llama-cpp-python server on the embedded GGUF (the OpenAI-server tests, the
  classroom test and benchmark).
- `conformance_suite`: the official MCP conformance suite, installed and run from a test.
- `embedded_parts`, `grammar_check`: a stand-in for the bigger embedded model's part packages;
  which texts a llama.cpp grammar accepts.
- `dist`: the sdist and wheels of the checkout, built from its git-tracked files (`built_dist`).
- `real_model_schedule`: under pytest-xdist, the real-model test files on one worker, first
  (tests/conftest.py hooks it in).
"""
