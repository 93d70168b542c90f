"""`code_risk`: what a piece of notebook code would do, read without running it.

IPython's ``!cmd``, ``%magic`` and ``%%cell magic`` syntax is first transformed as the kernel
transforms it (`TransformerManager`), then Python's `ast` is walked. Each thing found has a
label; the code's label is the riskiest, in this order:

- ``read-only``: nothing below was found (see the rule).
- ``modifies``: binds or deletes a name, assigns an attribute or item, calls what the scan does
  not know to only read (a person's function, a method not on its list), imports a module, or
  reads a file or the environment (read-only code looks at the person's variables only).
- ``writes-files``: ``open`` in a writing mode (or one the scan cannot read), ``Path.write_text``,
  ``df.to_csv``, ``savefig``, ``shutil``, ``%%writefile``...
- ``deletes``: ``os.remove``, ``shutil.rmtree``, ``Path.unlink``...
- ``network``: ``socket``, ``urllib``, ``requests``, ``httpx``..., or a URL given to a call.
- ``runs-commands``: ``!cmd``, ``%%bash``, ``%sx``, ``%pip``, ``subprocess``, ``os.system``, ``pty``...
- ``unreadable``: the code does not parse, or runs code the scan cannot read: ``exec``, ``eval``,
  ``compile``, ``__import__``, ``importlib``, ``getattr``/``setattr`` of a name that is not a
  literal, ``globals()``, ``vars()``, any ``__dunder__`` name or attribute, frames, ``ctypes``,
  pickle loads, ``sys.modules``, ``breakpoint``, ``get_ipython()`` and any magic not known.

The rule for ``read-only`` (it fails closed: what the scan cannot prove read-only is not): every
statement is an expression (or ``pass``); every call is to a builtin of a short list (``len``,
``print``, ``sorted``, ``str``, ``sum``...; ``sorted``/``min``/``max`` with a ``key`` that is a
lambda or such a builtin; ``getattr`` with a literal name) or to a method of a short list
that returns a value (``head``, ``describe``, ``groupby``, ``mean``, ``value_counts``,
``items``...), without ``inplace=`` and without ``file=``/``buf=`` (a file to write to); names are bound only inside
comprehensions and lambdas (no ``:=``); no name or attribute above is reached. Read-only code
still runs the person's own ``__repr__``, ``__len__``, properties and ``groupby`` keys: the
scan vouches for what the code asks, not for the values it is given.
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass

from . import _risky_names as names
from ._risky_names import RISKS, Risk

__all__ = ["RISKS", "CodeRisk", "Risk", "RiskReason", "code_risk"]

_URL_STARTS = ("http://", "https://", "ftp://", "ws://", "wss://")
_SHELL = ("system", "getoutput")
_FILE_KEYWORDS = ("file", "buf", "path_or_buf")


@dataclass(frozen=True)
class RiskReason:
    """One thing the scan found, and the label it gives the code."""

    label: Risk
    what: str
    """What was found: ``imports subprocess``, ``runs the shell command 'ls'``."""
    line: int
    """The line of the (transformed) code it is on, from 1."""

    def __str__(self) -> str:
        return f"{self.what} (line {self.line})"


@dataclass(frozen=True)
class CodeRisk:
    """What `code_risk` found in a piece of code: its label, and what the label is based on."""

    label: Risk
    """The riskiest label found; ``read-only`` when nothing was."""
    reasons: tuple[RiskReason, ...] = ()
    """Everything found above ``read-only``, by line."""
    imports: tuple[str, ...] = ()
    """The modules the code imports by name (``import x``, ``from x import y``, ``__import__('x')``)."""

    @property
    def labels(self) -> tuple[Risk, ...]:
        """Each label found once, least risky first; ``("read-only",)`` when nothing was."""
        found = {reason.label for reason in self.reasons}
        return tuple(label for label in RISKS if label in found) or ("read-only",)

    def riskier_than(self, label: Risk) -> bool:
        """Whether the code's label comes after ``label`` in `RISKS`."""
        return RISKS.index(self.label) > RISKS.index(label)

    def __str__(self) -> str:
        if not self.reasons:
            return self.label
        return f"{self.label}: " + "; ".join(map(str, self.reasons))


def code_risk(code: str) -> CodeRisk:
    """Label what ``code`` (a cell's text, IPython syntax allowed) would do, without running it.

    Args:
        code: The code.

    Returns:
        Its `CodeRisk`; code that does not parse is ``unreadable``.

    Raises:
        TypeError: ``code`` is not a string.
    """
    if not isinstance(code, str):
        raise TypeError(f"code_risk needs the code as a str, not {type(code).__name__}; pass the cell's text")
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        python = TransformerManager().transform_cell(code)
        tree = ast.parse(python)
        # What only the compiler checks (`yield` or `return` outside a function...) fails here too.
        compile(tree, "<code>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as error:
        why = f"does not parse: {error.msg}"
        return CodeRisk("unreadable", (RiskReason("unreadable", why, error.lineno or 1),))
    except Exception as error:  # noqa: BLE001 - null bytes, nesting too deep: what cannot be read is the riskiest
        why = f"does not parse: {type(error).__name__}: {error}"
        return CodeRisk("unreadable", (RiskReason("unreadable", why, 1),))
    scan = _Scan(tree)
    try:
        scan.run(tree)
    except RecursionError:
        scan.found("unreadable", "is nested too deeply to read", tree.body[0] if tree.body else tree)
    reasons = tuple(sorted(set(scan.reasons), key=lambda r: (r.line, -RISKS.index(r.label), r.what)))
    label = RISKS[max((RISKS.index(reason.label) for reason in reasons), default=0)]
    return CodeRisk(label, reasons, tuple(dict.fromkeys(scan.imports)))


def _literal_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


class _Scan(ast.NodeVisitor):
    """One walk of a module's tree, collecting `RiskReason`s and the modules imported."""

    def __init__(self, tree: ast.Module):
        self.reasons: list[RiskReason] = []
        self.imports: list[str] = []
        self.handled: set[int] = set()  # nodes already judged by the call around them
        # Names the code's own imports bind, so that `sp.run` is read as `subprocess.run`.
        self.aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def found(self, label: Risk, what: str, node: ast.AST) -> None:
        self.reasons.append(RiskReason(label, what, getattr(node, "lineno", 1)))

    def run(self, tree: ast.Module) -> None:
        for statement in tree.body:
            if not isinstance(statement, (ast.Expr, ast.Pass, ast.Import, ast.ImportFrom)):
                self.found(
                    "modifies", f"has a statement that binds or changes: {_kind(statement)}", statement
                )
            self.visit(statement)

    def dotted(self, node: ast.AST) -> str | None:
        """``a.b.c`` for a chain of attributes on a name, with the code's import aliases resolved."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        return ".".join([self.aliases.get(node.id, node.id), *reversed(parts)])

    # What every node is checked for.

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imported(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            name = f"{module}.{alias.name}" if node.module else f"{module}{alias.name}"
            self.imports.append(module if node.module else name)
            self.found(names.label_of_name(name) or "modifies", f"imports {name}", node)

    def imported(self, module: str, node: ast.AST) -> None:
        self.imports.append(module)
        self.found(names.label_of_name(module) or "modifies", f"imports {module}", node)

    def visit_Name(self, node: ast.Name) -> None:
        if id(node) in self.handled:
            return
        if node.id in names.DYNAMIC_BUILTINS:
            self.found("unreadable", f"uses {node.id}, which runs code the scan cannot read", node)
        elif _dunder(node.id):
            self.found("unreadable", f"reaches {node.id}", node)
        else:
            self.named(self.aliases.get(node.id, node.id), node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _dunder(node.attr) or node.attr in names.INSIDES:
            self.found("unreadable", f"reaches .{node.attr}", node)
        dotted = self.dotted(node)
        if dotted is not None and id(node) not in self.handled:
            self.named(dotted, node)
            # The chain was judged whole: its shorter prefixes say nothing more.
            inner = node.value
            while isinstance(inner, ast.Attribute):
                self.handled.add(id(inner))
                inner = inner.value
            self.handled.add(id(inner))
        self.generic_visit(node)

    def named(self, dotted: str, node: ast.AST) -> None:
        label = names.label_of_name(dotted)
        if label is not None:
            self.found(label, f"uses {dotted}", node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.found("modifies", f"assigns {ast.unparse(node.target)} with :=", node)
        self.generic_visit(node)

    def visit_Await(self, node: ast.Await) -> None:
        self.found("modifies", "awaits a coroutine", node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.call(node)
        if any(
            k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
            for k in node.keywords
        ):
            self.found("modifies", "changes a value in place (inplace=)", node)
        for keyword in node.keywords:
            if keyword.arg in _FILE_KEYWORDS:
                self.found("writes-files", f"writes to what {keyword.arg}= names", node)
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            url = _literal_str(argument)
            if url is not None and url.lower().startswith(_URL_STARTS):
                self.found("network", f"gives the URL {url[:60]!r} to a call", node)
        self.generic_visit(node)

    def call(self, node: ast.Call) -> None:
        callee = node.func
        if self.shell_call(node):
            return
        if isinstance(callee, ast.Name):
            name = self.aliases.get(callee.id, callee.id)
            if names.label_of_name(name) is not None:
                return  # the name's own visit reports it
            if callee.id in self.aliases:  # imported by the code itself: not the builtin of that name
                self.found("modifies", f"calls {name}(), which the scan does not know to only read", node)
                return
            if callee.id == "__import__" and node.args and (module := _literal_str(node.args[0])):
                self.imports.append(module)
            if callee.id == "getattr":
                self.getattr_call(node)
            elif callee.id in ("setattr", "delattr"):
                if (
                    len(node.args) >= 2
                    and (attr := _literal_str(node.args[1])) is not None
                    and not _dunder(attr)
                ):
                    self.found("modifies", f"sets the attribute {attr!r} with {callee.id}", node)
                else:
                    self.found("unreadable", f"{callee.id} of a name the scan cannot read", node)
            elif callee.id == "open":
                self.open_call(node, mode_at=1)
            elif callee.id == "type" and len(node.args) != 1:
                self.found("modifies", "makes a class with type()", node)
            elif callee.id in ("sorted", "min", "max"):
                self.key_of(node)
            elif callee.id not in names.READ_BUILTINS and callee.id not in names.DYNAMIC_BUILTINS:
                self.found(
                    "modifies", f"calls {callee.id}(), which the scan does not know to only read", node
                )
        elif isinstance(callee, ast.Attribute):
            method = callee.attr
            dotted = self.dotted(callee)
            if dotted is not None and names.label_of_name(dotted) is not None:
                return  # the attribute's own visit reports it
            if method in names.DELETE_METHODS:
                self.found("deletes", f"calls .{method}()", node)
            elif method in names.WRITE_METHODS:
                self.found("writes-files", f"calls .{method}()", node)
            elif method == "open":
                self.open_call(node, mode_at=0)
            elif method in ("format", "format_map"):
                if _format_reaches(callee.value):
                    self.found("unreadable", "formats with fields that can reach attributes or items", node)
            elif method not in names.READ_METHODS:
                self.found("modifies", f"calls .{method}(), which the scan does not know to only read", node)
        else:
            self.found("modifies", f"calls the value of {ast.unparse(callee)[:60]}", node)

    def getattr_call(self, node: ast.Call) -> None:
        attr = _literal_str(node.args[1]) if len(node.args) >= 2 else None
        if attr is None:
            self.found("unreadable", "getattr of a name the scan cannot read", node)
        elif _dunder(attr) or attr in names.INSIDES:
            self.found("unreadable", f"reaches .{attr} with getattr", node)

    def open_call(self, node: ast.Call, *, mode_at: int) -> None:
        mode = node.args[mode_at] if len(node.args) > mode_at else None
        mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            self.found("writes-files", "opens a file with a mode the scan cannot read", node)
            return
        text = "r" if mode is None else _literal_str(mode)
        if text is None:
            self.found("writes-files", "opens a file with a mode the scan cannot read", node)
        elif set(text) & set("wax+"):
            self.found("writes-files", f"opens a file to write (mode {text!r})", node)
        else:
            self.found("modifies", "opens a file to read (read-only code reads only variables)", node)

    def key_of(self, node: ast.Call) -> None:
        for keyword in node.keywords:
            if keyword.arg is None:
                self.found("modifies", "passes arguments the scan cannot read (**)", node)
            elif keyword.arg == "key" and not (
                isinstance(keyword.value, ast.Lambda)
                or (isinstance(keyword.value, ast.Name) and keyword.value.id in names.READ_BUILTINS)
            ):
                self.found(
                    "modifies",
                    f"sorts by {ast.unparse(keyword.value)[:40]}, a function the scan cannot read",
                    node,
                )

    def shell_call(self, node: ast.Call) -> bool:
        """Judge ``get_ipython().system(...)`` and the other calls IPython's syntax becomes."""
        callee = node.func
        if not (
            isinstance(callee, ast.Attribute)
            and isinstance(callee.value, ast.Call)
            and isinstance(callee.value.func, ast.Name)
            and callee.value.func.id == "get_ipython"
            and not callee.value.args
        ):
            return False
        method, first = callee.attr, _literal_str(node.args[0]) if node.args else None
        if method in _SHELL and first is not None:
            self.found("runs-commands", f"runs the shell command {first[:60]!r}", node)
        elif method in ("run_line_magic", "run_cell_magic") and first is not None:
            sign = "%" if method == "run_line_magic" else "%%"
            label = names.label_of_magic(first)
            if label != "read-only":
                self.found(label, f"runs the magic {sign}{first}", node)
        else:
            return False
        self.handled.add(id(callee.value.func))
        return True


def _format_reaches(template: ast.AST) -> bool:
    """Whether ``template.format(...)`` may reach attributes or items: its fields say ``.`` or
    ``[``, or the template is not a literal the scan can read."""
    text = _literal_str(template)
    if text is None:
        return True
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(text) if field]
    except ValueError:
        return True
    return any("." in field or "[" in field for field in fields)


def _kind(statement: ast.stmt) -> str:
    return ast.unparse(statement).splitlines()[0][:60]
