"""The docs site, built as its README command builds it (``sphinx-build -W``: a warning, such as a
link to a page that is not there, fails the build), then checked: every internal link and anchor
of the built HTML points at something that exists, every public name and course notebook has its
page, and a browser shows the getting-started page and a notebook page in the light and the dark
theme.

The site is built once per module (8-13 s here) into a tmp dir. The screenshots go into
$MEOWGENT_SCREENSHOTS when it is set, else the test's tmp dir; Chromium and playwright are required as
for tests/notebook/browser/test_browser.py (skipped without them, a failure when CI is set).
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.support.browser_pages import chromium_browser
from tests.support.doc_blocks import DOCS, ROOT

BUILD = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html"]
NOTEBOOK_PAGE = "course/03_approvals.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [*BUILD, "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"sphinx-build -W failed:\n{done.stderr[-4000:]}"
    return out / "html"


class _Links(HTMLParser):
    """The ids of a page and the links (href, src) it holds."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.assets: list[str] = []
        """Scripts and stylesheets the page loads."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script" and found.get("src"):
            self.assets.append(found["src"] or "")
        elif tag == "link" and "stylesheet" in (found.get("rel") or "") and found.get("href"):
            self.assets.append(found["href"] or "")
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            elif name in ("href", "src") and value:
                self.links.append(value)


def broken_links(html_root: Path) -> list[str]:
    """``page: link`` for every link between the site's own files whose file or anchor is missing."""
    pages: dict[Path, _Links] = {}
    for path in html_root.rglob("*.html"):
        if "_static" in path.relative_to(html_root).parts:
            continue  # the theme's templates, copied as they are
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path.resolve()] = parser
    broken = []
    for path, parser in sorted(pages.items()):
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("javascript:"):
                continue  # a page of another site: not ours to check offline
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            fragment = unquote(parts.fragment)
            if not target.exists():
                broken.append(f"{path.relative_to(html_root.resolve())}: {link} (no such file)")
            elif fragment and target.suffix == ".html" and fragment not in pages[target].ids:
                broken.append(f"{path.relative_to(html_root.resolve())}: {link} (no such anchor)")
    return broken


def test_the_site_builds_without_a_warning_and_its_links_hold(site):
    assert broken_links(site) == []


def test_the_site_loads_nothing_from_another_host(site):
    # Read offline (a laptop on a train, a CI artifact): every script and stylesheet is the site's own.
    pages = [path for path in site.rglob("*.html") if "_static" not in path.relative_to(site).parts]
    outside = []
    for path in pages:
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8"))
        outside += [f"{path.relative_to(site)}: {asset}" for asset in parser.assets if urlsplit(asset).netloc]
    assert len(pages) > 20 and outside == []


def test_the_link_check_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    (tmp_path / "guides").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="guides/a.html#here">ok</a><a href="guides/b.html">gone</a>'
        '<a href="guides/a.html#nowhere">bad anchor</a><a href="#top">top</a><a href="https://x.org/">out</a>'
        '<img src="_static/logo.png"><h1 id="top">T</h1>'
    )
    (tmp_path / "guides" / "a.html").write_text(
        '<section id="here"><a href="../index.html">home</a></section>'
    )
    assert broken_links(tmp_path) == [
        "index.html: guides/b.html (no such file)",
        "index.html: guides/a.html#nowhere (no such anchor)",
        "index.html: _static/logo.png (no such file)",
    ]


@pytest.mark.parametrize(
    "module",
    ["meowgent_nb", "meowgent_nb.events", "meowgent_nb.models", "meowgent_nb.mcp", "meowgent_nb.testing"],
)
def test_every_public_name_has_its_reference(site, module):
    ids = _Links()
    ids.feed((site / "api.html").read_text(encoding="utf-8"))
    hidden = {"__version__", "load_ipython_extension", "unload_ipython_extension"}
    public = importlib.import_module(module)
    # A name the top level has too (ScriptedModel in meowgent_nb.models) is documented there, once.
    missing = [
        name
        for name in public.__all__
        if name not in hidden and not {f"{module}.{name}", f"meowgent_nb.{name}"} & ids.ids
    ]
    assert missing == []


def test_every_course_notebook_is_a_page_with_its_recorded_outputs(site):
    notebooks = sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb"))
    pages = sorted(path.stem for path in (site / "course").glob("*.html") if path.stem != "index")
    assert pages == notebooks
    approvals = (site / NOTEBOOK_PAGE).read_text(encoding="utf-8")
    # The transcript's own HTML, as the notebook saved it: cards and the approval decision's line.
    assert 'class="meowgent-card' in approvals and "meowgent-status-denied" in approvals


DOCS_SITE = "https://meowgent-nb.readthedocs.io/en/latest/"
"""Where Read the Docs serves the site (.readthedocs.yaml); the README and the package's URLs link it."""


def readme_links() -> list[str]:
    """The targets of README.md's links and images, as a package index's Markdown reads them."""
    from markdown_it import MarkdownIt

    found = []
    for block in MarkdownIt("commonmark").parse((ROOT / "README.md").read_text()):
        for token in block.children or []:
            if token.type in ("link_open", "image"):
                found.append(str(token.attrs["href" if token.type == "link_open" else "src"]))
    return found


def missing_from_site(html_root: Path, links: list[str]) -> list[str]:
    """The links to `DOCS_SITE` whose page, file or anchor the built site does not have."""
    missing = []
    for link in links:
        path, _, fragment = link.removeprefix(DOCS_SITE).partition("#")
        target = html_root / (path or "index.html")
        if not target.is_file():
            missing.append(f"{link} (no such file)")
        elif fragment:
            ids = _Links()
            ids.feed(target.read_text(encoding="utf-8"))
            if fragment not in ids.ids:
                missing.append(f"{link} (no such anchor)")
    return missing


def test_the_readme_links_the_docs_site_and_each_link_is_in_the_built_site(site):
    import tomllib

    # A package index shows the README with no repository beside it: a relative link would break.
    links = readme_links()
    assert [link for link in links if not urlsplit(link).scheme] == []
    docs = [link for link in links if link.startswith(DOCS_SITE)]
    assert {f"{DOCS_SITE}getting-started.html", f"{DOCS_SITE}changelog.html"} <= set(docs)
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls == {"Documentation": DOCS_SITE, "Changelog": f"{DOCS_SITE}changelog.html"}
    assert missing_from_site(site, [*docs, *urls.values()]) == []


def test_a_docs_link_the_site_lacks_is_named(tmp_path):
    (tmp_path / "index.html").write_text('<h1 id="top">T</h1>')
    links = [DOCS_SITE, f"{DOCS_SITE}#top", f"{DOCS_SITE}guides/gone.html", f"{DOCS_SITE}index.html#nowhere"]
    assert missing_from_site(tmp_path, links) == [
        f"{DOCS_SITE}guides/gone.html (no such file)",
        f"{DOCS_SITE}index.html#nowhere (no such anchor)",
    ]


# --- in a browser -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    yield from chromium_browser()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_getting_started_and_a_notebook_page_in_a_browser(site, browser, scheme, tmp_path):
    shots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((site / "getting-started.html").as_uri())
        # The theme follows the reader's system setting ("auto") and says which it shows.
        assert page.evaluate("document.documentElement.dataset.theme") == scheme
        page.screenshot(path=str(shots / f"docs_getting_started_{scheme}.png"))
        page.goto((site / NOTEBOOK_PAGE).as_uri())
        assert page.evaluate("document.documentElement.dataset.theme") == scheme
        # The first call a policy denied: its card, as the notebook saved it, with the cell above it.
        card = page.locator(".meowgent-card.meowgent-status-denied").first
        card.scroll_into_view_if_needed()
        page.mouse.wheel(0, -250)
        assert card.is_visible()
        # The transcript takes the page's colours, as in JupyterLab (not a light box in dark mode).
        box = card.evaluate("card => getComputedStyle(card.closest('.text_html')).backgroundColor")
        assert box == "rgba(0, 0, 0, 0)"
        page.screenshot(path=str(shots / f"docs_notebook_{scheme}.png"))
        assert errors == []
    finally:
        context.close()
