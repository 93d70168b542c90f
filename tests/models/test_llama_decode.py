"""The embedded model's answer phases (`_llama_decode`): text, constrained calls, more calls.

What the real model does is in test_llamacpp_model.py (marked real_model). Here llama.cpp's
sampler is replaced by a script, one character per token, because what these tests pin down
(a repeated call, a sentence after the calls, a call the limit cuts off, a made-up tool after a
real one) is what the product does with such an answer, and a real model cannot be made to write
each on demand. The script's "|" stands where the tool's grammar would end the arguments (an
end-of-generation token); "$" where the model ends its answer.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

import numpy
import pytest

from meowgent_nb.models._llama_decode import call_may_open, decode_answer, list_opening

EOG = -1
PROMPT = [1000, 1001]  # two prompt tokens no script character uses
TOOLS = {"get_weather": "weather grammar", "gcd": "gcd grammar"}


@dataclass
class Sampling:
    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    arguments_repeat_penalty: float = 1.1


class ScriptedLlama:
    """``generate`` continues ``script`` from wherever the answer so far has got to."""

    def __init__(self, script: str):
        self.script = script.replace("|", "").replace("$", "")
        self.ends = set()
        at = 0
        for char in script:
            if char in "|$":
                self.ends.add(at)
            else:
                at += 1
        self.grammars: list[object] = []
        self.penalties: list[float] = []

    def generate(self, tokens, *, temp, top_k, top_p, min_p, repeat_penalty, grammar):
        assert tokens[: len(PROMPT)] == PROMPT
        written = "".join(map(chr, tokens[len(PROMPT) :]))
        assert self.script.startswith(written), (written, self.script)
        self.grammars.append(grammar)
        self.penalties.append(repeat_penalty)
        for at in range(len(written), len(self.script) + 1):
            if at in self.ends or at == len(self.script):
                yield EOG
                if at == len(self.script):
                    return
            yield ord(self.script[at])

    def detokenize(self, tokens, special=True):
        return "".join(map(chr, tokens)).encode()

    def tokenize(self, text: bytes, add_bos=False, special=False):
        return list(map(ord, text.decode()))


def decode(
    script: str,
    *,
    limit: int = 400,
    tag: str | None = "<tool_call>",
    stop=None,
    calls_list=None,
    call_names=(),
):
    llama = ScriptedLlama(script)
    shown: list[str] = []
    decoded = decode_answer(
        llama,
        lambda token: token == EOG,
        PROMPT,
        Sampling(),
        lambda item: shown.append(item[1]),
        stop or threading.Event(),
        limit=limit,
        arguments={} if calls_list else TOOLS,
        call_tag=tag,
        calls_list=calls_list,
        call_names=call_names,
    )
    return "".join(shown), decoded, llama


CALL_1 = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}'
CALL_2 = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}'
CLOSE = "}\n</tool_call>"


def test_a_second_call_after_the_first_is_generated_and_shown():
    text, decoded, llama = decode(f"{CALL_1}|{CLOSE}\n{CALL_2}|{CLOSE}$")
    assert text == f"{CALL_1}{CLOSE}\n{CALL_2}{CLOSE}"
    assert (decoded.calls_closed, decoded.hit_limit) == (2, False)
    # text, arguments (the tool's grammar and the arguments' penalty), after a call, arguments again
    assert llama.grammars == [None, "weather grammar", None, "weather grammar", None]
    assert llama.penalties == [1.0, 1.1, 1.0, 1.1, 1.0]


def test_a_sentence_after_the_calls_ends_the_answer_unshown():
    text, decoded, _ = decode(f"{CALL_1}|{CLOSE}\nThis gives the weather.$")
    assert text == CALL_1 + CLOSE
    assert (decoded.calls_closed, decoded.hit_limit) == (1, False)


def test_a_word_for_word_repeat_of_a_call_ends_the_answer_without_it():
    # Whitespace aside, the same call: at temperature 0 it would repeat until the token limit.
    again = CALL_1.replace("\n", " ")
    text, decoded, _ = decode(f"{CALL_1}|{CLOSE}\n{again}|{CLOSE}\n{CALL_2}|{CLOSE}$")
    assert text == CALL_1 + CLOSE
    assert decoded.calls_closed == 1


def test_a_call_the_limit_cuts_off_after_a_complete_one_is_dropped():
    script = f"{CALL_1}|{CLOSE}\n{CALL_2}|{CLOSE}$"
    limit = len(CALL_1 + CLOSE) + 20
    text, decoded, _ = decode(script, limit=limit)
    assert text == CALL_1 + CLOSE
    assert (decoded.calls_closed, decoded.hit_limit) == (1, False)


def test_a_first_call_the_limit_cuts_off_is_shown_as_far_as_it_got():
    text, decoded, _ = decode(f"{CALL_1}|{CLOSE}$", limit=40)
    assert text == CALL_1[:40]
    assert (decoded.calls_closed, decoded.hit_limit, decoded.generated) == (0, True, 40)


def test_a_made_up_tool_after_a_real_call_is_not_written():
    made_up = '<tool_call>\n{"name": "get_weatherr", "arguments": {"city": "Tokyo"}'
    text, decoded, _ = decode(f"{CALL_1}|{CLOSE}\n{made_up}|{CLOSE}$")
    assert text == CALL_1 + CLOSE
    assert decoded.calls_closed == 1


def test_fenced_calls_follow_each_other_in_their_own_form():
    first = '```json\n{"name": "gcd", "arguments": {"a": 45, "b": 60}'
    second = '```json\n{"name": "gcd", "arguments": {"a": 81, "b": 63}'
    text, decoded, _ = decode(f"{first}|}}\n```\n{second}|}}\n```$", tag=None)
    assert text == f"{first}}}\n```\n{second}}}\n```"
    assert decoded.calls_closed == 2


def test_text_without_calls_streams_as_it_is():
    text, decoded, llama = decode("The weather is fine.$")
    assert text == "The weather is fine."
    assert (decoded.calls_closed, decoded.hit_limit, decoded.generated) == (0, False, 20)
    assert llama.grammars == [None]


def test_a_stop_ends_the_answer_at_once():
    stop = threading.Event()
    stop.set()
    text, decoded, _ = decode(f"{CALL_1}|{CLOSE}$", stop=stop)
    assert (text, decoded.generated, decoded.first) == ("", 0, None)


@pytest.mark.parametrize(
    ("text", "may"),
    [
        ("", True),
        ("\n", True),
        ("\n<tool_", True),
        ("\n<tool_call>\n", True),
        ("\n``", True),
        ("\n```json\n{", True),
        ('\n<tool_call>\n{"na', True),
        ('\n<tool_call>\n{ "name" : "get_w', True),
        ('\n<tool_call>\n{"name": "get_weather"', True),
        ('\n<tool_call>\n{"name": "get_weather", "argu', True),
        ('\n{"name": "gcd", "arguments"', True),
        ('\n<tool_call>\n{"name": "get_weatherr"', False),  # complete, and not an offered tool
        ('\n<tool_call>\n{"name": "joke', False),
        ('\n<tool_call>\n{"tool": "gcd"', False),
        ('\n<tool_call>\n{"name": "gcd", "parameters"', False),
        ("\nThis call", False),
        ("\n```python\n", False),
        ("\n</tool_call>", False),
    ],
)
def test_what_may_still_open_a_call_after_one(text: str, may: bool):
    assert call_may_open(text, TOOLS, "<tool_call>") is may


# --- the list protocol: text, or a list written under its grammar ------------------------------

LIST = '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "gcd", "arguments": {"a": 4, "b": 6}}]'


@pytest.mark.parametrize(
    ("script", "before"),
    [(f"{LIST}$", ""), (f"  {LIST}$", "  "), (f"```json\n{LIST}$", "```json\n"), (f"```\n{LIST}$", "```\n")],
)
def test_an_answer_that_opens_a_list_is_written_under_the_lists_grammar(script, before):
    text, decoded, llama = decode(script, tag=None, calls_list="list grammar")
    assert text == before + LIST
    # Free until the "[" (that token is sampled again under the grammar), then the list's grammar
    # to the end: the model chooses "," or "]" after each call.
    assert llama.grammars == [None, "list grammar"]
    assert (decoded.calls_closed, decoded.hit_limit) == (0, False)


def test_a_text_answer_runs_no_grammar_and_a_bracket_later_is_text():
    text, _, llama = decode("Paris is the capital [of France].$", tag=None, calls_list="list grammar")
    assert text == "Paris is the capital [of France]."
    assert llama.grammars == [None]


def test_a_list_the_limit_cuts_off_says_so():
    text, decoded, _ = decode(f"{LIST}$", tag=None, calls_list="list grammar", limit=30)
    assert text == LIST[:30]
    assert (decoded.hit_limit, decoded.generated) == (True, 30)


@pytest.mark.parametrize(
    ("text", "piece", "at"),
    [("", "[", 0), ("", ' [{"', 1), ("```json\n", "[", 0), ("```", "json\n[", 5), ("", "Hi", None),
     ("Hi ", "[", None), ("", "```", None), ("[", "{", None)],
)  # fmt: skip
def test_list_opening_finds_the_bracket_that_opens_the_answer(text, piece, at):
    assert list_opening(text, piece) == at


# --- the decide protocol: the model's own tag decides, the list's grammar writes after it --------


@pytest.mark.parametrize("before", ["", "Checking both.\n"])
def test_after_the_tag_the_lists_grammar_writes_the_calls_and_the_product_closes_the_tag(before):
    text, decoded, llama = decode(f"{before}<tool_call>{LIST}$", calls_list="list grammar")
    assert text == f"{before}<tool_call>{LIST}\n</tool_call>"
    # Free up to the tag (xml's decision), then the list's grammar from the first token after it.
    assert llama.grammars == [None, "list grammar"]
    assert (decoded.calls_closed, decoded.hit_limit) == (0, False)


def test_with_the_tag_a_text_answer_stays_free_and_a_bracket_still_opens_a_list():
    text, _, llama = decode("Paris is the capital [of France].$", calls_list="list grammar")
    assert (text, llama.grammars) == ("Paris is the capital [of France].", [None])
    text, _, llama = decode(f"{LIST}$", calls_list="list grammar")
    assert (text, llama.grammars) == (LIST, [None, "list grammar"])


def test_a_list_after_the_tag_the_limit_cuts_off_is_left_open():
    text, decoded, _ = decode(f"<tool_call>{LIST}$", calls_list="list grammar", limit=40)
    assert text == f"<tool_call>{LIST}"[:40]
    assert decoded.hit_limit


@pytest.mark.parametrize(("before", "after"), [("", ""), ("```json\n", "\n```")])
def test_with_the_tag_a_call_object_that_opens_the_answer_opens_the_list_instead(before, after):
    # xml's other call opening, a bare object (maybe fenced): the "{" token is sampled again under
    # the list's grammar (which writes "[{"; the script ignores grammars), the product closes the fence.
    call = '{"name": "gcd", "arguments": {"a": 4, "b": 6}}'
    text, _, llama = decode(f"{before}{call}$", calls_list="list grammar")
    assert llama.grammars == [None, "list grammar"]
    assert text == before + call + after


@pytest.mark.parametrize(
    ("before", "call"),
    [("", '{"name": "gcd", "arguments": {"a": 4, "b": 6}}'), ("```json\n", '{"name": "gcd", "arguments": {"a": 4}}'),
     ("", '{"name": "joke", "arguments": {"text": "Knock knock"}}')],
)  # fmt: skip
def test_given_the_tools_names_an_object_opens_the_list_once_it_reads_as_a_call(before, call):
    # decide on the embedded model: free until the object names an offered tool, or any name
    # followed by "arguments" (a made-up tool: the grammar writes an offered one, the review judges
    # it); then the object's tokens are taken back and the list's grammar writes them again.
    text, decoded, llama = decode(f"{before}{call}$", calls_list="list grammar", call_names=TOOLS)
    assert llama.grammars == [None, "list grammar"]
    assert text == before + call + ("\n```" if before else "")
    # Read up to where it became a call: the offered name's closing quote, or "arguments".
    read = call.index('"', len('{"name": "')) + 1 if "gcd" in call else call.index('"arguments"') + 11
    assert decoded.generated == len(before + call) + read  # those tokens count twice


@pytest.mark.parametrize(
    "answer",
    ['{"name": "Alice", "age": 30}', '{"city": "Paris", "unit": "celsius"}', '```json\n{"a": 1}\n```', "{}"],
)
def test_given_the_tools_names_an_object_that_is_not_a_call_is_the_answer_in_text(answer):
    text, decoded, llama = decode(f"{answer}$", calls_list="list grammar", call_names=TOOLS)
    assert (text, llama.grammars) == (answer, [None])
    assert decoded.generated == len(answer)


class StopAfter:
    """A stop the person presses once ``checks`` checks have found it unset."""

    def __init__(self, checks: int):
        self.checks = checks

    def is_set(self) -> bool:
        self.checks -= 1
        return self.checks < 0


def test_an_object_stopped_while_it_is_read_is_shown_as_far_as_it_got():
    # One check before generating, then one per token: stopped as the 9th token comes.
    text, _, _ = decode('{"name": "Alice"}$', calls_list="list grammar", call_names=TOOLS, stop=StopAfter(9))
    assert text == '{"name":'


def test_an_object_the_limit_cuts_off_while_it_is_read_is_shown_as_far_as_it_got():
    text, decoded, _ = decode('{"name": "gc', calls_list="list grammar", call_names=TOOLS, limit=8)
    assert (text, decoded.hit_limit) == ('{"name":', True)


@pytest.mark.parametrize(
    ("text", "piece", "at"),
    [("", "<tool_call>", 11), ("<tool_", "call>", 5), ("Sure. ", "<tool_call>\n", 11), ("", "[", 0),
     ("", "{", 0), ("```json\n", "{\n", 0), ("<tool_call>", "\n", None), ("", "Hi", None),
     ("<tool_call>[", "{", None), ("Hi ", "{", None)],
)  # fmt: skip
def test_list_opening_with_a_tag_opens_right_after_the_first_tag(text, piece, at):
    assert list_opening(text, piece, "<tool_call>") == at


# --- decide's second look: a list the review rejects is taken back, and the answer written again --


TAG = 5000  # the call tag as one token, as Qwen's <tool_call> is


class RetakingLlama:
    """Writes ``first`` (a token per character, ``<tool_call>`` one token); asked again with a
    logits processor (a list was taken back), writes ``again`` from where the answer was taken
    back to, and keeps the processor to look at. "$" ends an answer, "|" nothing here."""

    def __init__(self, first: str, again: str):
        self.first, self.again = self.tokenize(first.replace("$", "").encode()), self.tokenize(again.encode())
        self.grammars: list[object] = []
        self.barred: list[set[int]] = []

    def generate(self, tokens, *, grammar, logits_processor=None, **sampling):
        assert tokens[: len(PROMPT)] == PROMPT
        written = list(tokens[len(PROMPT) :])
        self.grammars.append(grammar)
        script = self.first if logits_processor is None else self.again
        assert script[: len(written)] == written, (written, script)
        for token in [*script[len(written) :], EOG]:
            if logits_processor is not None:  # what it bars, token by token, among likely ones
                scores = likely("[{`<W")
                logits_processor[0](None, scores)
                self.barred.append({int(t) for t in numpy.flatnonzero(scores == -numpy.inf)})
            yield token

    def detokenize(self, tokens, special=True):
        return "".join("<tool_call>" if t == TAG else chr(t) for t in tokens).encode()

    def tokenize(self, text: bytes, add_bos=False, special=False):
        parts = text.decode().split("<tool_call>")
        tokens = list(map(ord, parts[0]))
        for part in parts[1:]:
            tokens += [TAG, *map(ord, part)]
        return tokens


def likely(chars: str):
    """Scores of a vocabulary where ``chars`` are the likeliest tokens (the processor looks at the top)."""
    scores = numpy.zeros(TAG + 1)
    scores[[ord(char) for char in chars]] = 1.0
    return scores


def review_decode(first: str, again: str, keep: bool, **kwargs):
    llama = RetakingLlama(first, again)
    shown: list[str] = []
    reviewed: list[object] = []
    decoded = decode_answer(
        llama,
        lambda token: token == EOG,
        PROMPT,
        Sampling(),
        lambda item: shown.append(item[1]),
        threading.Event(),
        limit=400,
        call_tag="<tool_call>",
        calls_list="list grammar",
        review=lambda calls: reviewed.append(calls) or keep,
        **kwargs,
    )
    return shown, decoded, llama, reviewed


@pytest.mark.parametrize("before", ["", "Checking.\n"])
def test_a_list_the_review_keeps_is_shown_whole_once_written(before):
    shown, decoded, llama, reviewed = review_decode(f"{before}<tool_call>{LIST}$", "", keep=True)
    assert "".join(shown) == f"{before}<tool_call>{LIST}\n</tool_call>"
    # Nothing of the list was shown before its review: the text before it, then the list whole.
    assert shown[-1] == f"<tool_call>{LIST}\n</tool_call>"
    assert reviewed == [json.loads(LIST)]
    assert llama.barred == [] and decoded.generated == len(f"{before}{LIST}") + 1
    assert llama.grammars == [None, "list grammar"]


def test_a_list_the_review_rejects_is_never_shown_and_the_answer_is_written_again():
    again = "Which files should I delete?"
    shown, decoded, llama, reviewed = review_decode(f"<tool_call>{LIST}$", again, keep=False)
    assert "".join(shown) == again
    assert reviewed == [json.loads(LIST)]
    assert decoded.generated == 1 + len(LIST) + len(again)  # the list's tokens count
    assert llama.grammars == [None, "list grammar", None]
    assert (decoded.calls_closed, decoded.hit_limit) == (0, False)
    # Written again: at its start nothing that opens a call, and never the tag or a brace.
    assert llama.barred[0] == {ord("["), ord("{"), ord("`"), ord("<"), TAG}  # "W" stays
    assert all(barred == {ord("{"), TAG} for barred in llama.barred[1:])
    assert len(llama.barred) == len(again) + 1


def test_text_before_a_rejected_list_stays_and_the_answer_goes_on_from_it():
    again = "Checking.\nI cannot tell which file you mean."
    shown, _, llama, _ = review_decode(f"Checking.\n<tool_call>{LIST}$", again, keep=False)
    assert "".join(shown) == again
    assert llama.barred[0] == {ord("{"), TAG}  # the answer has begun ("Checking."): no more
