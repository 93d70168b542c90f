"""Tool sets for the benchmarks: the three seed tools, a realistic notebook set, and 100 tools.

`SEED_TOOLS`, `NOTEBOOK_TOOLS` and `MANY_TOOLS` (those 20 and 80 service tools) are lists of
`meowgent_nb.Tool`; `TOOL_SETS` names them. The functions only describe themselves: their bodies
are stubs and are never run by the benchmarks.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from meowgent_nb import Tool, tool

try:
    from benchmarks._service_tools import SERVICE_TOOLS
except ImportError:  # run as a script: this directory is on sys.path
    from _service_tools import SERVICE_TOOLS

__all__ = ["MANY_TOOLS", "NOTEBOOK_TOOLS", "SEED_TOOLS", "TOOL_SETS"]


# --- the seed tools ---------------------------------------------------------------------------


@tool
def get_weather(
    city: Annotated[str, "City name, e.g. Paris"], unit: Literal["celsius", "fahrenheit"] = "celsius"
) -> str:
    """Get the current weather for a city."""
    return f"Sunny in {city}"


@tool
def query_dataframe(expr: str, columns: list[str] | None = None, limit: int = 10) -> str:
    """Run a query against the loaded DataFrame.

    Args:
        expr: A pandas query expression, e.g. "age > 30 and city == 'Paris'".
        columns: The columns to return; all columns when omitted.
        limit: The maximum number of rows to return.
    """
    return ""


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


SEED_TOOLS: list[Tool] = [get_weather, query_dataframe, add]


# --- types the notebook tools use -------------------------------------------------------------


class LengthUnit(str, Enum):
    MILLIMETRE = "mm"
    CENTIMETRE = "cm"
    METRE = "m"
    KILOMETRE = "km"
    INCH = "in"
    FOOT = "ft"
    MILE = "mi"


class Address(BaseModel):
    street: str
    city: str
    postal_code: str
    country: Annotated[str, Field(description="ISO 3166-1 alpha-2 code, e.g. DE")] = "DE"


class Customer(BaseModel):
    name: str
    email: str | None = None
    billing_address: Address


class LineItem(BaseModel):
    description: str
    quantity: Annotated[int, Field(ge=1)] = 1
    unit_price: Annotated[float, Field(description="Price of one unit, before tax")]


class TaskSpec(TypedDict):
    title: str
    due: str
    priority: Literal["low", "medium", "high"]
    tags: list[str]


# --- the notebook tools -----------------------------------------------------------------------


@tool
def read_file(
    path: Annotated[str, "Path relative to the notebook's directory"],
    encoding: str = "utf-8",
    max_bytes: Annotated[int | None, "Stop after this many bytes; the whole file when omitted"] = None,
) -> str:
    """Read a text file and return its contents."""
    return ""


@tool
def write_file(
    path: str, content: str, mode: Literal["overwrite", "append"] = "overwrite", create_dirs: bool = False
) -> str:
    """Write text to a file, replacing it or appending to it.

    Args:
        path: Path relative to the notebook's directory.
        content: The text to write.
        mode: Whether to replace the file or add to its end.
        create_dirs: Create missing parent directories first.
    """
    return ""


@tool
def list_directory(path: str = ".", pattern: str = "*", recursive: bool = False) -> list[str]:
    """List the files in a directory that match a glob pattern.

    Args:
        path: The directory, relative to the notebook's directory.
        pattern: A glob pattern such as "*.csv".
        recursive: Also look in subdirectories.
    """
    return []


@tool
def search_documents(
    query: Annotated[str, "What to look for, in plain words"],
    top_k: int = 5,
    collection: Literal["notes", "papers", "code"] | None = None,
    min_score: Annotated[float, "Drop hits scoring below this (0 to 1)"] = 0.0,
) -> list[dict]:
    """Search the local document index and return the best-matching passages with their sources.

    Use this before answering questions about the project's notes, papers or code.
    """
    return []


@tool
def create_calendar_event(
    title: str,
    start: Annotated[str, "Start as an ISO 8601 datetime, e.g. 2025-03-14T15:00:00"],
    end: Annotated[str, "End as an ISO 8601 datetime; must be after start"],
    attendees: Annotated[list[str] | None, "Email addresses of the people to invite"] = None,
    location: str | None = None,
    reminder_minutes: int = 15,
) -> str:
    """Create an event in the user's calendar and return its id."""
    return ""


@tool
def send_email(
    to: list[str],
    subject: str,
    body: str,
    cc: list[str] | None = None,
    priority: Literal["low", "normal", "high"] = "normal",
) -> str:
    """Send an email from the user's account. Ask before sending anything the user did not write.

    Args:
        to: Recipient email addresses.
        subject: The subject line.
        body: The message, in plain text.
        cc: Addresses to copy in, if any.
        priority: How the message is flagged.
    """
    return ""


@tool
def run_sql(
    query: Annotated[str, "A single SELECT statement"],
    database: str = "analytics.db",
    limit: Annotated[int, "Maximum rows to return"] = 100,
    params: Annotated[dict[str, str | int | float] | None, "Values for :name placeholders"] = None,
) -> str:
    """Run a read-only SQL query against a local SQLite database and return the rows as a table."""
    return ""


@tool
def convert_units(value: float, from_unit: LengthUnit, to_unit: LengthUnit, decimals: int = 3) -> float:
    """Convert a length from one unit to another.

    Args:
        value: The length to convert.
        from_unit: The unit the value is in.
        to_unit: The unit to convert to.
        decimals: Round the result to this many decimal places.
    """
    return value


@tool
def create_invoice(
    customer: Customer,
    items: list[LineItem],
    currency: Literal["EUR", "USD", "GBP"] = "EUR",
    due_days: int = 30,
) -> str:
    """Create a draft invoice and return its number. The invoice is not sent.

    Args:
        customer: Who is billed, with their billing address.
        items: The invoice lines, in order.
        currency: The invoice currency.
        due_days: Days until payment is due.
    """
    return ""


@tool
def add_task(task: TaskSpec, project: Annotated[str, "Project name, e.g. Q3 report"] = "Inbox") -> str:
    """Add a task to the user's to-do list and return its id.

    Args:
        task: The task; ``due`` is an ISO 8601 date such as 2025-03-14.
    """
    return ""


@tool
def set_budget(
    allocations: Annotated[dict[str, float], 'Amount per category, e.g. {"rent": 1200}'],
    month: Annotated[str, "The month as YYYY-MM"],
    currency: str = "EUR",
) -> str:
    """Set the monthly budget for each spending category, replacing the previous one."""
    return ""


@tool
def plot_dataframe(
    name: str,
    kind: Literal["line", "bar", "scatter", "hist"] = "line",
    x: str | None = None,
    y: list[str] | None = None,
    title: str | None = None,
) -> str:
    """Plot a DataFrame from the notebook's namespace and show the figure below the cell.

    Args:
        name: The variable holding the DataFrame.
        kind: The kind of plot.
        x: The column for the x axis; the index when omitted.
        y: The columns to plot; every numeric column when omitted.
        title: A title for the figure.
    """
    return ""


@tool
def describe_dataframe(
    name: str,
    percentiles: list[float] | None = None,
    include: Literal["all", "number", "object"] = "number",
) -> str:
    """Summarize a DataFrame's columns: counts, means, spreads and percentiles.

    Args:
        name: The variable holding the DataFrame.
        percentiles: Percentiles to include, between 0 and 1; quartiles when omitted.
        include: Which columns to summarize.
    """
    return ""


@tool
def get_stock_price(
    symbol: Annotated[str, "Ticker symbol, e.g. AAPL"],
    date: Annotated[str | None, "A date as YYYY-MM-DD; the latest close when omitted"] = None,
) -> float:
    """Look up a stock's closing price in the local market data cache."""
    return 0.0


@tool
def translate_text(
    text: str,
    target_language: Literal["en", "de", "fr", "es", "it", "ja"],
    source_language: Annotated[str | None, "Language code; detected when omitted"] = None,
    formal: bool = False,
) -> str:
    """Translate text into another language and return the translation only."""
    return ""


@tool
def run_shell_command(command: str, timeout_seconds: float = 30.0, cwd: str | None = None) -> str:
    """Run a shell command and return what it printed. Needs the user's approval.

    Args:
        command: The command line, run with /bin/sh.
        timeout_seconds: Kill the command after this many seconds.
        cwd: The working directory; the notebook's directory when omitted.
    """
    return ""


@tool
def summarize_cells(
    cells: Annotated[list[int] | None, "Cell numbers, starting at 1; every cell when omitted"] = None,
    max_words: int = 150,
    style: Literal["bullets", "paragraph"] = "bullets",
) -> str:
    """Summarize what the notebook's cells do and what they found."""
    return ""


NOTEBOOK_TOOLS: list[Tool] = [
    read_file,
    write_file,
    list_directory,
    search_documents,
    create_calendar_event,
    send_email,
    run_sql,
    convert_units,
    create_invoice,
    add_task,
    set_budget,
    plot_dataframe,
    describe_dataframe,
    get_stock_price,
    translate_text,
    run_shell_command,
    summarize_cells,
]

MANY_TOOLS: list[Tool] = [*SEED_TOOLS, *NOTEBOOK_TOOLS, *SERVICE_TOOLS]
"""100 tools: the seed and notebook tools, then 80 business-service tools (`_service_tools.py`)."""

TOOL_SETS: dict[str, list[Tool]] = {"seed": SEED_TOOLS, "notebook": NOTEBOOK_TOOLS, "many": MANY_TOOLS}
