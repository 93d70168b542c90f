"""Showing a run in the running cell: `LiveDisplay` keeps a `Transcript` current, `show_run` runs and shows.

Where widgets show, the live transcript is a `LiveView` (buttons under waiting cards, Stop);
elsewhere it is the transcript itself, updated. Headless runs (``live=False``) show the finished
transcript once, because nbval and nbclient drop display updates.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...agent.events import AgentEvent, FinalAnswer, PartialCall, TextDelta, ThinkingDelta, ToolRunning
from ...errors import RunInterrupted
from ...tools.media import McpImage
from .._shown_run import SHOWN_RUN, call_soon_in_cell
from ..approvals.policy_approvals import shows_widgets
from .live_view import LiveView
from .transcript import Transcript

if TYPE_CHECKING:
    from ...agent.loop import Agent, AgentResult

__all__ = ["LiveDisplay", "show_run"]


class LiveDisplay:
    """Shows a `Transcript` in the running cell and keeps it current as events arrive.

    Streamed deltas redraw at most every ``interval`` seconds (each redraw sends the whole
    transcript); calls, results and the end redraw at once; a live counter redraws every
    ``tick``. With ``live=False`` nothing is shown until `close` shows the finished transcript.

    Args:
        transcript: What to show; a new one by default.
        live: Show now and update (a person is watching), or show once at the end.
        interval: Least seconds between redraws caused by text and thinking deltas.
        tick: Seconds between redraws of a live counter when nothing else redraws.
    """

    def __init__(
        self,
        transcript: Transcript | None = None,
        *,
        live: bool = True,
        interval: float = 0.1,
        on_stop: Callable[[], None] | None = None,
        tick: float = 1.0,
    ):
        self.transcript = Transcript() if transcript is None else transcript
        self.live = live
        self.interval = interval
        self.on_stop = on_stop
        """With a frontend that shows widgets, a Stop button calls this (on the cell's loop)."""
        self.view: LiveView | None = None
        self.tick = tick
        self._handle: Any = None
        self._started = self._closed = False
        self._last = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._ticker: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Show the transcript now, while it waits for the model (does nothing unless live)."""
        if self.live and not self._started:
            from IPython.display import display

            self._started = True
            if self.on_stop is not None and shows_widgets():
                loop = asyncio.get_running_loop()
                self.view = LiveView(self.transcript, self.on_stop, call_soon_in_cell(loop))
                self._handle = display(self.view.box, display_id=True)
            else:
                self._handle = display(self.transcript, display_id=True)
            self._last = time.perf_counter()
            self._schedule_tick(self.tick)

    def attach(self, call: Any, widget: Any) -> bool:
        """Show ``widget`` under ``call``'s card, where the display is widgets; see `ShownRun`."""
        return self.view.attach(call, widget) if self.view is not None and not self._closed else False

    def detach(self, call: Any) -> None:
        if self.view is not None:
            self.view.detach(call)

    def note(self, call: Any, text: str) -> None:
        """Add ``text`` to ``call``'s card and show it; see `ShownRun`."""
        self.transcript.note_call(call, text)
        if self.live and self._started and not self._closed:
            self.refresh()

    def answering(self, call: Any, open_: bool) -> None:
        """A question of ``call``'s server opened (True) or closed; see `ShownRun`."""
        self.transcript.answering_call(call, open_)
        if self.live and self._started and not self._closed:
            self.refresh()

    def progress(self, call: Any, progress: Any) -> None:
        """Show ``call``'s newest progress in its card, redrawn at most every ``interval``; see `ShownRun`."""
        self.transcript.progress_call(call, progress)
        if self.live and self._started and not self._closed:
            wait = self._last + self.interval - time.perf_counter()
            if wait > 0:
                self._redraw_later(wait)
            else:
                self.refresh()

    def handle(self, event: AgentEvent) -> None:
        """Pass ``event`` to the transcript and redraw if it is time to."""
        self.transcript.handle(event)
        if not self.live or self._closed:
            return
        if not self._started:
            self.start()
        elif isinstance(
            event, (TextDelta, ThinkingDelta, PartialCall, ToolRunning)
        ):  # calls start in a burst
            wait = self._last + self.interval - time.perf_counter()
            if wait > 0:
                self._redraw_later(wait)
            else:
                self.refresh()
        else:
            self.refresh()

    def refresh(self) -> None:
        """Redraw now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.view is not None and not self._closed:
            self.view.render()  # widget updates: the buttons keep their place and state
            self._last = time.perf_counter()
        elif self._handle is not None:
            self._handle.update(self.transcript)
            self._last = time.perf_counter()

    def _redraw_later(self, delay: float) -> None:
        # Without this, text that arrives just before a pause (the model writing a call, which
        # shows nothing until it is complete) would stay hidden until the next event.
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # fed synchronously: the next event or `close` redraws
            return
        self._timer = loop.call_later(delay, self.refresh)

    def _schedule_tick(self, delay: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # fed synchronously: nothing can tick
            return
        self._ticker = loop.call_later(delay, self._on_tick)

    def _on_tick(self) -> None:
        # Redraw only when nothing else did for a whole tick: streaming text keeps it current.
        self._ticker = None
        if self._closed:
            return
        due = self._last + self.tick - time.perf_counter()
        if due <= 0:
            if self.transcript.clock_running:
                self.refresh()
            due = self.tick
        self._schedule_tick(due)

    def close(self) -> None:
        """The run is over: show the final transcript (the only display when not live)."""
        if self._closed:
            return
        self._closed = True
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._handle is not None:
            self.refresh()  # the finished transcript replaces the widgets: saved, it needs no widget state
            if self.view is not None:
                self.view.close()
        else:
            from IPython.display import display

            display(self.transcript)


async def show_run(
    agent: Agent,
    prompt: str,
    *,
    live: bool,
    variables: str | None = None,
    images: Sequence[McpImage] = (),
    model_note: str | None = None,
) -> AgentResult:
    """Run ``prompt`` on ``agent``, showing the transcript in the cell; returns the result.

    Where widgets show, a Stop button cancels the run; the cell then ends without an error and
    the conversation keeps what was said.

    Args:
        agent: The agent; its conversation continues as with `Agent.arun`.
        prompt: What the person asks.
        live: Update the display as events arrive (a person is watching), or display the
            finished transcript once (headless runs under nbval or nbclient).
        variables: The line saying which variables the prompt shows (`variables_line`), first.
        images: Images that go with the prompt (its variables'), for a model that can look at them.
        model_note: A few words the model line adds after the model ("Ollama not running").

    Returns:
        The run's result; after Stop, `Agent.last_result` (``stopped == "interrupted"``).

    Raises:
        RunInterrupted: The cell was interrupted (its traceback says nothing a person needs).
        BaseException: Whatever else stopped the run (a `ModelError`), after the transcript has
            shown what happened until then.
    """
    stop_requested = False
    run: asyncio.Future[AgentResult | None] | None = None

    def stop() -> None:
        nonlocal stop_requested
        stop_requested = True
        if run is not None:
            run.cancel()

    transcript = Transcript()
    transcript.variables = variables
    transcript.model_note = model_note
    view = LiveDisplay(transcript, live=live, on_stop=stop)
    token = SHOWN_RUN.set(view)
    try:
        view.start()
        run = asyncio.ensure_future(
            _follow(agent, prompt, images, view)
        )  # its own task, so Stop can cancel it
        try:
            result = await run
        except asyncio.CancelledError as error:
            # Whether the cell itself is being cancelled too (an interrupt). Task.cancelling is
            # Python 3.11+; on 3.10 a Stop is taken for what it says.
            cancelling = getattr(asyncio.current_task(), "cancelling", None)
            if not stop_requested or (cancelling is not None and cancelling()):
                raise _interrupted(view.transcript, error) from error  # an interrupt of the cell itself
            view.transcript.stop("you")
            result = agent.last_result
        except KeyboardInterrupt as error:
            raise _interrupted(view.transcript, error) from error
        except BaseException as error:
            view.transcript.fail(error, shown_below=True)  # the cell shows the raised error's message
            raise
    finally:
        SHOWN_RUN.reset(token)
        view.transcript.context = _context_line(agent)
        view.close()
    if result is None:  # pragma: no cover - Agent.stream always ends with FinalAnswer
        raise AssertionError("the event stream ended without a final answer")
    return result


def _context_line(agent: Agent) -> str | None:
    """How full the window is after the run's last request ("context 61 % of 16,384"), or None."""
    try:
        use = agent.context_use()
    except Exception:  # noqa: BLE001 - a footer must never break a run
        return None
    return None if use is None else use.footer()


def _interrupted(transcript: Transcript, error: BaseException) -> RunInterrupted:
    transcript.fail(error, shown_below=True)  # the error's one line says how far the run got
    return RunInterrupted(
        f"stopped by an interrupt after {transcript.progress()}. The conversation keeps what was said;"
        " the next %%agent cell continues it (--new starts over)."
    )


async def _follow(
    agent: Agent, prompt: str, images: Sequence[McpImage], view: LiveDisplay
) -> AgentResult | None:
    result = None
    async with contextlib.aclosing(agent.stream(prompt, images=images)) as events:
        async for event in events:
            view.handle(event)
            if isinstance(event, FinalAnswer):
                result = event.result
    return result
