"""How tools reach a model and calls come back: one module per protocol, all with one interface.

`xml` (tools in the system prompt, calls as ``<tool_call>`` blocks read by `parsing`), `native`
(the backend's ``tools=``), `json` (one JSON object per answer: `json_answer`), `list` (text, or a JSON list of calls), `decide` (`xml`'s decision, `list`'s calls), and `xml_seed` (a
baseline for the benchmarks); `base` holds the interface (`ToolProtocol`), `registry` the names,
`prompt` the shared system-prompt pieces and how results are sent back.
"""

from __future__ import annotations

from .base import RequestParts, ToolProtocol
from .registry import PROTOCOLS, get_protocol

__all__ = ["PROTOCOLS", "RequestParts", "ToolProtocol", "get_protocol"]
