"""llama-cpp-python against llama-cpp-py-sync (prebuilt CFFI wheels) on the embedded GGUF.

A measurement for a decision, not a backend: llama-cpp-python is built from source when the
``local`` extra installs it (no prebuilt wheel for this platform on PyPI), which takes minutes;
``llama-cpp-py-sync`` ships prebuilt llama.cpp libraries in a 5.5 MB manylinux wheel. Is it as fast?

Each side runs in a process of its own (two copies of ggml in one process would share symbols),
loads the default model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M) with the same thread count and
context, and streams the same prompt (Qwen's chat template written out) at temperature 0, no
repeat penalty, for the same token budget. Runs alternate between the sides, so the machine's
noise falls on both. Figures: import time, load time, and the median of generated tokens per
second from the first token to the last.

llama-cpp-py-sync is not a dependency. To measure it, install it beside, not into, the venv:

    pip install --no-deps --target /tmp/sync llama-cpp-py-sync   (needs cffi and numpy, present)
    python benchmarks/backend_speed.py --sync-path /tmp/sync [--rounds 5] [--tokens 160] [--threads 1]

Its wheel (0.11739, tagged manylinux2014) bundles libraries that need glibc 2.38, so on Debian 12
(glibc 2.36) they do not load, and the script says so. To measure its bindings over
llama-cpp-python's own build of llama.cpp instead, delete the bundled ``lib*.so*`` from
/tmp/sync/llama_cpp_py_sync and run with
``LLAMA_CPP_LIB=$VIRTUAL_ENV/lib/python3.11/site-packages/llama_cpp/lib/libllama.so``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PROMPT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\nWrite a long, detailed story about a cat who learns to program."
    " Use at least 500 words.<|im_end|>\n<|im_start|>assistant\n"
)
SIDES = ("llama-cpp-python", "llama-cpp-py-sync")


def one(side: str, tokens: int, threads: int) -> dict[str, float]:
    """Import, load and generate once on ``side``; the figures, as printed JSON."""
    from meowgent_nb.models.gguf import gguf_path

    path = str(gguf_path())
    start = time.perf_counter()
    if side == "llama-cpp-python":
        import llama_cpp

        imported = time.perf_counter()
        llama = llama_cpp.Llama(model_path=path, n_ctx=1024, n_threads=threads, verbose=False)
        pieces = llama.create_completion(
            PROMPT, max_tokens=tokens, temperature=0.0, repeat_penalty=1.0, stream=True
        )
    else:
        import llama_cpp_py_sync

        imported = time.perf_counter()
        llama = llama_cpp_py_sync.Llama(model_path=path, n_ctx=1024, n_threads=threads, verbose=False)
        # Its generate() and create_chat_completion() tokenize with parse_special=False, so a chat
        # template's <|im_start|> is read as 5 text tokens, not the control token (63 tokens for this
        # prompt instead of 42, and the model answers a garbled prompt): read it as llama-cpp-python does.
        plain = llama.tokenize
        llama.tokenize = lambda text, add_special=True, parse_special=False: plain(text, add_special, True)
        pieces = llama.generate(PROMPT, max_tokens=tokens, temperature=0.0, repeat_penalty=1.0, stream=True)
    loaded = time.perf_counter()
    first = last = loaded
    count = 0
    for _ in pieces:
        last = time.perf_counter()
        if count == 0:
            first = last
        count += 1
    return {
        "import_s": imported - start,
        "load_s": loaded - imported,
        "first_token_s": first - loaded,
        "tokens": count,
        "tok_s": (count - 1) / (last - first),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=160)
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    parser.add_argument("--sync-path", default="", help="Where llama-cpp-py-sync was installed (--target).")
    parser.add_argument("--one", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.tokens, args.threads)))
        return 0
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
    failed: dict[str, str] = {}
    for _ in range(args.rounds):
        for side in SIDES:
            if side in failed:
                continue
            env = dict(os.environ)
            if side == "llama-cpp-py-sync" and args.sync_path:
                env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.sync_path, env.get("PYTHONPATH", "")]))
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    side,
                    "--tokens",
                    str(args.tokens),
                    "--threads",
                    str(args.threads),
                ],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode:  # e.g. a wheel whose libraries need a newer glibc than this machine's
                failed[side] = (done.stderr.strip().splitlines() or ["no output"])[-1]
                continue
            runs[side].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(
        f"embedded GGUF, {args.threads} thread(s), {args.rounds} rounds, {args.tokens} tokens each,"
        " temperature 0"
    )
    for side, problem in failed.items():
        print(f"{side:18} could not run: {problem}")
    for side, figures in runs.items():
        if not figures:
            continue
        median = {key: statistics.median(run[key] for run in figures) for key in figures[0]}
        speeds = [run["tok_s"] for run in figures]
        print(
            f"{side:18} median {median['tok_s']:5.1f} tok/s (min {min(speeds):.1f}, max {max(speeds):.1f});"
            f" import {median['import_s']:.2f} s, load {median['load_s']:.2f} s,"
            f" first token {median['first_token_s']:.2f} s;"
            f" tokens per run {sorted({r['tokens'] for r in figures})}"
        )
    if failed:
        return 1
    ratio = statistics.median(r["tok_s"] for r in runs["llama-cpp-py-sync"]) / statistics.median(
        r["tok_s"] for r in runs["llama-cpp-python"]
    )
    print(f"ratio llama-cpp-py-sync / llama-cpp-python = {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
