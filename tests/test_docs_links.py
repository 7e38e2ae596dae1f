"""Every internal link of the README and the ``docs/`` pages resolves.

The reference lives in ``docs/`` (MyST Markdown) and the README links into it, so a renamed
heading or a moved page silently breaks a promise's address. This checks each relative link
``[text](path#anchor)`` and ``[text](#anchor)``: the path exists, and the anchor names a heading
of the target Markdown file (GitHub's and MyST's slug: lower case, punctuation other than ``-``
and ``_`` dropped, each space a hyphen, ``-1``, ``-2`` for repeats) or an explicit MyST target
``(label)=``. Links with a scheme (``https:``, ``mailto:``) and anything inside code are left
alone: a code block shows text, not links.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_MYST_TARGET = re.compile(r"^\(([^()\s]+)\)=[ \t]*$")
_HTML_ID = re.compile(r"""<a\s[^>]*?(?:name|id)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
# [text](dest "title") and ![alt](dest); the text may hold one level of brackets and line breaks.
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
_REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*(<[^>\n]*>|\S+)", re.MULTILINE)
_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//)")
_HEADING_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class BrokenLink:
    """A link that does not resolve: where it is, what it says, and why it fails."""

    source: str
    line: int
    target: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: [{self.target}] {self.reason}"


def strip_code(text: str) -> str:
    """``text`` with fenced code blocks and inline code spans blanked (line numbers kept)."""
    lines = text.split("\n")
    fence: str | None = None
    for i, line in enumerate(lines):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                lines[i] = ""
        else:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                if not line.strip().lstrip(fence[0]):
                    fence = None
            lines[i] = ""
    prose = "\n".join(lines)
    return _INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), prose)


def slug(heading: str) -> str:
    """The anchor GitHub (and MyST's ``heading_anchors``) gives a heading's text."""
    text = _HEADING_LINK.sub(r"\1", heading)
    text = _HTML_TAG.sub("", text).strip().lower()
    kept = "".join(
        ch
        for ch in text
        if ch in " -_" or unicodedata.category(ch)[0] in "LN" or unicodedata.category(ch) == "Mn"
    )
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown document offers: heading slugs, MyST targets, HTML ids."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        heading = _ATX_HEADING.match(line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
            continue
        target = _MYST_TARGET.match(line.strip())
        if target:
            found.add(target.group(1))
        found.update(_HTML_ID.findall(line))
    return found


def links(text: str) -> list[tuple[int, str]]:
    """``(line, destination)`` of every link outside code, inline and reference-style."""
    prose = strip_code(text)
    found = [
        (prose.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _INLINE_LINK.finditer(prose)
    ]
    found += [
        (prose.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _REFERENCE_DEF.finditer(prose)
    ]
    return [(line, dest[1:-1] if dest.startswith("<") else dest) for line, dest in found]


def check(files: list[Path], root: Path) -> list[BrokenLink]:
    """The broken relative links in ``files``; paths are reported relative to ``root``."""
    cache: dict[Path, set[str]] = {}

    def anchors_of(path: Path) -> set[str]:
        if path not in cache:
            cache[path] = anchors(path.read_text(encoding="utf-8"))
        return cache[path]

    broken: list[BrokenLink] = []
    for source in files:
        name = source.relative_to(root).as_posix()
        for line, dest in links(source.read_text(encoding="utf-8")):
            if not dest or _SCHEME.match(dest):
                continue
            path_part, _, anchor = dest.partition("#")
            target = (source.parent / unquote(path_part)).resolve() if path_part else source
            if not target.exists():
                broken.append(BrokenLink(name, line, dest, "no such file"))
                continue
            if not anchor or target.suffix.lower() != ".md":
                continue
            if unquote(anchor) not in anchors_of(target):
                broken.append(BrokenLink(name, line, dest, "no such heading or target"))
    return broken


def documentation(root: Path) -> list[Path]:
    """The README and every Markdown page under ``docs/``."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def test_readme_and_docs_links_resolve() -> None:
    files = documentation(ROOT)
    assert ROOT / "docs" / "index.md" in files
    broken = check(files, ROOT)
    assert not broken, "broken links:\n" + "\n".join(map(str, broken))


def test_every_docs_page_is_linked_from_the_readme() -> None:
    readme = ROOT / "README.md"
    linked = {
        (readme.parent / dest.partition("#")[0]).resolve()
        for _, dest in links(readme.read_text(encoding="utf-8"))
        if not _SCHEME.match(dest)
    }
    pages = set((ROOT / "docs").rglob("*.md"))
    assert pages, "docs/ has no pages"
    assert pages <= linked, f"not linked from the README: {sorted(map(str, pages - linked))}"


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("The standalone server (`gth-jupyter serve`)", "the-standalone-server-gth-jupyter-serve"),
        ("Client tools: suspend, fulfil, resume", "client-tools-suspend-fulfil-resume"),
        ("Images, media and links the agent shows", "images-media-and-links-the-agent-shows"),
        ("The model (`llm`)", "the-model-llm"),
        ("`__init__` and snake_case", "__init__-and-snake_case"),
        ("Many servers, one store", "many-servers-one-store"),
        ("A [linked](other.md) heading", "a-linked-heading"),
        ("Über 2 Köpfe", "über-2-köpfe"),
    ],
)
def test_slug(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_checker_reports_broken_links_and_only_those(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "README.md").write_text(
        "# Project\n\n"
        "See [the guide](docs/guide.md), [its setup](docs/guide.md#set-up-the-server),\n"
        "[a missing page](docs/nowhere.md) and [a missing section](docs/guide.md#tear-down).\n"
        "[Back up](#project), [not here](#no-such-heading), [the site](https://example.com/#x),\n"
        "[mail](mailto:a@example.com), [a second](docs/guide.md#usage-1).\n\n"
        "```markdown\n[in a code block](docs/nowhere.md)\n```\n\n"
        "Inline code: `[not a link](docs/nowhere.md)`.\n\n"
        "[ref]: docs/gone.md\n",
        encoding="utf-8",
    )
    (docs / "guide.md").write_text(
        "# Guide\n\n## Set up the server\n\n## Usage\n\n## Usage\n\n(custom-label)=\n"
        "## Labelled\n\n[label](#custom-label), [up](../README.md#project),\n"
        "[a broken label](#custom-labels), [the sample](sample.py#L3).\n",
        encoding="utf-8",
    )
    (docs / "sample.py").write_text("x = 1\n", encoding="utf-8")

    broken = check(documentation(tmp_path), tmp_path)

    assert [(b.source, b.line, b.target, b.reason) for b in broken] == [
        ("README.md", 4, "docs/nowhere.md", "no such file"),
        ("README.md", 4, "docs/guide.md#tear-down", "no such heading or target"),
        ("README.md", 5, "#no-such-heading", "no such heading or target"),
        ("README.md", 14, "docs/gone.md", "no such file"),
        ("docs/guide.md", 13, "#custom-labels", "no such heading or target"),
    ]
