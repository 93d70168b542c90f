"""A GGUF's tokenizer on its own, for `LlamaCppModel.count_tokens` before the model is loaded.

llama.cpp can load a file's vocabulary without its weights (``vocab_only=True``): a fraction of a
second and a few MB instead of the whole model. Counting the tokens of a text (the tools block an
eval reports) then does not load a model nobody asked to run; once the model is loaded, its own
tokenizer counts instead, and the two agree (the same vocabulary, read from the same file).

Importing this module does not import llama-cpp-python; the first count does.
"""

from __future__ import annotations

import contextlib
import io
import threading
from pathlib import Path
from typing import Any, cast

from ..tools.inert import inert
from . import gguf
from .base import ModelError

__all__ = ["Vocabulary", "control_tokens", "count_with"]


def count_with(llama: Any, text: str) -> int:
    """The tokens of ``text`` for ``llama`` (a ``llama_cpp.Llama``), counted as a prompt is read.

    Special tokens' text (``<|im_start|>``) counts as the single token it is, and no BOS is
    added: the way `LlamaCppModel` tokenizes the prompts it renders.
    """
    return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def control_tokens(llama: Any) -> frozenset[str]:
    """The texts of ``llama``'s control tokens that `inert` does not already escape.

    A control token (GGUF type CONTROL: BOS, EOS, turn markers) is parsed from a prompt's text when
    it is there exactly, so `LlamaCppModel` escapes these in tool results besides the common families
    `inert` covers. User-defined tokens are left out: in many vocabularies (Gemma's) they are ordinary
    text such as HTML tags. Read once per load.
    """
    import llama_cpp

    # A loaded model has its vocabulary: the pointer is not NULL.
    vocab = cast("llama_cpp.llama_vocab_p", llama_cpp.llama_model_get_vocab(llama.model))
    attr, control = llama_cpp.llama_vocab_get_attr, llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
    texts = (
        llama_cpp.llama_vocab_get_text(vocab, token).decode("utf-8", "replace")
        for token in range(llama_cpp.llama_vocab_n_tokens(vocab))
        if attr(vocab, token) & control
    )
    return frozenset(text for text in texts if text and inert(text) == text)


class Vocabulary:
    """The vocabulary of one GGUF file, loaded on first use and kept.

    Args:
        path: The GGUF file; None: the default model (assembled from its packages if need be).
        from_env: Whether ``path`` came from ``$MEOWGENT_GGUF`` (for the missing-file message).
    """

    def __init__(self, path: Path | None, *, from_env: bool = False):
        self.path, self._from_env = path, from_env
        self._llama: Any = None
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        """How many tokens ``text`` is (see `count_with`).

        Raises:
            ModelError: llama-cpp-python or the file is missing, or the file cannot be read.
        """
        return count_with(self._load(), text)

    def _load(self) -> Any:
        with self._lock:
            if self._llama is not None:
                return self._llama
            if self.path is not None and not self.path.is_file():
                raise ModelError(gguf.missing_file_message(self.path, from_env=self._from_env))
            try:
                import llama_cpp
            except ImportError as exc:
                raise ModelError(f"The local model needs llama-cpp-python: {gguf.INSTALL_LOCAL}") from exc
            path = self.path if self.path is not None else gguf.default_model_path()
            try:
                # verbose=False silences the load, but not the warning of the (unused) context a
                # Llama always makes: llama-cpp-python prints its log to sys.stderr, which a
                # notebook would show. Hidden the way llama-cpp-python hides its own load log.
                with contextlib.redirect_stderr(io.StringIO()):
                    self._llama = llama_cpp.Llama(
                        model_path=str(path), vocab_only=True, n_ctx=256, n_batch=8, verbose=False
                    )
            except (ValueError, RuntimeError) as exc:
                raise ModelError(
                    f"Could not read the vocabulary of {path}: {exc}. Is it a complete GGUF file that"
                    " this llama-cpp-python version supports?"
                ) from exc
            return self._llama
