"""Loading the GGUF where llama.cpp's AMX kernels crash: without extra buffer types, only there."""

from __future__ import annotations

import types

import pytest

from meowgent_nb.models.llama_cpu import cpu_safe_loading, has_amx

llama_cpp = pytest.importorskip("llama_cpp")


def test_where_the_build_and_the_cpu_have_amx_the_load_skips_extra_buffers_and_only_the_load():
    if not has_amx(llama_cpp):
        pytest.skip("this CPU (or this llama.cpp build) has no AMX")
    assert llama_cpp.llama_model_default_params().use_extra_bufts is True
    with cpu_safe_loading(llama_cpp):
        assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is False
    assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is True


def test_elsewhere_nothing_changes():
    def defaults():
        return types.SimpleNamespace(use_extra_bufts=True)

    inner = types.SimpleNamespace(llama_model_default_params=defaults)
    without = types.SimpleNamespace(
        llama_print_system_info=lambda: b"CPU : AVX2 = 1 | AVX512 = 1 | REPACK = 1 | ", llama_cpp=inner
    )
    assert has_amx(without) is False
    with cpu_safe_loading(without):
        assert inner.llama_model_default_params is defaults
        assert inner.llama_model_default_params().use_extra_bufts is True
    with_amx = types.SimpleNamespace(
        llama_print_system_info=lambda: b"CPU : AMX_INT8 = 1 | ", llama_cpp=inner
    )
    with cpu_safe_loading(with_amx):
        assert inner.llama_model_default_params().use_extra_bufts is False
    assert inner.llama_model_default_params is defaults
