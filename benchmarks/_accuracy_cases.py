"""The cases of `toolcall_accuracy.py`: 8 tools and 44 prompts, 30 that need a tool and 14 that don't.

Categories:
  understanding  the request names what it wants plainly;
  parameters     the call needs enum values, numbers or optional arguments right;
  ambiguous      the need for a tool is implied, not said;
  no tool        small talk, general knowledge, text work, and requests no tool can do (refusal).

The cases were written once, before any prompt change, and are not tuned to what the model does.
"""

from __future__ import annotations

from meowgent_nb import EvalCase, Tool

try:
    from benchmarks import _toolsets as toolsets
except ImportError:  # run as a script: this directory is on sys.path
    import _toolsets as toolsets

__all__ = ["CASES", "EXAMPLES", "TOOLS", "with_examples"]

TOOLS: list[Tool] = [
    toolsets.get_weather,
    toolsets.convert_units,
    toolsets.get_stock_price,
    toolsets.translate_text,
    toolsets.send_email,
    toolsets.search_documents,
    toolsets.run_sql,
    toolsets.create_calendar_event,
]


# One example call per tool, for `toolcall_accuracy.py --examples` (the lever of issue 16: does
# showing the model an example call help?). Written from each tool's own signature and hints,
# with values no case uses, so the model cannot score by copying an example.
EXAMPLES: dict[str, dict[str, object]] = {
    "get_weather": {"city": "Lisbon", "unit": "fahrenheit"},
    "convert_units": {"value": 3.5, "from_unit": "ft", "to_unit": "m"},
    "get_stock_price": {"symbol": "NVDA", "date": "2024-06-03"},
    "translate_text": {"text": "Good morning", "target_language": "de"},
    "send_email": {"to": ["ana@example.com"], "subject": "Notes", "body": "Here are the notes."},
    "search_documents": {"query": "retry policy", "collection": "code"},
    "run_sql": {"query": "SELECT name FROM users LIMIT 5"},
    "create_calendar_event": {
        "title": "Review",
        "start": "2025-05-02T10:00:00",
        "end": "2025-05-02T11:00:00",
    },
}


def with_examples(tools: list[Tool]) -> list[Tool]:
    """The same tools, each with its example from `EXAMPLES` (validated as any tool's examples)."""
    return [
        Tool(
            t,
            name=t.name,
            description=t.description,
            approval=t.approval,
            timeout=t.timeout,
            examples=[EXAMPLES[t.name]],
        )
        for t in tools
    ]


def _case(category: str, prompt: str, tool: str | None, **arguments: object) -> EvalCase:
    return EvalCase(prompt, tool, arguments, category)


U, P, A, N = "understanding", "parameters", "ambiguous", "no tool"

CASES: list[EvalCase] = [
    # --- understanding ---
    _case(U, "What's the weather like in Berlin right now?", "get_weather", city="Berlin"),
    _case(U, "Is it raining in Tokyo?", "get_weather", city="Tokyo"),
    _case(U, "What did AAPL close at?", "get_stock_price", symbol="AAPL"),
    _case(U, "Look up the latest closing price of Microsoft stock (MSFT).", "get_stock_price", symbol="MSFT"),
    _case(U, "Translate 'good morning' into German.", "translate_text", target_language="de"),
    _case(U, "Search my notes for the meeting about the budget.", "search_documents"),
    _case(
        U,
        "Email bob@example.com with the subject 'Lunch' and tell him I'll be 10 minutes late.",
        "send_email",
        to=["bob@example.com"],
        subject="Lunch",
    ),
    _case(U, "Run a SQL query that counts the rows of the orders table.", "run_sql"),
    _case(
        U,
        "Put 'Design review' in my calendar on 2025-03-14 from 10:00 to 11:00.",
        "create_calendar_event",
        title="Design review",
    ),
    _case(U, "Find papers about transformer attention in the document index.", "search_documents"),
    # --- parameters: enums, numbers, optional arguments ---
    _case(P, "Convert 5 kilometres to miles.", "convert_units", value=5, from_unit="km", to_unit="mi"),
    _case(P, "How many centimetres are 12 inches?", "convert_units", value=12, from_unit="in", to_unit="cm"),
    _case(
        P,
        "Convert 3.5 feet to metres, rounded to 1 decimal place.",
        "convert_units",
        value=3.5,
        from_unit="ft",
        to_unit="m",
        decimals=1,
    ),
    _case(P, "Convert 250 millimetres to inches.", "convert_units", value=250, from_unit="mm", to_unit="in"),
    _case(
        P,
        "What's the temperature in Chicago in fahrenheit?",
        "get_weather",
        city="Chicago",
        unit="fahrenheit",
    ),
    _case(P, "Translate 'where is the station?' into Japanese.", "translate_text", target_language="ja"),
    _case(
        P,
        "Translate 'thank you very much' into French, in a formal register.",
        "translate_text",
        target_language="fr",
        formal=True,
    ),
    _case(
        P,
        "Send a high priority email to alice@example.com, subject 'Outage', saying the site is down.",
        "send_email",
        to=["alice@example.com"],
        priority="high",
    ),
    _case(
        P,
        "What was the closing price of NVDA on 2024-06-03?",
        "get_stock_price",
        symbol="NVDA",
        date="2024-06-03",
    ),
    _case(
        P,
        "Give me the 3 best matches in the code collection for 'retry logic'.",
        "search_documents",
        top_k=3,
        collection="code",
    ),
    _case(P, "Run SELECT name FROM users and return at most 10 rows.", "run_sql", limit=10),
    _case(
        P,
        "Add 'Dentist' to my calendar on 2025-05-02 from 09:00 to 09:30 with a reminder 30 minutes before.",
        "create_calendar_event",
        reminder_minutes=30,
    ),
    # --- ambiguous: the need for a tool is implied ---
    _case(A, "Should I take an umbrella in London today?", "get_weather", city="London"),
    _case(
        A,
        "I need to let carol@example.com know that the report is ready.",
        "send_email",
        to=["carol@example.com"],
    ),
    _case(
        A,
        "How far is a marathon, 42.195 km, in miles?",
        "convert_units",
        value=42.195,
        from_unit="km",
        to_unit="mi",
    ),
    _case(A, "How is Tesla (TSLA) doing on the market?", "get_stock_price", symbol="TSLA"),
    _case(A, "What do my notes say about the Q3 launch?", "search_documents"),
    _case(A, "Which customers in the analytics database ordered more than 5 times?", "run_sql"),
    _case(A, "How do you say 'I love cheese' in Spanish?", "translate_text", target_language="es"),
    _case(A, "Block an hour for focus time on 2025-04-01 starting at 14:00.", "create_calendar_event"),
    # --- no tool: the model should answer itself (or say it cannot) ---
    _case(N, "Hi! How are you today?", None),
    _case(N, "What is the capital of France?", None),
    _case(N, "Write a haiku about autumn.", None),
    _case(N, "Explain what a Python list comprehension is, in one sentence.", None),
    _case(N, "Thanks, that's all I needed.", None),
    _case(N, "What is 12 times 12?", None),
    _case(N, "Who wrote Pride and Prejudice?", None),
    _case(N, "What does the acronym SQL stand for?", None),
    _case(N, "In general terms, how do weather forecasts work?", None),
    _case(N, "Why do some countries use miles instead of kilometres?", None),
    _case(N, "Book me a flight to Rome.", None),
    _case(N, "Order a pizza for me.", None),
    _case(N, "Tell me a joke about programmers.", None),
    _case(N, "Summarize in one sentence: the meeting moved to Friday because the room was taken.", None),
]
