"""Record ``gate.cassette.json`` anew with the embedded model: ``python tests/evals/record_gate_cassette.py``.

Runs ``%tools eval`` (mode record) in a plain IPython shell, once with each `convert`, as the
tests replay it; prints both reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from IPython.core.interactiveshell import InteractiveShell

import meowgent_nb.models
from tests.evals import gate_tools


def main() -> None:
    meowgent_nb.models.ALLOW_MODEL_REQUESTS = True
    gate_tools.CASSETTE.unlink(missing_ok=True)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "meowgent_nb")
    shell.run_line_magic("config", "AgentMagics.cassette_mode = 'auto'")
    for name, value in gate_tools.OPTIONS.items():
        shell.run_line_magic("config", f"AgentMagics.{name} = {value!r}")
    shell.user_ns.update(get_weather=gate_tools.get_weather, cases=gate_tools.CASES)
    for convert in (gate_tools.convert, gate_tools.convert_worse):
        shell.user_ns["convert"] = convert
        report = shell.run_line_magic(
            "tools", f"eval cases -m {gate_tools.MODEL} --cassette {gate_tools.CASSETTE}"
        )
        print(report.cases_text(), end="\n\n")


if __name__ == "__main__":
    main()
