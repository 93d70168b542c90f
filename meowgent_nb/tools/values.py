"""How a Python value is shown to a model: one mechanism for tool results and notebook variables.

A value shows itself through ``_ai_repr_()`` when its type has it (a dict of MIME type to data:
``text/markdown`` or ``text/plain`` as text, and one image: ``image/png``, else ``image/jpeg``),
else ``_repr_llm_()``; else a built-in view of what people explore: a pandas DataFrame or Series
(shape, dtypes, nulls, first and last rows), a numpy array (shape, dtype, min/max/mean, a few
values), a PIL image or a matplotlib figure (an image); else the image of its ``_repr_png_()`` or
``_repr_jpeg_()`` (as a tool's value with one is an image, `media.medium`); else a dict, list,
tuple or set (its length and a bounded sample); else its ``repr``. `kind_text` gives the text of the values that
have a view of their own (`output` uses it for tool results); `value_view` gives a whole view,
made inert and cut to a token budget.

Kinds are told by the type's module and ``sys.modules`` (nothing is imported here), and a view
reads its value only through its type: it never calls a property or ``__getattr__``. A value's
own ``_ai_repr_``, ``_repr_llm_`` and ``repr`` run, and their failure is caught.
"""

from __future__ import annotations

import base64
import inspect
import io
import math
import reprlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .inert import inert
from .media import McpImage, bundle_image, image_size, medium, type_method

__all__ = ["CHARS_PER_TOKEN", "VIEW_TOKENS", "ValueView", "estimate_tokens", "kind_text", "value_view"]

CHARS_PER_TOKEN = 4
"""Characters a token is taken to be when the model has no tokenizer to count with (English
text and code average three to four characters a token in the common tokenizers)."""
VIEW_TOKENS = 500
"""Tokens a variable's view may cost, by default (``%config AgentMagics.variable_tokens``)."""

_ROWS = 5  # first and last rows of a frame
_COLUMNS = 20  # columns listed with their dtypes and nulls
_SAMPLE = 10  # items of a container
_NULL_ROWS = 1_000_000  # rows of a column of objects or strings whose nulls are counted
_NOTE_ROOM = 120  # characters kept for the note of a cut
_ITEM = reprlib.Repr()
_ITEM.maxlevel, _ITEM.maxstring, _ITEM.maxother, _ITEM.maxlist, _ITEM.maxdict = 2, 80, 80, 6, 6
_ITEM.maxtuple = _ITEM.maxset = _ITEM.maxfrozenset = 6


@dataclass(frozen=True)
class ValueView:
    """What a model is shown of one value."""

    text: str
    """The view, inert, within the budget (with a note when it was cut)."""
    kind: str
    """What showed it: ``"DataFrame"``, ``"list"``, ``"_ai_repr_"``, ``"repr"``..."""
    tokens: int
    """What ``text`` costs, counted with the model's tokenizer or estimated (`estimate_tokens`)."""
    left_out: int = 0
    """Tokens of the view left out to keep to the budget (estimated); 0 when it was not cut."""
    images: tuple[McpImage, ...] = ()
    """Images the value is, for a model that reads them; ``text`` holds their placeholders."""

    @property
    def cut(self) -> bool:
        """Whether the view was cut to its budget."""
        return self.left_out > 0


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` is taken to cost without a tokenizer: one per `CHARS_PER_TOKEN` characters."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def value_view(
    value: Any, *, tokens: int = VIEW_TOKENS, count: Callable[[str], int] | None = None
) -> ValueView:
    """``value`` as a model is shown it (see the module docstring), inert and at most ``tokens`` long.

    Args:
        value: Any Python value.
        tokens: The budget; a longer view keeps its start and end with a note of what was left out.
        count: The model's tokenizer (text -> tokens); None: `estimate_tokens`.

    Raises:
        ValueError: ``tokens`` is below 50 (no view fits).
    """
    if tokens < 50:
        raise ValueError(
            f"a view needs a budget of at least 50 tokens, not {tokens}; give tokens=500 or more."
        )
    counter = estimate_tokens if count is None else _counting(count)
    kind, text, images = _shown(value)
    text = inert(text)
    whole = counter(text)
    if whole <= tokens:
        return ValueView(text, kind, whole, 0, images)
    chars = tokens * CHARS_PER_TOKEN
    cut, left = _cut(text, chars, tokens)
    spent = counter(cut)
    for _ in range(3):  # a tokenizer may count more than the estimate: cut again, shorter
        if spent <= tokens:
            break
        chars = int(chars * tokens / spent * 0.95)
        cut, left = _cut(text, chars, tokens)
        spent = counter(cut)
    return ValueView(cut, kind, spent, math.ceil(left / CHARS_PER_TOKEN), images)


def _counting(count: Callable[[str], int]) -> Callable[[str], int]:
    def counted(text: str) -> int:
        try:
            return int(count(text))
        except Exception:  # noqa: BLE001 - a tokenizer that fails is no reason to show nothing
            return estimate_tokens(text)

    return counted


def kind_text(value: Any) -> str | None:
    """The text of a value that shows itself or has a built-in view of its own (``_ai_repr_``,
    ``_repr_llm_``, pandas, numpy); None for any other value (not inert, not cut). Images are
    left to `media`, which finds them in tool results."""
    found = _own_or_library(value, images=False)
    return None if found is None else found[1]


def _shown(value: Any) -> tuple[str, str, tuple[McpImage, ...]]:
    found = _own_or_library(value)
    if found is not None:
        return found
    drawn = _drawn_view(value)
    if drawn is not None:
        return drawn
    if type(value) is str:
        return "str", value, ()
    if type(value) in (dict, list, tuple, set, frozenset):
        return type(value).__name__, _container_text(value), ()
    return "repr", _safe_repr(value), ()


def _own_or_library(value: Any, images: bool = True) -> tuple[str, str, tuple[McpImage, ...]] | None:
    failed = ""
    ai_repr = _method(value, "_ai_repr_")
    if ai_repr is not None:
        try:
            bundle = ai_repr()
            if inspect.isawaitable(bundle):  # the draft allows an async one; a view is made synchronously
                getattr(bundle, "close", lambda: None)()
                raise TypeError("it is async; only a synchronous _ai_repr_ is read")
            shown = _bundle_view(bundle)
        except Exception as error:  # noqa: BLE001 - a value's own code may fail; its other views remain
            shown, failed = None, f"\n[its _ai_repr_() failed: {_error(error)}]"
        if shown is not None:
            return ("_ai_repr_", *shown)
    llm_repr = _method(value, "_repr_llm_")
    if llm_repr is not None:
        try:
            return "_repr_llm_", str(llm_repr()) + failed, ()
        except Exception as error:  # noqa: BLE001
            failed += f"\n[its _repr_llm_() failed: {_error(error)}]"
    library = _library_view(value, images)
    if library is not None:
        return library[0], library[1] + failed, library[2]
    if failed:
        return "repr", _safe_repr(value) + failed, ()
    return None


_method = type_method  # ``value.name`` when its type defines it as a method (`media.type_method`)


def _drawn_view(value: Any) -> tuple[str, str, tuple[McpImage, ...]] | None:
    """A value whose type draws it (``_repr_png_``, else ``_repr_jpeg_``) as its image, with its
    type and size; None when it draws no image of a known type."""
    for name in ("_repr_png_", "_repr_jpeg_"):
        draw = _method(value, name)
        if draw is None:
            continue
        try:
            data = draw()
            if isinstance(data, tuple):  # (data, metadata)
                data = data[0]
            if isinstance(data, str):  # IPython may hand back base64 text
                data = base64.b64decode(data)
        except Exception:  # noqa: BLE001 - a value that cannot draw itself is shown another way
            continue
        image = medium(data) if isinstance(data, bytes) else None  # its bytes say its type
        if isinstance(image, McpImage):
            size = image_size(image.data)
            pixels = f": {size[0]}×{size[1]} px" if size else ""
            return name, f"{type(value).__qualname__} image{pixels}\n[image: {image.mime_type}]", (image,)
    return None


def _bundle_view(bundle: Any) -> tuple[str, tuple[McpImage, ...]] | None:
    """``_ai_repr_``'s MIME bundle as text and images; None when it holds neither."""
    if isinstance(bundle, tuple) and len(bundle) == 2 and isinstance(bundle[0], dict):
        bundle = bundle[0]  # (data, metadata), as _repr_mimebundle_ may answer
    if not isinstance(bundle, dict):
        return None
    text = next((bundle[k] for k in ("text/markdown", "text/plain") if isinstance(bundle.get(k), str)), None)
    image = bundle_image(bundle)  # the one `media.medium` gives a tool result's model and card
    images = [] if image is None else [image]
    if text is None and not images:
        return None
    lines = ([text] if text is not None else []) + [f"[image: {image.mime_type}]" for image in images]
    return "\n".join(lines), tuple(images)


def _library_view(value: Any, images: bool) -> tuple[str, str, tuple[McpImage, ...]] | None:
    kind = _library_kind(value)
    if kind is None or (not images and kind in ("Image", "Figure")):
        return None
    if kind == "DataFrame":
        return kind, _frame_text(value), ()
    if kind == "Series":
        return kind, _series_text(value), ()
    if kind == "ndarray":
        return kind, _array_text(value), ()
    image = _figure_png(value) if kind == "Figure" else medium(value)
    if not isinstance(image, McpImage):
        return "repr", _safe_repr(value), ()
    if kind == "Figure":
        width, height = (int(x) for x in value.get_size_inches() * value.dpi)
        head = f"matplotlib Figure: {width}×{height} px, {len(value.axes)} axes"
    else:
        head = f"PIL image: {value.width}×{value.height}, mode {value.mode}"
    return kind, f"{head}\n[image: {image.mime_type}]", (image,)


_LIBRARY = {
    ("pandas", "DataFrame"): "DataFrame",
    ("pandas", "Series"): "Series",
    ("numpy", "ndarray"): "ndarray",
    ("PIL.Image", "Image"): "Image",
    ("matplotlib.figure", "Figure"): "Figure",
}


def _library_kind(value: Any) -> str | None:
    """Which library type ``value`` is an instance of, told without importing any library."""
    root = (type(value).__module__ or "").partition(".")[0]
    if root not in ("pandas", "numpy", "PIL", "matplotlib"):
        return None
    for (module, name), kind in _LIBRARY.items():
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and issubclass(type(value), cls):
            return kind
    return None


def _frame_text(frame: Any) -> str:
    rows, columns = frame.shape
    listed = [(str(name), frame.iloc[:, index]) for index, name in enumerate(frame.columns[:_COLUMNS])]
    width = max((len(name) for name, _ in listed), default=0)
    lines = [f"pandas DataFrame: {rows:,} rows × {columns:,} columns", "columns (dtype, nulls):"]
    for name, column in listed:
        lines.append(f"  {name:<{width}}  {column.dtype}  {_nulls(column)}")
    if columns > _COLUMNS:
        lines.append(f"  ... {columns - _COLUMNS:,} more columns")
    lines.extend(_rows_text(frame, rows))
    return "\n".join(lines)


def _nulls(column: Any) -> str:
    """How many nulls a column holds; of a long column of objects or strings (a slow count), how
    many its first `_NULL_ROWS` rows hold."""
    kind = getattr(column.dtype, "kind", "O")
    if kind in "iub" and type(column.dtype).__module__.startswith("numpy"):  # numpy integers hold no nulls
        return "0 nulls"
    if kind in "fcmM" or len(column) <= _NULL_ROWS:
        return _counted(int(column.isna().sum()), "null")
    return f"{_counted(int(column.iloc[:_NULL_ROWS].isna().sum()), 'null')} in the first {_NULL_ROWS:,} rows"


def _counted(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _series_text(series: Any) -> str:
    rows = len(series)
    name = "" if series.name is None else f" {str(series.name)!r}"
    head = f"pandas Series{name}: {rows:,} values, dtype {series.dtype}, {_nulls(series)}"
    return "\n".join([head, *_rows_text(series, rows)])


def _rows_text(table: Any, rows: int) -> list[str]:
    options = {"max_cols": 12, "max_colwidth": 40} if table.ndim == 2 else {}
    if rows <= 2 * _ROWS:
        return [f"all {rows} rows:" if rows != 1 else "the row:", table.to_string(**options)]
    return [
        f"first {_ROWS} rows:",
        table.head(_ROWS).to_string(**options),
        f"last {_ROWS} rows:",
        table.tail(_ROWS).to_string(**options),
    ]


def _array_text(array: Any) -> str:
    numpy = sys.modules["numpy"]
    shape = "×".join(f"{n:,}" for n in array.shape) or "scalar"
    lines = [f"numpy ndarray: shape {shape}, dtype {array.dtype}"]
    if array.size and array.dtype.kind in "biuf":
        with numpy.errstate(all="ignore"):
            low, high, mean = array.min(), array.max(), array.mean()
        lines.append(f"min {low!s}, max {high!s}, mean {mean:.6g}")
    lines.append(numpy.array2string(array, threshold=2 * _ROWS, edgeitems=3, max_line_width=100))
    return "\n".join(lines)


def _figure_png(figure: Any) -> McpImage | None:
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", dpi=figure.dpi)
    except Exception:  # noqa: BLE001 - a figure that cannot draw itself is shown by its repr
        return None
    return McpImage(buffer.getvalue(), "image/png")


def _container_text(value: dict[Any, Any] | list[Any] | tuple[Any, ...] | set[Any] | frozenset[Any]) -> str:
    name, size = type(value).__name__, len(value)
    noun = "key" if isinstance(value, dict) else "item"
    head = f"{name}: {size:,} {noun}" + ("" if size == 1 else "s")
    if not size:
        return head
    which = "first" if isinstance(value, (dict, list, tuple)) else "some"
    shown = min(size, _SAMPLE)
    lines = [head + (f"; {which} {shown}:" if size > _SAMPLE else ":")]
    if isinstance(value, dict):
        for index, (key, item) in enumerate(value.items()):
            if index == _SAMPLE:
                break
            lines.append(f"  {_item_repr(key)}: {_item_repr(item)}")
    else:
        for index, item in enumerate(value):
            if index == _SAMPLE:
                break
            lines.append(f"  {_item_repr(item)}")
    return "\n".join(lines)


def _item_repr(value: Any) -> str:
    try:
        return _ITEM.repr(value)
    except Exception as error:  # noqa: BLE001
        return f"<{type(value).__qualname__}: its repr failed: {_error(error)}>"


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as error:  # noqa: BLE001 - a value's own code may fail; the model is told so
        return (
            f"<{type(value).__module__}.{type(value).__qualname__} object; its repr failed: {_error(error)}>"
        )


def _error(error: BaseException) -> str:
    text = str(error).splitlines()[0][:200] if str(error) else ""
    return type(error).__name__ + (f": {text}" if text else "")


def _cut(text: str, chars: int, tokens: int) -> tuple[str, int]:
    """``text`` kept to at most ``chars`` characters: its start and its end, a note between; and
    how many characters were left out."""
    room = max(0, chars - _NOTE_ROOM)
    left = len(text) - room
    tail = room // 3
    head = room - tail
    note = (
        f"\n[... cut to the {tokens:,}-token budget: {left:,} of {len(text):,} characters"
        f" (about {math.ceil(left / CHARS_PER_TOKEN):,} tokens) left out ...]\n"
    )
    return text[:head] + note + (text[len(text) - tail :] if tail else ""), left
