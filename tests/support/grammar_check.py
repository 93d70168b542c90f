"""Which texts a llama.cpp grammar accepts, checked by llama.cpp's own grammar sampler.

The text is tokenized with the default model's vocabulary (loaded vocab-only, in well under a
second) and fed token by token: a token the grammar rejects gets a logit of -inf. A text is
accepted when every token passes and the grammar then allows the end-of-generation token.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def vocabulary() -> Any:
    import llama_cpp

    from meowgent_nb.models.gguf import default_model_path

    return llama_cpp.Llama(model_path=str(default_model_path()), vocab_only=True, verbose=False)


def _allows(sampler: Any, token: int) -> bool:
    import llama_cpp

    data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
    candidates = llama_cpp.llama_token_data_array(data, 1, -1, False)
    llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
    return data[0].logit != float("-inf")


def accepts(grammar: Any, text: str) -> bool:
    """Whether ``grammar`` (a `llama_cpp.LlamaGrammar`) accepts exactly ``text``."""
    import llama_cpp

    llama = vocabulary()
    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar._grammar.encode(), grammar._root.encode())
    try:
        for token in llama.tokenize(text.encode(), add_bos=False, special=False):
            if not _allows(sampler, token):
                return False
            llama_cpp.llama_sampler_accept(sampler, token)  # only after the check: a rejected token aborts
        return _allows(sampler, llama.token_eos())
    finally:
        llama_cpp.llama_sampler_free(sampler)
