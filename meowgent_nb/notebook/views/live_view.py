"""`LiveView`: a running ``%%agent`` cell as widgets: the transcript, buttons under waiting cards, Stop.

`display.LiveDisplay` uses it where widgets show. The transcript's HTML is cut after each waiting
card (`Transcript.html_sections`) for its buttons; at the end `LiveDisplay` replaces the view with
the finished transcript, so the saved notebook needs no widget state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._labels import STOP
from .transcript import Transcript

__all__ = ["LiveView"]

_ROW_STYLE = "meowgent-approval-slot"
# An HTML widget sets its lines 28 px high (ipywidgets' inline height) in a smaller font: a card's
# lines would stand apart while the cell runs and close up when the finished transcript (HTML
# output) replaces it. Its sections take the font size and line height of a notebook's HTML output.
_SECTION = (
    '<div class="meowgent-live-section"'
    ' style="font-size: var(--jp-content-font-size1, 14px); line-height: var(--jp-content-line-height, 1.6)">{}</div>'
)


class LiveView:
    """The widgets of one running cell.

    Args:
        transcript: What to show.
        on_stop: Called (on the cell's loop) when the person clicks Stop.
        call_soon: Runs a function on the cell's loop; clicks may arrive on another thread.
    """

    def __init__(self, transcript: Transcript, on_stop: Callable[[], None], call_soon: Callable[..., Any]):
        import ipywidgets as widgets

        self.transcript = transcript
        self._rows: list[tuple[Any, Any]] = []  # (call, widget), in the order they were attached
        self._html: list[Any] = []
        self.stop_button = widgets.Button(
            description=STOP,
            icon="stop",
            tooltip="Stop the run: the model stops at once, waiting calls are denied; the conversation keeps what was said",
        )
        self.stop_button.layout.width = "auto"
        self.stop_button.layout.align_self = "flex-start"  # a button, not a bar across the cell
        self.stop_button.on_click(lambda _button: call_soon(self._stop, on_stop))
        self.box = widgets.VBox([])
        self.box.add_class("meowgent-live")
        self.render()

    def _stop(self, on_stop: Callable[[], None]) -> None:
        if not self.stop_button.disabled:
            self.stop_button.disabled = True
            self.stop_button.description = "Stopping..."
            on_stop()

    def attach(self, call: Any, widget: Any) -> bool:
        """Show ``widget`` under ``call``'s card (its approval buttons)."""
        widget.add_class(_ROW_STYLE)
        self._rows.append((call, widget))
        self.render()
        return True

    def detach(self, call: Any) -> None:
        self._rows = [(c, w) for c, w in self._rows if c is not call]
        self.render()

    def render(self) -> None:
        """Bring the widgets up to date with the transcript."""
        import ipywidgets as widgets

        sections = self.transcript.html_sections()
        while len(self._html) < len(sections):
            self._html.append(widgets.HTML())
        children: list[Any] = []
        for (section, call), view in zip(sections, self._html):
            html = _SECTION.format(section)
            if view.value != html:
                view.value = html
            children.append(view)
            children.extend(w for c, w in self._rows if c is call)
        # A row whose card is not waiting any more (decided, the batch still open) stays under
        # the transcript until the batch ends, rather than vanishing before the decision shows.
        placed = {id(w) for w in children}
        children.extend(w for _, w in self._rows if id(w) not in placed)
        if not self.transcript.finished:
            children.append(self.stop_button)
        if tuple(children) != tuple(self.box.children):
            self.box.children = tuple(children)

    def close(self) -> None:
        """Free the widgets (the finished transcript has replaced them on screen)."""
        for widget in [*self._html, self.stop_button, self.box]:
            widget.close()
