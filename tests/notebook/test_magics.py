"""The magics through a real IPython shell: loading, options, prompts, tools, %agent, %tools."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, Toolbox, tool
from meowgent_nb.notebook.magics.agent_magics import AgentMagics, rewrite_agent_cell


def magics(shell) -> AgentMagics:
    return shell.magics_manager.registry["AgentMagics"]


def test_load_twice_and_unload_removes_exactly_what_was_added(ip):
    before = list(ip.input_transformer_manager.cleanup_transforms)
    ip.run_line_magic("load_ext", "meowgent_nb")  # harmless
    assert ip.input_transformer_manager.cleanup_transforms.count(rewrite_agent_cell) == 1
    ip.run_line_magic("unload_ext", "meowgent_nb")
    assert "agent" not in ip.magics_manager.magics["cell"]
    assert "agent" not in ip.magics_manager.magics["line"]
    assert "tools" not in ip.magics_manager.magics["line"]
    assert rewrite_agent_cell not in ip.input_transformer_manager.cleanup_transforms
    assert [
        t for t in before if t is not rewrite_agent_cell
    ] == ip.input_transformer_manager.cleanup_transforms
    ip.run_line_magic("load_ext", "meowgent_nb")


def test_the_cell_becomes_an_await(ip):
    code = ip.input_transformer_manager.transform_cell("%%agent --new\nWhat's in {city}?\n")
    assert (
        code
        == "await __import__('meowgent_nb.notebook.magics.agent_magics').notebook.magics.agent_magics.agent_cell('--new', \"What's in {city}?\\n\")\n"
    )
    assert rewrite_agent_cell(["%%agents\n"]) == ["%%agents\n"]


def test_prompt_expands_names_and_drops_nbval_markers(ip):
    ip.user_ns["city"] = "Paris"
    cell = "# NBVAL_IGNORE_OUTPUT\nWeather in {city} and {unknown} and {city!r} and {}?\n  #NBVAL_SKIP\n"
    assert magics(ip).prompt(cell) == "Weather in Paris and {unknown} and {city!r} and {}?"


def test_tools_are_found_in_the_namespace_and_toolboxes(ip):
    @tool
    def t_one(x: int) -> int:
        """One."""
        return x

    @tool
    def t_two(x: int) -> int:
        """Two."""
        return x

    @tool
    def t_boxed(x: int) -> int:
        """Boxed."""
        return x

    ip.user_ns.update(t_one=t_one, t_two=t_two, box=Toolbox("box", [t_boxed]))
    names = [t.name for t in magics(ip).available_tools()]
    assert names[-3:] == ["t_one", "t_two", "t_boxed"]
    args = magics(ip).agent.parser.parse_args(["--tools", "t_two, t_one"])
    assert [t.name for t in magics(ip).select_tools(args)] == ["t_two", "t_one"]
    with pytest.raises(UsageError) as caught:
        magics(ip).select_tools(magics(ip).agent.parser.parse_args(["--tools", "t_one,nope"]))
    assert str(caught.value).startswith("%%agent --tools: no tool named nope; the notebook has: ")


def test_tools_magic_shows_a_tools_examples(ip):
    @tool(examples=[{"x": 2}])
    def t_example(x: int) -> int:
        """Example."""
        return x

    ip.user_ns["t_example"] = t_example
    shown = ip.run_line_magic("tools", "t_example")
    assert str(shown) == (
        "name       description  approval  timeout\n"
        "t_example  Example.     no        default\n"
        "\n"
        "<tools>\n"
        '<tool name="t_example">Example.\n'
        '<param name="x" type="integer"/>\n'
        '<example>{"x":2}</example>\n'
        "</tool>\n"
        "</tools>\n"
        "\n"
        "Its results reach the model as text cut to 4,000 characters, keeping the start and the end; lists and"
        " objects show at most 50 entries a level, 6 levels deep; images reach a model that can look at them, other bytes are described."
    )
    ip.run_line_magic("config", "AgentMagics.max_output_items = 10")
    try:
        assert "show at most 10 entries a level" in str(ip.run_line_magic("tools", "t_example"))
    finally:
        ip.run_line_magic("config", "AgentMagics.max_output_items = 50")
    listed = str(ip.run_line_magic("tools", ""))
    assert "Its results reach the model" not in listed  # said for one tool only
    assert '<param name="x" type="integer"/>\n<example>{"x":2}</example>\n</tool>' in listed


def test_bad_options_and_empty_cells_are_usage_errors(ip):
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "--protocol yaml", "hi")
    assert "invalid choice: 'yaml'" in str(caught.value)
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "--model-object nothing_here", "hi")
    assert str(caught.value) == "%%agent: --model-object nothing_here: no such variable in the notebook."
    ip.user_ns["t_number"] = 3
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "--model-object t_number", "hi")
    assert str(caught.value) == (
        "%%agent: --model-object t_number is a int, not a model (it needs a stream(request) method,"
        " like ScriptedModel or OllamaModel)."
    )
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "", "# NBVAL_IGNORE_OUTPUT\n\n")
    assert str(caught.value) == "%%agent: the cell is empty; write the prompt below the %%agent line."


def test_agent_line_commands(ip):
    magics(ip).messages[:] = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    with capture_output() as out:
        ip.run_line_magic("agent", "history")
    assert out.stdout == "[user]\nhi\n\n[assistant]\nhello\n"
    with capture_output() as out:
        ip.run_line_magic("agent", "reset")
    assert (out.stdout, magics(ip).messages) == ("The conversation was reset.\n", [])
    with capture_output() as out:
        ip.run_line_magic("agent", "config")
    assert "AgentMagics.max_turns = 8\n" in out.stdout
    assert "AgentMagics.approve = 'ask'\n" in out.stdout
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("agent", "hello")
    assert str(caught.value) == (
        "%agent: unknown command 'hello'; use one of: reset, history, context, models, config, traceback,"
        " allow, deny, rules, trust, decisions, policy, trace. To talk to the model, use the %%agent cell magic."
    )


def test_config_traits_set_the_defaults(ip, monkeypatch):
    ip.run_line_magic("config", "AgentMagics.max_turns = 3")
    assert magics(ip).max_turns == 3
    ip.run_line_magic("config", "AgentMagics.max_turns = 8")
    monkeypatch.setenv("MEOWGENT_MODEL", "llama3.2:1b")
    monkeypatch.setenv("MEOWGENT_APPROVE", "allow")
    fresh = AgentMagics(shell=ip)
    assert (fresh.model, fresh.approve) == ("llama3.2:1b", "allow")
    monkeypatch.setenv("MEOWGENT_APPROVE", "bogus")
    assert AgentMagics(shell=ip).approve == "ask"


def test_the_old_approval_words_still_work_and_say_the_new_ones_once(ip, monkeypatch, capsys):
    from meowgent_nb.notebook import _setting_words

    monkeypatch.setattr(_setting_words, "_SAID", set())
    monkeypatch.setenv("MEOWGENT_APPROVE", "all")
    assert [AgentMagics(shell=ip).approve for _ in range(2)] == ["allow", "allow"]
    fresh = AgentMagics(shell=ip)
    fresh.approve = "NONE"
    assert fresh.approve == "deny"
    args = fresh.agent.parser.parse_args(["--approve", "all"])
    assert args.approve == "allow"
    assert capsys.readouterr().err == (
        "meowgent_nb: MEOWGENT_APPROVE=all is an old spelling of MEOWGENT_APPROVE=allow; it still works,"
        " but write MEOWGENT_APPROVE=allow.\n"
        "meowgent_nb: %config AgentMagics.approve = 'none' is an old spelling of %config AgentMagics.approve ="
        " 'deny'; it still works, but write %config AgentMagics.approve = 'deny'.\n"
        "meowgent_nb: --approve all is an old spelling of --approve allow; it still works, but write --approve allow.\n"
    )
    with pytest.raises(UsageError) as caught:
        fresh.agent.parser.parse_args(["--approve", "sometimes"])
    assert "argument --approve: invalid choice: 'sometimes' (choose from " in str(caught.value)


def test_the_repeated_failure_limit_is_a_setting_of_the_cells(ip):
    ip.user_ns["model"] = ScriptedModel([])
    args = magics(ip).agent.parser.parse_args(["--model-object", "model"])
    assert magics(ip).make_agent(args).max_repeated_failures == 3
    ip.run_line_magic("config", "AgentMagics.max_repeated_failures = None")
    try:
        assert magics(ip).make_agent(args).max_repeated_failures is None
    finally:
        ip.run_line_magic("config", "AgentMagics.max_repeated_failures = 3")


def test_asking_the_server_again_is_bounded_by_settings_of_the_cells(ip):
    ip.user_ns["model"] = ScriptedModel([])
    args = magics(ip).agent.parser.parse_args(["--model-object", "model"])
    agent = magics(ip).make_agent(args)
    assert (agent.retry_attempts, agent.retry_seconds, agent.retry_delay) == (8, 120.0, 1.0)
    ip.run_line_magic("config", "AgentMagics.retry_attempts = 3")
    ip.run_line_magic("config", "AgentMagics.retry_seconds = 30")
    ip.run_line_magic("config", "AgentMagics.retry_delay = 0.5")
    try:
        agent = magics(ip).make_agent(args)
        assert (agent.retry_attempts, agent.retry_seconds, agent.retry_delay) == (3, 30.0, 0.5)
    finally:
        ip.run_line_magic("config", "AgentMagics.retry_attempts = 8")
        ip.run_line_magic("config", "AgentMagics.retry_seconds = 120")
        ip.run_line_magic("config", "AgentMagics.retry_delay = 1")


def test_scripted_model_cell_runs_and_keeps_the_conversation(ip):
    ip.user_ns["model"] = ScriptedModel(["First answer.", "Second answer."])
    with capture_output():
        ip.run_cell_magic("agent", "--model-object model --approve deny -o result", "Hello")
    assert ip.user_ns["result"].text == "First answer."
    with capture_output():
        ip.run_cell_magic("agent", "--model-object model --approve deny", "Again")
    assert [m["content"] for m in magics(ip).messages] == [
        "Hello",
        "First answer.",
        "Again",
        "Second answer.",
    ]
    ip.user_ns["model"].enqueue("Fresh.")
    with capture_output():
        ip.run_cell_magic("agent", "--model-object model --approve deny --new", "Over")
    assert [m["content"] for m in magics(ip).messages] == ["Over", "Fresh."]


@pytest.mark.parametrize(
    ("magic", "line", "message"),
    [
        (
            "agent",
            "--modle qwen",
            "%%agent: unrecognized arguments: --modle qwen. Did you mean --model? `%%agent?` lists the options.",
        ),
        (
            "agent",
            "--new --tols a --aprove all",
            "%%agent: unrecognized arguments: --tols a --aprove all. Did you mean --tools (for --tols) and"
            " --approve (for --aprove)? `%%agent?` lists the options.",
        ),
        ("agent", "-x", "%%agent: unrecognized arguments: -x. `%%agent?` lists the options."),
        (
            "tools",
            "eval cases --protocl xml",
            "%tools eval: unrecognized arguments: --protocl xml. Did you mean --protocol? `%tools?` lists the options.",
        ),
    ],
)
def test_an_option_typo_says_which_option_was_meant(ip, magic, line, message):
    with pytest.raises(UsageError) as caught:
        if magic == "agent":
            ip.run_cell_magic("agent", line, "Hi")
        else:
            ip.run_line_magic("tools", line)
    assert str(caught.value) == message


def test_the_agent_help_reads_as_plain_text_and_names_the_cell_magic(ip):
    doc = ip.magics_manager.magics["cell"]["agent"].__doc__
    assert doc.startswith(
        "  %%agent [-m MODEL] [--model-object VAR]\n             [--protocol {auto,xml,native,json,list,decide}] [--tools A,B]"
    )
    assert "::" not in doc and "``" not in doc
    assert "--model MODEL\n                        The model for this cell: ollama:NAME, openai:NAME," in doc


def test_the_result_limits_are_settings_of_the_cells(ip):
    ip.user_ns["model"] = ScriptedModel([])
    args = magics(ip).agent.parser.parse_args(["--model-object", "model"])
    agent = magics(ip).make_agent(args)
    assert (agent.max_output_chars, agent.max_output_items, agent.max_output_depth) == (4000, 50, 6)
    for line in ("max_output_chars = None", "max_output_items = 5", "max_output_depth = 2"):
        ip.run_line_magic("config", f"AgentMagics.{line}")
    try:
        agent = magics(ip).make_agent(args)
        assert (agent.max_output_chars, agent.max_output_items, agent.max_output_depth) == (None, 5, 2)
    finally:
        for line in ("max_output_chars = 4000", "max_output_items = 50", "max_output_depth = 6"):
            ip.run_line_magic("config", f"AgentMagics.{line}")
