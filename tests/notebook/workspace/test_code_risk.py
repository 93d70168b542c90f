"""`code_risk`: the exact labels and reasons it gives, and its contract."""

from __future__ import annotations

import pytest

from meowgent_nb.notebook.workspace import RISKS, CodeRisk, RiskReason, code_risk


def test_the_labels_are_ordered_by_risk():
    assert RISKS == (
        "read-only",
        "modifies",
        "writes-files",
        "deletes",
        "network",
        "runs-commands",
        "unreadable",
    )


def test_an_import_says_what_and_where():
    risk = code_risk("x = 1\n\nimport subprocess\nsubprocess.run(['ls'])")
    assert risk == CodeRisk(
        "runs-commands",
        (
            RiskReason("modifies", "has a statement that binds or changes: x = 1", 1),
            RiskReason("runs-commands", "imports subprocess", 3),
            RiskReason("runs-commands", "uses subprocess.run", 4),
        ),
        ("subprocess",),
    )
    assert risk.labels == ("modifies", "runs-commands")
    assert str(risk) == (
        "runs-commands: has a statement that binds or changes: x = 1 (line 1); imports subprocess (line 3);"
        " uses subprocess.run (line 4)"
    )


def test_the_codes_own_aliases_are_followed():
    risk = code_risk("import os as o\nfrom shutil import rmtree as wipe\no.system('id')\nwipe('data')")
    assert [str(reason) for reason in risk.reasons] == [
        "imports os (line 1)",
        "imports shutil.rmtree (line 2)",
        "uses os.system (line 3)",
        "uses shutil.rmtree (line 4)",
    ]
    assert (risk.label, risk.imports) == ("runs-commands", ("os", "shutil"))


@pytest.mark.parametrize(
    "code, reason",
    [
        ("!rm -rf data", RiskReason("runs-commands", "runs the shell command 'rm -rf data'", 1)),
        ("%%bash\nrm -rf data\n", RiskReason("runs-commands", "runs the magic %%bash", 1)),
        ("%%writefile notes.txt\nhello\n", RiskReason("writes-files", "runs the magic %%writefile", 1)),
        ("%timeit df.head()", RiskReason("unreadable", "runs the magic %timeit", 1)),
        ("df.head(", RiskReason("unreadable", "does not parse: '(' was never closed", 1)),
        ("open('a.txt', 'a')", RiskReason("writes-files", "opens a file to write (mode 'a')", 1)),
        (
            "open('~/.ssh/id_rsa').read()",
            RiskReason("modifies", "opens a file to read (read-only code reads only variables)", 1),
        ),
        ("(yield)", RiskReason("unreadable", "does not parse: 'yield' outside function", 1)),
        ("os.environ.get('OPENAI_API_KEY')", RiskReason("modifies", "uses os.environ.get", 1)),
        ("print(df, file=log)", RiskReason("writes-files", "writes to what file= names", 1)),
        (
            "f.readline()",
            RiskReason("modifies", "calls .readline(), which the scan does not know to only read", 1),
        ),
        ("p.write_text('x')", RiskReason("writes-files", "calls .write_text()", 1)),
        ("p.unlink()", RiskReason("deletes", "calls .unlink()", 1)),
        ("df.x.__class__", RiskReason("unreadable", "reaches .__class__", 1)),
        ("getattr(df, name)", RiskReason("unreadable", "getattr of a name the scan cannot read", 1)),
        ("getattr(df, '__dict__')", RiskReason("unreadable", "reaches .__dict__ with getattr", 1)),
        ("df.head(inplace=1)", RiskReason("modifies", "changes a value in place (inplace=)", 1)),
        (
            "print(fetch('https://x.example'))",
            RiskReason("network", "gives the URL 'https://x.example' to a call", 1),
        ),
        (
            "'{0[1]}'.format(d)",
            RiskReason("unreadable", "formats with fields that can reach attributes or items", 1),
        ),
    ],
)
def test_what_each_finding_says(code, reason):
    assert reason in code_risk(code).reasons
    assert code_risk(code).label == max((r.label for r in code_risk(code).reasons), key=RISKS.index)


def test_reading_magics_and_plain_formats_stay_read_only():
    for code in ["%who", "'{:.2f}'.format(x)", "getattr(df, 'shape')", "\n"]:
        assert code_risk(code) == CodeRisk("read-only"), code


def test_imports_name_the_modules_even_through_dunder_import():
    assert code_risk("from . import helpers\n__import__('socket')").imports == (".helpers", "socket")


def test_riskier_than_compares_by_the_order():
    risk = code_risk("df.to_csv('x.csv')")
    assert (risk.label, risk.riskier_than("modifies"), risk.riskier_than("writes-files")) == (
        "writes-files",
        True,
        False,
    )


def test_code_that_is_not_text_is_a_type_error_that_says_what_to_pass():
    with pytest.raises(TypeError) as raised:
        code_risk(b"df.head()")  # type: ignore[arg-type]
    assert str(raised.value) == "code_risk needs the code as a str, not bytes; pass the cell's text"


def test_code_nested_too_deeply_is_unreadable():
    assert code_risk("(" * 400 + "1" + ")" * 400).label == "unreadable"
