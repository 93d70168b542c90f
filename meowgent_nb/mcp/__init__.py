"""MCP: servers' tools as notebook tools (`client`; from a configuration file: `config`, `load`),
and the notebook's tools served (`serve`).

Nothing here is imported until a toolbox or server is made: the SDK loads then.
"""
