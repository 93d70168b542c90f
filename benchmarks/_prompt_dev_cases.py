"""Development cases for the system prompt's rules: other tools, other prompts than the benchmark's.

The rules in `meowgent_nb.protocols.prompt` were changed while looking at these cases only; the 44 cases
of `_accuracy_cases.py` measure the result. Keeping the two apart keeps the rules from being fitted
to the cases they are scored on.

Run:  python benchmarks/toolcall_accuracy.py --dev
"""

from __future__ import annotations

from meowgent_nb import EvalCase, Tool

try:
    from benchmarks import _toolsets as toolsets
except ImportError:  # run as a script: this directory is on sys.path
    import _toolsets as toolsets

__all__ = ["DEV_CASES", "DEV_TOOLS"]

DEV_TOOLS: list[Tool] = [
    toolsets.read_file,
    toolsets.write_file,
    toolsets.list_directory,
    toolsets.plot_dataframe,
    toolsets.describe_dataframe,
    toolsets.summarize_cells,
    toolsets.run_shell_command,
    toolsets.add,
]

DEV_CASES: list[EvalCase] = [
    EvalCase("Show me what's in notes/todo.txt.", "read_file", {"path": "notes/todo.txt"}, "understanding"),
    EvalCase("Which CSV files are in the data folder?", "list_directory", {"path": "data"}, "understanding"),
    EvalCase("Save 'hello' to greeting.txt.", "write_file", {"path": "greeting.txt"}, "understanding"),
    EvalCase(
        "Make a bar chart of the sales DataFrame.",
        "plot_dataframe",
        {"name": "sales", "kind": "bar"},
        "parameters",
    ),
    EvalCase(
        "Give me summary statistics of df, all columns.",
        "describe_dataframe",
        {"name": "df", "include": "all"},
        "parameters",
    ),
    EvalCase(
        "Summarize cells 2 and 3 as a paragraph.",
        "summarize_cells",
        {"cells": [2, 3], "style": "paragraph"},
        "parameters",
    ),
    EvalCase("What is 1234.5 plus 678.25?", "add", {"a": 1234.5, "b": 678.25}, "parameters"),
    EvalCase(
        "Append a line 'done' to log.txt.", "write_file", {"path": "log.txt", "mode": "append"}, "parameters"
    ),
    EvalCase("Run `git status` for me.", "run_shell_command", {"command": "git status"}, "understanding"),
    EvalCase("Is there a README in this directory?", "list_directory", {}, "ambiguous"),
    EvalCase("What did my notebook compute so far?", "summarize_cells", {}, "ambiguous"),
    EvalCase(
        "How is the temperature column of df distributed?", "describe_dataframe", {"name": "df"}, "ambiguous"
    ),
    EvalCase("What does config.yaml say about the port?", "read_file", {"path": "config.yaml"}, "ambiguous"),
    EvalCase("Good evening!", None, {}, "no tool"),
    EvalCase("What is the boiling point of water in Celsius?", None, {}, "no tool"),
    EvalCase("Write a limerick about a notebook.", None, {}, "no tool"),
    EvalCase("What's a DataFrame, in one sentence?", None, {}, "no tool"),
    EvalCase("Play some music.", None, {}, "no tool"),
    EvalCase("Call my mother.", None, {}, "no tool"),
    EvalCase("Great, thank you!", None, {}, "no tool"),
]
