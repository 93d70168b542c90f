"""Spans read in tests: the OpenTelemetry SDK's in-memory exporter behind a tracer provider.

A test module imports both fixtures (``from tests.support.otel import exporter, provider``) and
passes ``provider`` to what it traces; ``exporter.get_finished_spans()`` is what was exported.
"""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider
