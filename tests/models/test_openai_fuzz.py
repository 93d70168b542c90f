"""Random and mutated event streams read by the real ``openai`` client and `OpenAIModel`: each one
is read whole or ends in a `ModelError`, nothing else. The client's transport is in memory
(`tests.support.openai_sse.InMemory`) so a few hundred examples take seconds; the wire tests beside this
one use a real local HTTP server. benchmarks/fuzz_openai_stream.py runs 10,000 examples."""

from __future__ import annotations

from hypothesis import given, settings

import meowgent_nb.models
from meowgent_nb.models import ModelRequest
from meowgent_nb.models._openai_wire import read_event
from meowgent_nb.models.wire_values import WireError
from tests.models.test_openai_wire import get_weather
from tests.support.openai_sse import CHUNK, JSON, InMemory, sse_streams, surprises

REQUEST = ModelRequest(messages=[{"role": "user", "content": "Hi"}], tools=[get_weather])


@settings(max_examples=200, deadline=None)
@given(body=sse_streams())
def test_any_stream_is_read_whole_or_ends_in_a_model_error(body):
    model = InMemory("fuzz", base_url="http://fuzz.invalid/v1")
    model.body = body
    allowed, meowgent_nb.models.ALLOW_MODEL_REQUESTS = meowgent_nb.models.ALLOW_MODEL_REQUESTS, True
    try:
        _, error = surprises(model, REQUEST)
    finally:
        meowgent_nb.models.ALLOW_MODEL_REQUESTS = allowed
    assert error is None, f"{error!r} from {body[:300]!r}"


def test_the_streams_drawn_include_answers_read_whole_and_refused():
    # A fuzz whose streams all fail (or all pass) would test little: both kinds come.
    outcomes = set()

    @settings(max_examples=50, deadline=None, database=None)
    @given(body=sse_streams())
    def read(body):
        model = InMemory("fuzz", base_url="http://fuzz.invalid/v1")
        model.body = body
        outcomes.add(surprises(model, REQUEST)[0] > 0)

    allowed, meowgent_nb.models.ALLOW_MODEL_REQUESTS = meowgent_nb.models.ALLOW_MODEL_REQUESTS, True
    try:
        read()
    finally:
        meowgent_nb.models.ALLOW_MODEL_REQUESTS = allowed
    assert outcomes == {True, False}


@settings(max_examples=200, deadline=None)
@given(data=JSON | CHUNK)
def test_any_json_as_an_event_is_read_or_refused_with_a_short_message(data):
    try:
        event = read_event(data)
    except WireError as error:
        assert len(str(error)) < 1_000
        return
    assert isinstance(event.content, str) and isinstance(event.thinking, str)
    assert event.finish_reason is None or (
        isinstance(event.finish_reason, str) and 0 < len(event.finish_reason) <= 100
    )
    counts = () if event.usage is None else (event.usage.prompt_tokens, event.usage.completion_tokens)
    assert all(n is None or (type(n) is int and 0 <= n <= 10**12) for n in counts)
    assert all(c.index is None or (type(c.index) is int and 0 <= c.index < 256) for c in event.calls)
