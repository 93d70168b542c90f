"""Loading a GGUF with llama-cpp-python where llama.cpp's AMX kernels would crash.

On CPUs with Intel AMX, llama.cpp's AMX kernels can crash the process on the first answer of a
Q4_K_M model (the embedded one is); upstream has no fix (ggml-org/llama.cpp, "AMX" segfault).
`cpu_safe_loading` loads without llama.cpp's extra buffer types where `has_amx`, so the ordinary
CPU kernels run; elsewhere it changes nothing. `serve` runs llama-cpp-python's server the same way.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["cpu_safe_loading", "has_amx"]

_PATCHING = threading.Lock()


def has_amx(llama_cpp: Any) -> bool:
    """Whether llama.cpp (the loaded ``llama_cpp`` module) was built with AMX and this CPU has it."""
    info = llama_cpp.llama_print_system_info()
    return (info if isinstance(info, bytes) else str(info).encode()).find(b"AMX_INT8 = 1") >= 0


@contextlib.contextmanager
def cpu_safe_loading(llama_cpp: Any) -> Iterator[None]:
    """Within it, ``llama_cpp.Llama(...)`` loads without extra buffer types where `has_amx`.

    llama-cpp-python's `Llama` takes its model parameters from ``llama_model_default_params()``
    and offers no argument for this one, so that function is wrapped for the load (one load at a
    time: another thread's load in the meantime gets the same safe parameters).
    """
    if not has_amx(llama_cpp):
        yield
        return
    module = llama_cpp.llama_cpp
    with _PATCHING:
        original = module.llama_model_default_params

        def safe_params() -> Any:
            params = original()
            params.use_extra_bufts = False
            return params

        module.llama_model_default_params = safe_params
        try:
            yield
        finally:
            module.llama_model_default_params = original


def serve(argv: list[str]) -> None:
    """Run llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server ARGS``) with
    its model loaded as `cpu_safe_loading` loads ours."""
    import runpy
    import sys

    import llama_cpp

    sys.argv = ["llama_cpp.server", *argv]
    with cpu_safe_loading(llama_cpp):
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


# python -m meowgent_nb.models.llama_cpu --model FILE ...: the server, loaded safely
if __name__ == "__main__":
    import sys

    serve(sys.argv[1:])
