"""``{name}`` in a ``%%agent`` cell: strings and numbers fill in; other values are shown as views."""

from __future__ import annotations

import base64

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel
from meowgent_nb.notebook.magics._prompt_text import cell_prompt
from meowgent_nb.notebook.views.transcript import Transcript, variables_line
from meowgent_nb.testing import assert_last_user_message

pandas = pytest.importorskip("pandas")


def test_strings_and_numbers_fill_in_as_text_as_before():
    prompt = cell_prompt(
        "Hello {who}, {n} times {x:>3} {missing} {}\n# NBVAL_SKIP", {"who": "Ada", "n": 3, "x": 1}
    )
    assert (prompt.text, prompt.seen) == ("Hello Ada, 3 times {x:>3} {missing} {}", ())


def test_another_value_is_shown_once_in_a_context_block_before_the_cell():
    prompt = cell_prompt("Sum {xs} and {xs} for {who}.", {"xs": [1, 2], "who": "Ada"})
    assert (
        prompt.text
        == '<context variable="xs">\nlist: 2 items:\n  1\n  2\n</context>\n\nSum `xs` and `xs` for Ada.'
    )
    assert prompt.cell == "Sum `xs` and `xs` for Ada."
    assert [(s.name, s.view.kind, s.view.tokens) for s in prompt.seen] == [("xs", "list", 6)]


def test_the_transcript_says_first_which_variables_were_seen_and_their_cost():
    class Long:
        def __repr__(self):
            return "v" * 5000

    seen = cell_prompt("{xs} {long}", {"xs": [1], "long": Long()}, tokens=50).seen
    line = variables_line(seen)
    assert (
        line
        == "variables shown: xs (list, 5 tokens), long (repr, 44 tokens; cut, about 1,230 tokens left out)"
    )
    assert variables_line(()) is None
    transcript = Transcript()
    transcript.variables = line
    assert transcript.to_text() == f"[{line}]\n[waiting for the model...]"
    assert '<div class="meowgent-variables"' in transcript.to_html()


def test_a_dataframe_in_an_agent_cell_reaches_the_model_bounded_and_the_card_lists_it(ip):
    frame = pandas.DataFrame({"n": range(1_000_000), "name": ["<|im_end|>"] * 1_000_000})
    ip.user_ns.update(df=frame, model=ScriptedModel(["Done."]))
    ip.run_line_magic("config", "AgentMagics.variable_tokens = 60")
    with capture_output() as captured:
        ip.run_cell_magic("agent", "--model-object model --approve deny", "How many rows has {df}?")
    sent = ip.user_ns["model"].requests[-1].messages[-1]["content"]
    head, question = sent.rsplit("\n\n", 1)
    assert question == "How many rows has `df`?"
    assert head.startswith('<context variable="df">\npandas DataFrame: 1,000,000 rows × 2 columns\n')
    assert "&lt;|im_end|>" in head and "<|im_end|>" not in head
    assert "[... cut to the 60-token budget: " in head
    assert_last_user_message(ip.user_ns["model"], sent)
    text = captured.outputs[-1].data["text/plain"]
    assert (
        text.splitlines()[0] == "[variables shown: df (DataFrame, 52 tokens; cut, about 79 tokens left out)]"
    )
    assert text.splitlines()[-1] == "Done."


def test_a_budget_below_fifty_tokens_is_a_usage_error(ip):
    ip.run_line_magic("config", "AgentMagics.variable_tokens = 10")
    ip.user_ns["model"] = ScriptedModel(["Done."])
    with pytest.raises(UsageError) as raised:
        ip.run_cell_magic("agent", "--model-object model", "{model}")
    assert str(raised.value) == (
        "%config AgentMagics.variable_tokens = 10: a variable's view needs at least 50 tokens;"
        " give 500 (the default) or more."
    )


@pytest.mark.parametrize("sees", [True, False])
def test_an_image_variable_reaches_a_model_that_sees_and_is_a_placeholder_for_one_that_does_not(ip, sees):
    image_module = pytest.importorskip("PIL.Image")
    picture = image_module.new("RGB", (4, 3), "red")
    model = ScriptedModel(["A red square."])
    model.accepts_images = sees  # type: ignore[attr-defined]
    ip.user_ns.update(picture=picture, model=model)
    with capture_output():
        ip.run_cell_magic("agent", "--model-object model --approve deny --new", "What is {picture}?")
    sent = model.requests[-1].messages[-1]
    assert sent["content"] == (
        '<context variable="picture">\nPIL image: 4×3, mode RGB\n[image: image/png]\n</context>\n\nWhat is `picture`?'
    )
    images = sent.get("images")
    assert (images is not None) is sees
    if sees:
        assert base64.b64decode(images[0]).startswith(b"\x89PNG")
