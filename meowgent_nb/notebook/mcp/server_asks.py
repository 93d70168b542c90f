"""A server asks the person during a call: its form or its request to use the model, in the running cell.

The notebook's approvers answer MCP elicitation and sampling requests through these functions, on
the cell's loop. Where widgets show, the form waits for a click, the call's end or the approver's
timeout, then is disabled and says what became of it; headless runs and frontends without widgets
decline at once. Each outcome is one line in the call's card. `progress` updates the card of a
call in a ``%%agent`` cell (elsewhere there is no card).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from ..._visible import visible, visible_html
from ...agent.running_call import RunningCall
from ...mcp.client.asking import ElicitAnswer, ElicitRequest, SamplingReview
from ...mcp.client.progress import Progress
from .._labels import LET_MODEL_ANSWER, SEND_ANSWER
from .._shown_run import SHOWN_RUN, call_soon_in_cell
from ._elicit_form import ElicitFormView, ReviewView, content_text

__all__ = ["elicit", "progress", "review_sampling", "tell"]

_WAKE_EVERY = 0.2  # seconds: see widget_approvals._Batch.wait (ipykernel#881)
_QUOTED = 80  # characters of a server's message quoted in the card
_ENDINGS = {"timeout": "the call's time limit ({:g} s) ended it", "stopped": "the run was stopped"}


def tell(running: RunningCall, text: str) -> None:
    """One line in the call's card (a ``%%agent`` cell), else shown under the cell."""
    run = SHOWN_RUN.get()
    ipython = sys.modules.get("IPython")
    if run is not None:
        run.note(running.call, text)
    elif ipython is not None and ipython.get_ipython() is not None:
        from IPython.display import display

        display(
            {"text/plain": f"[{visible(text)}]", "text/html": f"<div>{visible_html(text)}</div>"}, raw=True
        )
    else:
        print(f"[{visible(text)}]")


def progress(running: RunningCall, progress: Progress) -> None:
    """Show the call's newest progress in its card (a ``%%agent`` cell); elsewhere nothing."""
    run = SHOWN_RUN.get()
    if run is not None:
        run.progress(running.call, progress)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= _QUOTED else text[: _QUOTED - 1] + "…")


async def elicit(request: ElicitRequest, timeout: float, nobody: str | None) -> ElicitAnswer:
    """The person's answer to a server's form, or the decline where ``nobody`` says why no one can answer."""
    asked = f"{request.server} asked for input ({_quote(request.form.message)})"
    if nobody is not None:
        tell(request.running, f"{asked}: declined, {nobody}")
        return ElicitAnswer("decline", None, nobody)
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[ElicitAnswer] = loop.create_future()
    form = ElicitFormView(
        request, call_soon_in_cell(loop), lambda a: answered.done() or answered.set_result(a)
    )

    def give_up(why: str) -> None:
        form.finish(f"not answered: {why}")
        tell(request.running, f"{asked}: cancelled, {why}")

    ended = await _shown_until(form, answered, request.running, timeout, give_up)
    if ended is not None:
        return ElicitAnswer("cancel", None, ended)
    answer = answered.result()
    if answer.action == "accept":
        shown = f"accepted, sent {content_text(answer.content or {})}"
    else:
        shown = f"{answer.action}d by you" if answer.action == "decline" else "cancelled by you"
    form.finish(shown)
    tell(request.running, f"{asked}: {shown}")
    return answer


async def review_sampling(review: SamplingReview, timeout: float, nobody: str | None) -> tuple[bool, str]:
    """Whether the person lets the model answer a server (or, with ``review.answer``, lets the answer
    go back); refused where ``nobody`` says why no one can answer."""
    asked = f"{review.server} asked to use the model {review.model}"
    if nobody is not None:
        tell(review.running, f"{asked}: refused, {nobody}")
        return False, nobody
    loop = asyncio.get_running_loop()
    chosen: asyncio.Future[bool] = loop.create_future()
    approve = SEND_ANSWER if review.answer is not None else LET_MODEL_ANSWER
    view = ReviewView(
        _review_html(review),
        approve,
        call_soon_in_cell(loop),
        lambda ok: chosen.done() or chosen.set_result(ok),
    )

    def give_up(why: str) -> None:
        view.finish(f"not answered: {why}")
        tell(review.running, f"{asked}: refused, {why}")

    ended = await _shown_until(view, chosen, review.running, timeout, give_up)
    if ended is not None:
        return False, ended
    ok = chosen.result()
    if review.answer is None:
        shown = "approved by you" if ok else "refused by you"
    else:
        shown = f"answer sent back: {review.answer[:200]!r}" if ok else "answer held back by you"
    view.finish(shown)
    if review.answer is not None or not ok:  # an approved request is told with its answer
        tell(review.running, f"{asked}: {shown}")
    return ok, "by you"


def _review_html(review: SamplingReview) -> str:
    """Who asks for which model, during which call, and what: the request, and then also the answer."""
    stage = "Its request and the model's answer" if review.answer is not None else "Its request"
    lines = [
        f"<div><b>{visible_html(review.server)}</b> asks to use the model <code>{visible_html(review.model)}</code>"
        f" (during <code>{visible_html(review.running.call.name)}</code>). {stage}:</div>"
    ]
    if review.system_prompt:
        lines.append(
            f"<div>system prompt:</div><pre style='white-space: pre-wrap'>{visible_html(review.system_prompt[:4000])}</pre>"
        )
    for role, text in review.messages[-20:]:
        lines.append(
            f"<div>{visible_html(role)}:</div><pre style='white-space: pre-wrap'>{visible_html(text[:4000])}</pre>"
        )
    lines.append(f"<div>at most {review.max_tokens:,} tokens</div>")
    if review.answer is not None:
        lines.append(
            f"<div><b>the model answered:</b></div><pre style='white-space: pre-wrap'>{visible_html(review.answer)}</pre>"
        )
    return "".join(lines)


async def _shown_until(
    view: Any,
    decided: asyncio.Future[Any],
    running: RunningCall,
    timeout: float,
    give_up: Callable[[str], None],
) -> str | None:
    """Show ``view`` until ``decided``, the call's end, the timeout or a stop.

    Returns:
        None when decided; else why it ended, as told to ``give_up``.
    """
    run = SHOWN_RUN.get()
    if run is None or not run.attach(running.call, view.view):
        from IPython.display import display

        display(view.view)
    loop = asyncio.get_running_loop()
    over: asyncio.Future[str] = loop.create_future()

    def end(why: str) -> None:
        if not decided.done() and not over.done():
            give_up(why)
            over.set_result(why)

    def call_over(how: str) -> None:
        end(_ENDINGS.get(how, "the call ended first").format(running.timeout))

    # Heard on the call's end, before the agent goes on: the card says what became of the request
    # before the run shows its end.
    running.on_end.append(call_over)
    if running.ended is not None:  # it ended before the server's request reached the cell
        call_over(running.ended)
    deadline = loop.time() + timeout
    answering = getattr(run, "answering", None)
    if answering is not None:  # the card says "waiting for you" while the question is open
        answering(running.call, True)
    try:
        while not decided.done() and not over.done():
            left = deadline - loop.time()
            if left <= 0:
                end(f"no answer within {timeout:g} s")
                break
            # Wake up often: an idle wait would not see an interrupt (see widget_approvals).
            await asyncio.wait({decided, over}, timeout=min(left, _WAKE_EVERY))
    except (asyncio.CancelledError, KeyboardInterrupt):
        end("stopped")
        raise
    finally:
        if call_over in running.on_end:
            running.on_end.remove(call_over)
        if answering is not None:
            answering(running.call, False)
    return None if decided.done() and not over.done() else over.result()
