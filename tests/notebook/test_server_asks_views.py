"""What the person reads when a server asks to use the model: who asks, during which call, and at
which of the two steps (its request, then the model's answer to send back), all escaped."""

from __future__ import annotations

import asyncio

from meowgent_nb import ToolCall
from meowgent_nb.agent.running_call import RunningCall
from meowgent_nb.mcp.client.asking import SamplingReview
from meowgent_nb.notebook.mcp.server_asks import _review_html
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
    assert shown.endswith(
        "<div><b>the model answered:</b></div><pre style='white-space: pre-wrap'>All &lt;i&gt;neat&lt;/i&gt;.</pre>"
    )


CHOICES = {
    "type": "object",
    "properties": {
        "style": {"type": "string", "enum": ["neat", "loose"]},
        "size": {"type": "string", "enum": ["s", "m"]},
        "plan": {"type": "string", "enum": ["free", "pro"], "default": "pro"},
    },
    "required": ["style", "plan"],
}


def test_a_drop_down_without_a_value_shows_its_empty_choice_and_says_one_is_needed_where_it_is():
    from types import SimpleNamespace

    from meowgent_nb.mcp.client.asking import ElicitRequest
    from meowgent_nb.mcp.content.elicit import form_from_schema
    from meowgent_nb.notebook.mcp._elicit_form import ElicitFormView

    running = SimpleNamespace(call=ToolCall("helper_tidy", {}))
    answers = []
    request = ElicitRequest("helper", form_from_schema("Which?", CHOICES), running)
    view = ElicitFormView(request, lambda f, *a: f(*a), answers.append)
    shown = {
        field.name: (entry.label, [label for label, _ in entry.options])
        for field, entry in zip(view.fields, view.entries)
    }
    assert shown == {
        "style": (
            "(choose one)",
            ["(choose one)", "neat", "loose"],
        ),  # was a blank box: value None selected nothing
        "size": ("(none)", ["(none)", "s", "m"]),
        "plan": ("pro", ["free", "pro"]),
    }
    view.entries[0].value = "neat"
    view.entries[0].value = None  # the person picks the empty choice again: the fresh box still shows it
    assert (view.entries[0].label, view.entries[0].value) == ("(choose one)", None)
    view._choose("accept")
    assert answers == []
    assert (
        view.notes[0].value
        == '<span class="meowgent-field-problem" style="color: #c62828">required: pick one</span>'
    )
