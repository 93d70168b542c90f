"""Images from ``_ai_repr_()`` (the Jupyter proposal's MIME bundle) and from ``_repr_png_``: in a
tool's result and in a ``{name}`` variable, they reach a model that reads images and the card,
through `tools.media`, bounded as any image; a model that does not read images reads placeholders."""

from __future__ import annotations

import base64
import io

import pytest
from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, tool
from meowgent_nb.testing import tool_call
from meowgent_nb.tools.media import MAX_IMAGE_BYTES, McpImage, media_of, medium
from meowgent_nb.tools.output import output_text
from meowgent_nb.tools.values import kind_text, value_view

Image = pytest.importorskip("PIL.Image")


def png(color: str = "blue", size: tuple[int, int] = (2, 2)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "red").save(buffer, format="JPEG")
    return buffer.getvalue()


PNG = png()
RESPONSE = (
    '<tool_response name="chart">\nSales by month\n[image: image/png]\n</tool_response>\n'
    "Use these results to answer the user's question in plain text."
)


class Shows:
    """A value with the proposal's ``_ai_repr_``, returning the bundle it was given."""

    def __init__(self, bundle):
        self.bundle = bundle

    def _ai_repr_(self, **kwargs):
        return self.bundle

    def _repr_png_(self):  # what it shows a person; an AI is shown its _ai_repr_
        return png("green")


class Drawn:
    """A value that only draws itself, as IPython's display protocol asks (``_repr_png_``)."""

    def _repr_png_(self):
        return PNG


@tool
def chart() -> object:
    """Draw the sales chart."""
    return Shows({"text/plain": "Sales by month", "image/png": base64.b64encode(PNG).decode("ascii")})


def test_a_bundles_image_is_the_medium_of_the_value_and_its_text_the_placeholder():
    value = chart.run({})
    assert [(m.mime_type, m.data) for m in media_of(value)] == [("image/png", PNG)]
    assert output_text(value, 4000) == "Sales by month\n[image: image/png]"


def test_a_bundle_is_one_image_png_first_and_bytes_are_read_as_they_are():
    both = Shows({"text/plain": "Two forms", "image/jpeg": jpeg(), "image/png": PNG})
    view = value_view(both)
    assert (view.text, [(i.mime_type, i.data) for i in view.images]) == (
        "Two forms\n[image: image/png]",
        [("image/png", PNG)],
    )
    assert medium(both) == McpImage(PNG, "image/png")
    only_jpeg = Shows({"image/jpeg": jpeg()})
    assert (value_view(only_jpeg).text, medium(only_jpeg)) == (
        "[image: image/jpeg]",
        McpImage(jpeg(), "image/jpeg"),
    )


def test_a_bundle_without_an_image_shows_none_even_when_the_value_draws_one_for_people():
    text_only = Shows({"text/plain": "Just text"})
    assert (medium(text_only), media_of(text_only), kind_text(text_only)) == (None, (), "Just text")


def test_a_failing_or_async_ai_repr_leaves_the_image_to_the_other_ways():
    class Fails(Shows):
        def _ai_repr_(self, **kwargs):
            raise KeyError("boom")

    class Later(Shows):
        async def _ai_repr_(self, **kwargs):
            return {"image/png": PNG}

    assert medium(Fails({})) == McpImage(png("green"), "image/png")
    assert medium(Later({})) == McpImage(png("green"), "image/png")


def test_an_ai_repr_found_through_getattr_is_not_called():
    class Dynamic:
        def __getattr__(self, name):
            raise AssertionError(f"{name} was looked up dynamically")

    assert value_view(Dynamic()).kind == "repr"


def test_a_variable_that_only_draws_itself_is_an_image_with_its_size():
    view = value_view(Drawn())
    assert (view.kind, view.text, [(i.mime_type, i.data) for i in view.images]) == (
        "_repr_png_",
        "Drawn image: 2×2 px\n[image: image/png]",
        [("image/png", PNG)],
    )
    assert kind_text(Drawn()) is None  # a tool's result: tools.media makes it an image, as before


def cell(ip, model, line: str, text: str) -> dict:
    ip.user_ns["model"] = model
    with capture_output() as captured:
        ip.run_cell_magic("agent", f"--model-object model --new {line}", text)
    return captured.outputs[-1].data


@pytest.mark.parametrize("sees", [True, False])
def test_a_tools_ai_repr_image_reaches_a_model_that_sees_and_the_card(ip, sees):
    model = ScriptedModel([tool_call("chart"), "A blue chart."])
    model.accepts_images = sees  # type: ignore[attr-defined]
    ip.user_ns["chart"] = chart
    shown = cell(ip, model, "", "Draw the sales.")
    sent = model.requests[-1].messages[-1]
    expected = {"role": "user", "content": RESPONSE}
    if sees:
        expected["images"] = [base64.b64encode(PNG).decode("ascii")]
    assert sent == expected
    assert shown["text/plain"].splitlines() == [
        "[tool] chart() -> done",
        "  Sales by month",
        "  [image: image/png]",
        "A blue chart.",
    ]
    assert f"data:image/png;base64,{base64.b64encode(PNG).decode('ascii')}" in shown["text/html"]


def test_a_tools_ai_repr_image_over_the_bound_is_not_given_only_named(ip):
    big = PNG + b"\0" * MAX_IMAGE_BYTES

    @tool
    def chart() -> object:
        """Draw the sales chart."""
        return Shows({"text/plain": "Sales by month", "image/png": big})

    model = ScriptedModel([tool_call("chart"), "Too big."])
    model.accepts_images = True  # type: ignore[attr-defined]
    ip.user_ns["chart"] = chart
    cell(ip, model, "", "Draw the sales.")
    assert model.requests[-1].messages[-1] == {"role": "user", "content": RESPONSE}


@pytest.mark.parametrize("sees", [True, False])
def test_a_variable_that_draws_itself_reaches_a_model_that_sees(ip, sees):
    model = ScriptedModel(["A blue square."])
    model.accepts_images = sees  # type: ignore[attr-defined]
    ip.user_ns["plot"] = Drawn()
    shown = cell(ip, model, "--approve deny", "What is {plot}?")
    sent = model.requests[-1].messages[-1]
    expected = {
        "role": "user",
        "content": '<context variable="plot">\nDrawn image: 2×2 px\n[image: image/png]\n</context>\n\nWhat is `plot`?',
    }
    if sees:
        expected["images"] = [base64.b64encode(PNG).decode("ascii")]
    assert sent == expected
    assert shown["text/plain"].splitlines()[0] == "[variables shown: plot (_repr_png_, 10 tokens)]"
