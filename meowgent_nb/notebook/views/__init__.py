"""Showing runs in the running cell.

`transcript` holds `Transcript` (a run in text/plain and HTML), built from `_rows` (layout and
folding), `_cards` (a call's card; `_raised`, where its tool raised), `_transcript_html` (HTML
pieces), `_media_html` (a result's images, audio and links), `_timeline` (a turn's calls as SVG
bars) and `_progress` (signs of life while waiting). `display` shows a run live (`LiveDisplay`,
`show_run`), with `live_view`'s widgets where the frontend shows them; `window_view` is ``%agent
context``, `decisions_view` ``%agent decisions`` and `eval_display` ``%tools eval``.
"""
