"""What the person reads when a server asks to use the model: who asks, during which call, and at
which of the two steps (its request, then the model's answer to send back), all escaped."""

from __future__ import annotations

import asyncio

from meowgent_nb.agent._running_call import RunningCall
from meowgent_nb.mcp.client._asking import SamplingReview
from meowgent_nb.notebook.approvals.server_asks import _review_html
from meowgent_nb.tools import ToolCall


def review(answer: str | None) -> SamplingReview:
    running = RunningCall(ToolCall("helper_<tidy>", {}), asyncio.new_event_loop(), 30.0, None, None)
    running.loop.close()
    return SamplingReview("helper<i>", (("user", "Sum <b>up</b>"),), None, 50, running, "scripted", answer)


def test_the_request_says_who_asks_which_model_during_which_call_and_that_it_is_the_request():
    assert _review_html(review(None)) == (
        "<div><b>helper&lt;i&gt;</b> asks to use the model <code>scripted</code>"
        " (during <code>helper_&lt;tidy&gt;</code>). Its request:</div>"
        "<div>user:</div><pre style='white-space: pre-wrap'>Sum &lt;b&gt;up&lt;/b&gt;</pre>"
        "<div>at most 50 tokens</div>"
    )


def test_the_answer_step_says_it_shows_the_request_and_the_model_s_answer():
    shown = _review_html(review("All <i>neat</i>."))
    assert shown.startswith(
        "<div><b>helper&lt;i&gt;</b> asks to use the model <code>scripted</code>"
        " (during <code>helper_&lt;tidy&gt;</code>). Its request and the model's answer:</div>"
    )
    assert shown.endswith("<div><b>the model answered:</b></div><pre style='white-space: pre-wrap'>All &lt;i&gt;neat&lt;/i&gt;.</pre>")
