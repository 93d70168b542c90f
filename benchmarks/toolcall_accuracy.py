"""How often the default local model picks the right tool (or none), per tool protocol.

Runs the 44 cases of `_accuracy_cases.py` (8 tools; 30 prompts that need a tool, 14 that don't)
through `meowgent_nb.evaluate` on the embedded model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M) at
temperature 0, once per protocol variant:

  xml        the default: rules + compact XML tools block in the system prompt;
  xml-seed   the same rules with the older, seed-style verbose XML tools block (the
             ``xml-seed`` protocol, `meowgent_nb.protocols.xml_seed`);
  native     tools passed to the model's own chat template (Qwen's Hermes-style block);
  json       answers constrained by a llama.cpp grammar to ``{"tool": ...}`` / ``{"answer": ...}``;
  list       text, or a JSON list of calls written under the list's grammar (``--protocols list``).

A case passes when the first call names the expected tool with (at least) the expected arguments,
or when there is no call and none was expected. Prints, per variant, accuracy on tool cases and on
no-tool cases and seconds per case; then the seed's call metrics (`EvalReport.summary`): tool
choice (the expected tool named, of tool cases), argument accuracy (of those), execution success
(calls that could run, of all calls), hallucination (calls naming a tool not offered or an
argument the tool does not have, of all calls), calls where no tool was needed (of no-tool
cases), and the tokens of the tools block the model was shown (Qwen2.5's own tokenizer); then
the failures. No tool runs.

Needs the ``local`` extra: ``pip install -e ".[local]"``.

``--dev`` runs the 20 cases of `_prompt_dev_cases.py` instead (other tools, other prompts): the
ones the system prompt's rules were developed on, so that these 44 stay a fair measure.

Run:  python benchmarks/toolcall_accuracy.py [--protocols xml,json] [--cases N] [--quiet] [--dev]
"""

from __future__ import annotations

import argparse
import sys
import time

from meowgent_nb import EvalReport, evaluate
from meowgent_nb.models.llamacpp import LlamaCppModel

try:
    from benchmarks._accuracy_cases import CASES, TOOLS, with_examples
    from benchmarks._prompt_dev_cases import DEV_CASES, DEV_TOOLS
except ImportError:  # run as a script: this directory is on sys.path
    from _accuracy_cases import CASES, TOOLS, with_examples
    from _prompt_dev_cases import DEV_CASES, DEV_TOOLS

VARIANTS = ("xml", "xml-seed", "native", "json", "list")
DEFAULT_VARIANTS = VARIANTS[:4]  # the four compared since issue 16; list on request
GOALS = {"tool_cases": 0.95, "no_tool_cases": 0.90}


def run(variant: str, model: LlamaCppModel, cases: list, tools: list) -> tuple[EvalReport, float]:
    started = time.perf_counter()
    report = evaluate(cases, tools=tools, model=model, protocol=variant)
    return report, (time.perf_counter() - started) / len(cases)


def percent(score: dict) -> str:
    if score["accuracy"] is None:
        return "     -"
    return f"{score['accuracy']:6.1%} ({score['passed']}/{score['cases']})"


def rate(figure: dict) -> str:
    """A score ({cases, passed, accuracy}) or a rate ({count, of, rate}) as "80.0% (4/5)"."""
    count, of, value = (
        (figure["passed"], figure["cases"], figure["accuracy"])
        if "passed" in figure
        else (figure["count"], figure["of"], figure["rate"])
    )
    return "-" if value is None else f"{value:.1%} ({count}/{of})"


def metrics(summary: dict) -> str:
    """The call metrics of one report on one line."""
    block = summary["tool_block"]
    tokens = f"{'~' if block['estimated'] else ''}{block['tokens']} tokens"
    return (
        f"tool choice {rate(summary['tool_choice'])}  arguments {rate(summary['arguments'])}  "
        f"executes {rate(summary['execution'])}  hallucinated {rate(summary['hallucination'])}  "
        f"called without need {rate(summary['called_without_need'])}  tools block {tokens}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--protocols", default=",".join(DEFAULT_VARIANTS), help="Comma-separated variants to run."
    )
    parser.add_argument("--cases", type=int, default=None, metavar="N", help="Run only the first N cases.")
    parser.add_argument("--quiet", action="store_true", help="Don't list the failures.")
    parser.add_argument("--dev", action="store_true", help="Run the prompt-development cases instead.")
    parser.add_argument(
        "--examples",
        action="store_true",
        help="Run each variant twice: without and with one example per tool.",
    )
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.protocols.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    cases, tools = (DEV_CASES, DEV_TOOLS) if args.dev else (CASES, TOOLS)
    cases = cases[: args.cases] if args.cases else cases
    model = LlamaCppModel(max_tokens=200)  # temperature 0, seed 0: the defaults
    print(
        f"model {model.name}, {len(tools)} tools, {len(cases)} {'dev ' if args.dev else ''}cases, temperature 0"
    )
    results = {}
    runs = [(v, v, tools) for v in variants]
    if args.examples:  # side by side in one run: the same cases with one example call per tool
        runs = [item for v in variants for item in ((v, v, tools), (f"{v}+ex", v, with_examples(tools)))]
    for variant, protocol, offered in runs:
        report, per_case = run(protocol, model, cases, offered)
        results[variant] = (report, per_case)
        summary = report.summary()
        print(
            f"{variant:9} tool cases {percent(summary['tool_cases'])}  "
            f"no-tool cases {percent(summary['no_tool_cases'])}  {per_case:5.2f} s/case",
            flush=True,
        )
    print()
    for variant, (report, _) in results.items():
        print(f"{variant:9} " + metrics(report.summary()))
    print()
    for variant, (report, _) in results.items():
        by_category = report.summary()["by_category"]
        print(f"{variant:9} " + "  ".join(f"{name} {percent(score)}" for name, score in by_category.items()))
    if not args.quiet:
        for variant, (report, _) in results.items():
            failures = [row for row in report.rows if not row.passed]
            print(f"\n{variant}: {len(failures)} failure(s)")
            for row in failures:
                print(f"  [{row.category}] {row.prompt!r}: {row.reason}  {dict(row.arguments) or ''}")
    print()
    for variant, (report, _) in results.items():
        summary = report.summary()
        met = all(
            summary[key]["accuracy"] is not None and summary[key]["accuracy"] >= goal
            for key, goal in GOALS.items()
        )
        print(f"{variant:9} goal (>= 95% tool cases, >= 90% no-tool cases): {'met' if met else 'not met'}")
    if "xml" in results and "xml-seed" in results:
        ours, seed = (results[v][0].summary()["all"]["passed"] for v in ("xml", "xml-seed"))
        print(
            f"compact xml {ours} vs seed xml {seed} cases passed: {'not worse' if ours >= seed else 'WORSE'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
