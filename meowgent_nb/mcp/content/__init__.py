"""MCP content blocks both ways.

- `_results`: a server tool's result as the value a call returns, and its text.
- `_recorded_values`: how a cassette keeps those values.
- `elicit`: a server's elicitation form read into fields, and answers checked against it.
- `served`: a served value written as content blocks.
"""
