"""Spans written to a file, one OTLP JSON line per export: `JsonLinesExporter`, `file_tracer_provider`.

Each line is an ``ExportTraceServiceRequest`` in OTLP's JSON encoding (as the OpenTelemetry
Collector's file exporter writes them: trace and span ids in hex, enums as numbers), made by the
SDK's own OTLP encoder. Needs the SDK and its OTLP exporter (`switch.INSTALL`); imported only
when spans go to a file (``python -m meowgent_nb trace --json``, ``pytest --meowgent-trace``).
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

__all__ = ["JsonLinesExporter", "file_tracer_provider", "otlp_json", "service"]

_IDS = ("traceId", "spanId", "parentSpanId")


class JsonLinesExporter(SpanExporter):
    """An SDK ``SpanExporter`` that appends each batch of spans to ``path`` as one OTLP JSON line.

    Args:
        path: The file; made (with its folder) if missing, appended to if not.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        line = json.dumps(otlp_json(spans), separators=(",", ":")) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as file:
                file.write(line)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing is held open: each export wrote its line."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """``spans`` as one ``ExportTraceServiceRequest`` in OTLP's JSON encoding."""
    from google.protobuf.json_format import MessageToDict

    encoded = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in encoded.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    return encoded


def file_tracer_provider(path: str | os.PathLike[str]) -> TracerProvider:
    """A ``TracerProvider`` that writes each span to ``path`` (`JsonLinesExporter`) as it ends,
    its resource's ``service.name`` ``meowgent_nb`` unless ``OTEL_SERVICE_NAME`` names one."""
    provider = TracerProvider(resource=service())
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(path)))
    return provider


def service() -> Resource:
    """The SDK's resource, its ``service.name`` ``meowgent_nb`` unless ``OTEL_SERVICE_NAME`` names one."""
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "meowgent_nb"}
    return Resource.create(named)


def _hex_ids(record: dict[str, Any]) -> None:
    for key in _IDS:
        if key in record:
            record[key] = base64.b64decode(record[key]).hex()
