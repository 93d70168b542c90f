"""An approver may run a call with other arguments: they are validated, and the model is told."""

from __future__ import annotations

from meowgent_nb import Agent, Approved, ScriptedModel, tool
from tests.support.tool_calls import call


@tool(approval=True)
def transfer(account: str, amount: int) -> str:
    """Move money."""
    return f"moved {amount} to {account}"


class Editing:
    """Approves every call with ``arguments`` instead of the model's."""

    def __init__(self, arguments):
        self.arguments = arguments

    async def approve(self, requests):
        return [Approved("approved by you, with changed arguments", self.arguments) for _ in requests]


def test_edited_arguments_run_validated_and_the_model_reads_what_ran():
    model = ScriptedModel([call("transfer", account="mallory", amount=1000), "Done."])
    agent = Agent(model, tools=[transfer], approver=Editing({"account": "alice", "amount": "10"}))
    result = agent.run("pay")
    (only,) = result.tool_results
    assert (only.kind, only.value) == ("ok", "moved 10 to alice")  # "10" validated to the int 10
    assert only.output == (
        '(The person changed the arguments before approving; the call ran with {"account": "alice",'
        ' "amount": 10}.)\nmoved 10 to alice'
    )
    assert only.call.arguments == {"account": "mallory", "amount": 1000}  # what the model asked, kept
    assert agent.messages[2]["content"].startswith('<tool_response name="transfer">\n(The person changed')


def test_invalid_edited_arguments_do_not_run():
    model = ScriptedModel([call("transfer", account="bob", amount=5), "Done."])
    agent = Agent(model, tools=[transfer], approver=Editing({"account": "bob", "amount": "lots"}))
    (only,) = agent.run("pay").tool_results
    assert only.kind == "invalid_arguments"
    assert only.output == (
        "Not run: the arguments given at approval were invalid.\n"
        "Invalid arguments for tool 'transfer':\n- amount: input should be a valid integer, unable to parse string as an integer, got \"lots\""
    )


def test_a_stopped_run_keeps_its_partial_result():
    import asyncio

    from meowgent_nb.models import ModelChunk

    class Endless:
        name = "endless"

        async def stream(self, request):
            while True:
                await asyncio.sleep(0)
                yield ModelChunk(text="la ")

    agent = Agent(Endless())

    async def stop_soon():
        task = asyncio.ensure_future(agent.arun("sing"))
        for _ in range(20):
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return agent.last_result

    partial = asyncio.run(stop_soon())
    assert (partial.stopped, partial.turns, partial.tool_results) == ("interrupted", 1, [])
    assert set(partial.text.split()) == {"la"}
    assert partial.messages[0] == {"role": "user", "content": "sing"}
    assert partial.messages[1]["content"].endswith("\n[this answer was cut off: interrupted]")
