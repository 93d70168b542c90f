"""Which tool values are images or audio, and the media a tool's value carries: one converter for all.

`medium` reads a value as an `McpImage` / `McpAudio` (the image of its ``_ai_repr_()`` bundle when
its type has one, a PIL image, IPython's ``Image`` / ``Audio`` or anything with ``_repr_png_`` /
``_repr_jpeg_``, or bytes whose magic number, never a name, says a known format); `media_of` gives every medium a value carries; `media_text` is what a model reads
of it, each medium as its placeholder (``[image: image/png]``).
"""

from __future__ import annotations

import base64
import inspect
import io
import sys
import threading
from collections.abc import Callable
from typing import Any

from ._sniff import IMAGE_TYPES, media_type
from ._values import McpAudio, McpImage

__all__ = [
    "IMAGE_TYPES",
    "MAX_IMAGES",
    "MAX_IMAGE_BYTES",
    "bundle_image",
    "media_of",
    "media_text",
    "media_type",
    "medium",
    "type_method",
]

MAX_IMAGE_BYTES = 2 * 1024 * 1024
"""The largest image a model is given."""
MAX_IMAGES = 4
"""Images on one message; more are left to their placeholders."""

_PLAIN = frozenset({str, int, float, bool, dict, list, tuple, type(None)})
"""Types no medium has: checked first, so a long list of them costs little (a card is drawn often)."""
_BUNDLE_IMAGES = ("image/png", "image/jpeg")
"""The image types read from a MIME bundle, in the order preferred (a bundle's entries are one
thing in several forms, so one image is taken)."""
_NOT_OWN = object()
"""What `_ai_repr_image` answers for a value that has no ``_ai_repr_`` to say (or whose failed)."""
_DRAWN_KEPT = 32
_drawn: dict[int, tuple[Any, McpImage | McpAudio | None]] = {}
_drawn_lock = threading.Lock()
"""The last images drawn by `medium` (PIL, ``_repr_png_``), by the value's id (the value is kept, so
its id is not reused while it is here)."""


def medium(value: Any) -> McpImage | McpAudio | None:
    """``value`` as an image or audio clip (see the module docstring), or None for any other value."""
    if type(value) in _PLAIN:
        return None
    if isinstance(value, (McpImage, McpAudio)):
        return value
    if isinstance(value, (str, type, int, float, dict, list, tuple)):
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _made(media_type(bytes(value)), bytes(value))
    with _drawn_lock:
        kept = _drawn.get(id(value))
    if kept is not None and kept[0] is value:
        return kept[1]
    found = _drawn_medium(value)
    if found is not None and found is not value:  # a card is drawn again at each update: draw it once
        with _drawn_lock:  # tool threads shape results while the cell's thread draws cards
            _drawn[id(value)] = (value, found)
            while len(_drawn) > _DRAWN_KEPT:
                _drawn.pop(next(iter(_drawn)))
    return found


def type_method(value: Any, name: str) -> Callable[[], Any] | None:
    """``value.name`` bound, when ``value``'s type defines it as a method: never a property, a
    static method or ``__getattr__`` (so finding it runs none of the value's code); else None."""
    if issubclass(type(value), type):  # a class: its methods want an instance
        return None
    try:
        found = inspect.getattr_static(type(value), name)
    except AttributeError:
        return None
    if isinstance(found, (property, staticmethod)) or not callable(getattr(found, "__get__", None)):
        return None
    bound = found.__get__(value, type(value))
    return bound if callable(bound) else None


def bundle_image(bundle: Any) -> McpImage | None:
    """The image of a MIME bundle (``{"image/png": data, ...}``, or ``(data, metadata)``): its
    ``image/png``, else its ``image/jpeg``, as bytes or base64 text; None when it holds neither."""
    if isinstance(bundle, tuple) and len(bundle) == 2 and isinstance(bundle[0], dict):
        bundle = bundle[0]
    if not isinstance(bundle, dict):
        return None
    for kind in _BUNDLE_IMAGES:
        data = bundle.get(kind)
        if isinstance(data, str):
            try:
                data = base64.b64decode(data, validate=True)
            except ValueError:
                continue
        if isinstance(data, bytes) and data:
            return McpImage(data, kind)
    return None


def _ai_repr_image(value: Any) -> Any:
    """The image of ``value``'s own ``_ai_repr_()`` bundle (None: it shows no image), or `_NOT_OWN`
    when its type has no synchronous ``_ai_repr_`` answering a dict (the other ways are tried)."""
    ai_repr = type_method(value, "_ai_repr_")
    if ai_repr is None:
        return _NOT_OWN
    try:
        bundle = ai_repr()
    except Exception:  # noqa: BLE001 - a value's own code may fail; its other forms remain
        return _NOT_OWN
    if inspect.isawaitable(bundle):
        getattr(bundle, "close", lambda: None)()
        return _NOT_OWN
    if isinstance(bundle, tuple) and len(bundle) == 2 and isinstance(bundle[0], dict):
        bundle = bundle[0]
    return bundle_image(bundle) if isinstance(bundle, dict) else _NOT_OWN


def _drawn_medium(value: Any) -> McpImage | McpAudio | None:
    own = _ai_repr_image(value)  # what the value chose to show an AI comes first, images or not
    if own is not _NOT_OWN:
        return own
    if _is_pil_image(value):
        try:
            return _made("image/png", _png(value))
        except Exception:  # noqa: BLE001 - an image PIL cannot write (an empty one) is shown as text
            return None
    data = getattr(value, "data", None)
    kind = getattr(value, "mimetype", None) or getattr(value, "_mimetype", None)
    if isinstance(data, bytes) and isinstance(kind, str) and kind.startswith(("audio/", "image/")):
        return _made(kind, data)  # IPython.display.Audio / Image keep their bytes and type so
    for method, kind in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg")):
        shown = getattr(value, method, None)
        if callable(shown):
            try:
                data = shown()
                if isinstance(data, tuple):  # (data, metadata)
                    data = data[0]
                if isinstance(data, str):  # IPython may hand back base64 text
                    data = base64.b64decode(data)
            except Exception:  # noqa: BLE001 - a value that cannot draw itself is not an image
                continue
            if isinstance(data, bytes) and data:
                return McpImage(data, kind)
    return None


def media_of(value: Any) -> tuple[McpImage | McpAudio, ...]:
    """The images and audio a tool's value carries, in order: an MCP result's ``media``, the value
    itself (see `medium`), or the media among the items of a list or tuple; () for none."""
    carried = getattr(value, "media", None)
    if isinstance(carried, tuple) and not isinstance(value, type):
        return tuple(item for item in carried if isinstance(item, (McpImage, McpAudio)))
    one = medium(value)
    if one is not None:
        return (one,)
    if isinstance(value, (list, tuple)) and not _all_plain(value):
        return tuple(found for found in map(medium, value) if found is not None)
    return ()


def media_text(value: Any, text_of: Callable[[Any], str]) -> str | None:
    """What a model reads of a value that is or holds media (None for any other value).

    A medium is its placeholder (``[image: image/png]``); a list or tuple holding one gives one
    line per item: a medium's placeholder, a string as it is, any other item as ``text_of`` it.
    """
    one = medium(value)
    if one is not None:
        return _placeholder(one)
    if not isinstance(value, (list, tuple)) or _all_plain(value):
        return None
    found = [medium(item) for item in value]
    if not any(found):
        return None
    return "\n".join(
        _placeholder(seen) if seen is not None else item if isinstance(item, str) else text_of(item)
        for item, seen in zip(value, found)
    )


def _all_plain(items: list[Any] | tuple[Any, ...]) -> bool:
    """Whether every item is of a JSON type (the common long list), so none can be a medium."""
    return all(map(_PLAIN.__contains__, map(type, items)))


def _placeholder(item: McpImage | McpAudio) -> str:
    return f"[{'image' if isinstance(item, McpImage) else 'audio'}: {item.mime_type}]"


def _made(kind: str | None, data: bytes) -> McpImage | McpAudio | None:
    if kind is None or not data:
        return None
    return McpAudio(data, kind) if kind.startswith("audio/") else McpImage(data, kind)


def _png(image: Any) -> bytes:
    """A PIL image's PNG bytes (a mode PNG cannot hold, such as CMYK, is drawn as RGBA first)."""
    buffer = io.BytesIO()
    try:
        image.save(buffer, format="PNG")
    except (OSError, ValueError, KeyError):
        buffer = io.BytesIO()
        image.convert("RGBA").save(buffer, format="PNG")
    return buffer.getvalue()


def _is_pil_image(value: Any) -> bool:
    pil = sys.modules.get("PIL.Image")  # only a value from a loaded PIL can be a PIL image
    return pil is not None and isinstance(value, pil.Image)
