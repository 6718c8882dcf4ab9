"""Build an evaluation dataset of documentation pages, with gold text from the generator's markup.

Documentation generators mark the main body of every page they write: Sphinx's
``div[role=main]``, DocBook's and GTK-Doc's content division between their navigation header
and footer, Doxygen's ``div.contents``, Javadoc's ``main``, MkDocs' ``div[role=main]``, AsciiDoc's
``#content``, gi-docgen's ``section#main``, rustdoc's ``section#main-content``, mdBook's
``main``, Texinfo's body between its node headers. This module
reads such a site from a folder (an installed Debian ``-doc`` package, say), recognises the
generator of each page, takes that element as the page's gold main text (`gold_text`), and writes
the pages in the layout of the dev datasets (`newscrawl.gold.dataset`)::

    OUT/html/ID.html   the page, UTF-8, <meta charset> rewritten to utf-8
    OUT/gold/ID.txt    its gold text: one block a paragraph, blocks apart by a blank line
    OUT/meta.jsonl     id, url (the page's canonical link, else null), site, domain, title,
                       page_type ("documentation"), generator, package, version, licence, path
    OUT/stats.json     pages, sites, pages per site and per generator
    OUT/README.md      sources (package, version, licence), gold conventions, how it was built

Gold conventions (the same as the other datasets': the main text with its headings, lists,
tables and code): what the generator's main element holds, less the permalink marks (``¶``),
navigation headers and footers, "previous/next" links, breadcrumbs, sidebars, search boxes, line
numbers of code listings, "[source]" links, scripts, styles, forms and hidden elements. A table of
contents the generator put inside the main element (a Sphinx toctree, a DocBook chapter's toc, a
Texinfo menu) is part of the page's text and stays. Text is whitespace-normalised; every block
element (paragraph, heading, list item, ``dt``, ``dd``, table row, ...) is a paragraph of its
own; a table row is its cells joined by `` | ``; a ``pre`` keeps its lines.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from newscrawl.gold.docs_generators import PAGE_TYPE, page_gold

__all__ = [
    "DEBIAN_SOURCES",
    "DocsDataError",
    "DocsPage",
    "Source",
    "build_docs_dataset",
    "debian_sources",
    "parse_source",
    "utf8_page",
]


class DocsDataError(ValueError):
    """A source or output folder that cannot be used (told in one line)."""


# ---------------------------------------------------------------------------------------------
# Generators: how to recognise each, where its main element is, what inside it is not text.


# ---------------------------------------------------------------------------------------------
# Gold text: the main elements' text, one block a paragraph.


# ---------------------------------------------------------------------------------------------
# Pages as files: UTF-8 with the charset declaration rewritten.

_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([\w.:-]+)", re.I)
_XML_DECL = re.compile(rb"^\s*<\?xml[^>]*\?>\s*", re.I)
_CHARSET_IN_TAG = re.compile(r"(<meta[^>]+charset\s*=\s*[\"']?)([\w.:-]+)", re.I)


def utf8_page(data: bytes) -> str:
    """The page decoded by its declared charset (UTF-8 when none or unknown), with an XML
    declaration removed and every <meta> charset rewritten to utf-8."""
    data = _XML_DECL.sub(b"", data, count=1)
    found = _META_CHARSET.search(data[:4096])
    charset = found.group(1).decode("ascii", "replace") if found else "utf-8"
    try:
        text = data.decode(charset, errors="replace")
    except LookupError:
        text = data.decode("utf-8", errors="replace")
    return _CHARSET_IN_TAG.sub(lambda m: m.group(1) + "utf-8", text)


# ---------------------------------------------------------------------------------------------
# Sources: a folder of pages, named as one site, with the package it came from.


@dataclass(slots=True)
class Source:
    """One documentation site: its name, the folder of its pages, and where they came from."""

    site: str
    root: Path
    package: str = ""
    version: str = ""
    licence: str = ""
    files: list[Path] = field(default_factory=list)


_SKIP_NAMES = re.compile(
    r"^(genindex|search|py-modindex|modindex|objects|404|index-all|allclasses|allpackages|"
    r"overview-tree|deprecated-list|help-doc|constant-values|serialized-form|"
    r"package-tree|doxygen_crawl)(\b|[-_.])",
    re.I,
)
_SKIP_DIRS = frozenset({"_sources", "_modules", "_static", "_images", "search", "assets"})


def _page_files(root: Path) -> list[Path]:
    """The HTML files under `root` worth a page: not indexes, search or source listings."""
    seen: set[Path] = set()
    files = []
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in (".html", ".htm") or not path.is_file():
            continue
        parts = path.relative_to(root).parts
        if _SKIP_DIRS.intersection(parts[:-1]) or _SKIP_NAMES.match(path.name):
            continue
        real = path.resolve()
        if real not in seen:
            seen.add(real)
            files.append(path)
    return files


def _dpkg(*args: str) -> str:
    try:
        done = subprocess.run(
            ["dpkg-query", *args], capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


def _package_of(path: Path) -> str:
    """The Debian package that installed `path` ("" for none; only /usr and /opt are looked
    up, the places packages install to)."""
    if not path.is_absolute() or path.parts[1:2] not in (("usr",), ("opt",)):
        return ""
    out = _dpkg("-S", str(path))
    return out.split(":", 1)[0].strip() if out else ""


_LICENCE_NAMES = (
    ("GPL", r"\bGNU GPL\b|GNU General Public License|\bGPL-?\d"),
    ("LGPL", r"GNU Lesser General Public|\bLGPL"),
    ("GFDL", r"GNU Free Documentation License|\bGFDL"),
    ("permissive notice", r"Permission is granted to (copy|make)"),
)


def _package_licence(package: str) -> str:
    """The licences named in the package's Debian copyright file, in order of first mention."""
    copyright_file = Path("/usr/share/doc") / package / "copyright"
    try:
        text = copyright_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    names: list[str] = []
    for found in re.finditer(r"^License:[ \t]*(\S[^\n]*)$", text, re.M):
        name = found.group(1).strip()
        if name and name not in names:
            names.append(name)
    if names:
        return ", ".join(names[:4])
    # not in the machine-readable format: name what the text mentions, and where it is
    mentioned = [name for name, pattern in _LICENCE_NAMES if re.search(pattern, text)]
    where = f"see {copyright_file}"
    return f"{', '.join(mentioned)} ({where})" if mentioned else where


def parse_source(spec: str) -> Source:
    """A source from the command line: ``PATH``, ``NAME=PATH`` or an installed Debian package
    name (its HTML files; site = the package). A path's site is its name unless given; its
    package, version and licence are looked up with dpkg when it belongs to one."""
    name, _, path_text = spec.rpartition("=") if "=" in spec else ("", "", spec)
    if "/" not in path_text:
        return _package_source(path_text, name or path_text)
    root = Path(path_text)
    if not root.is_dir():
        raise DocsDataError(f"{root}: no such folder")
    package = _package_of(root.resolve())
    source = Source(name or root.resolve().name, root, package)
    _describe(source)
    source.files = _page_files(root)
    return source


def _package_source(package: str, site: str) -> Source:
    listed = _dpkg("-L", package)
    if not listed:
        raise DocsDataError(f"{package}: not an installed package (apt-get install {package})")
    html = [Path(line) for line in listed.splitlines() if line.endswith((".html", ".htm"))]
    html = [p for p in html if p.is_file()]
    if not html:
        raise DocsDataError(f"{package}: the package holds no HTML pages")
    root = Path(_common_dir(html))
    source = Source(site, root, package)
    _describe(source)
    allowed = {p.resolve() for p in html}
    source.files = [p for p in _page_files(root) if p.resolve() in allowed]
    return source


def _common_dir(paths: list[Path]) -> str:
    common = paths[0].parent
    for path in paths[1:]:
        while common not in path.parents:
            common = common.parent
    return str(common)


def _describe(source: Source) -> None:
    if source.package:
        source.version = _dpkg("-W", "-f=${Version}", source.package).strip()
        source.licence = _package_licence(source.package)


_GTK_DOC = "/usr/share/gtk-doc/html"
_RUST_DOC = "/usr/share/doc/rust-doc/html"
_INSTALL_GUIDE = "/usr/share/doc/installation-guide-amd64"

# A spread of documentation sites from Debian 12 packages: (SOURCE, package that installs it).
# Python's and PostgreSQL's own manuals are deliberately absent.
DEBIAN_SOURCES: tuple[tuple[str, str], ...] = (
    ("python-django-doc", "python-django-doc"),
    ("python-flask-doc", "python-flask-doc"),
    ("python-scrapy-doc", "python-scrapy-doc"),
    ("sphinx-doc", "sphinx-doc"),
    ("python-sqlalchemy-doc", "python-sqlalchemy-doc"),
    ("python-pytest-doc", "python-pytest-doc"),
    ("python-requests-doc", "python-requests-doc"),
    ("python-attr-doc", "python-attr-doc"),
    ("fontforge-doc", "fontforge-doc"),
    ("mkdocs-doc", "mkdocs-doc"),
    ("debian-reference-en", "debian-reference-en"),
    ("maint-guide", "maint-guide"),
    ("debian-faq", "debian-faq"),
    ("libpam-doc", "libpam-doc"),
    (f"installation-guide-en={_INSTALL_GUIDE}/en", "installation-guide-amd64"),
    (f"installation-guide-de={_INSTALL_GUIDE}/de", "installation-guide-amd64"),
    (f"installation-guide-ja={_INSTALL_GUIDE}/ja", "installation-guide-amd64"),
    (f"glib={_GTK_DOC}/glib", "libglib2.0-doc"),
    (f"gio={_GTK_DOC}/gio", "libglib2.0-doc"),
    (f"gtk3={_GTK_DOC}/gtk3", "libgtk-3-doc"),
    (f"harfbuzz={_GTK_DOC}/harfbuzz", "libharfbuzz-doc"),
    ("libsdl2-doc", "libsdl2-doc"),
    ("sigc=/usr/share/doc/libsigc++-2.0-doc/reference/html", "libsigc++-2.0-doc"),
    ("libjsoup-java-doc", "libjsoup-java-doc"),
    ("libcommons-io-java-doc", "libcommons-io-java-doc"),
    ("git-doc", "git-doc"),
    ("libsoup-3.0-doc", "libsoup-3.0-doc"),
    ("octave-doc", "octave-doc"),
    ("zsh-doc", "zsh-doc"),
    (f"rust-std={_RUST_DOC}/std", "rust-doc"),
    (f"rust-book={_RUST_DOC}/book", "rust-doc"),
    (f"rust-reference={_RUST_DOC}/reference", "rust-doc"),
)


def debian_sources() -> list[Source]:
    """The sources of `DEBIAN_SOURCES`; `DocsDataError` names the packages to install when
    some are missing."""
    missing = sorted(
        {
            pkg
            for _, pkg in DEBIAN_SOURCES
            if not _dpkg("-W", "-f=${Status}", pkg).endswith("installed")
        }
    )
    if missing:
        raise DocsDataError(
            "install the documentation first: apt-get install -y --no-install-recommends "
            + " ".join(missing)
        )
    return [parse_source(spec) for spec, _ in DEBIAN_SOURCES]


# ---------------------------------------------------------------------------------------------
# The dataset.


@dataclass(slots=True)
class DocsPage:
    """One page picked for the dataset."""

    path: Path
    html: str
    gold: str
    title: str
    generator: str
    url: str | None


def _canonical(html: str) -> str | None:
    found = re.search(
        r"<link[^>]+rel=[\"']canonical[\"'][^>]*href=[\"'](https?://[^\"']+)[\"']", html, re.I
    )
    return found.group(1) if found else None


def _candidates(source: Source, min_words: int) -> Iterator[DocsPage]:
    for path in source.files:
        try:
            html = utf8_page(path.read_bytes())
        except OSError:
            continue
        found = page_gold(html)
        if found is None:
            continue
        generator, title, gold = found
        if len(re.findall(r"\w+", gold)) >= min_words:
            yield DocsPage(path, html, gold, title, generator.name, _canonical(html))


def pick_pages(source: Source, limit: int, min_words: int = 30) -> list[DocsPage]:
    """Up to `limit` pages of `source` with a gold text of at least `min_words` words, no two
    with the same gold, nor with the same text past their first block (stub and redirect pages
    that differ in their title only); a fixed sample (seeded by the site) when there are more."""
    files = _spread(source.files, random.Random(source.site))
    picked: list[DocsPage] = []
    golds: set[str] = set()
    shuffled = Source(source.site, source.root, files=files)
    for page in _candidates(shuffled, min_words):
        digests = _gold_digests(page.gold)
        if golds.intersection(digests):
            continue
        golds.update(digests)
        picked.append(page)
        if len(picked) >= limit:
            break
    picked.sort(key=lambda p: str(p.path))
    return picked


def _gold_digests(gold: str) -> set[str]:
    """Digests of the whole gold text and of the text past its first block."""
    _, _, rest = gold.partition("\n\n")
    texts = {gold, rest} if rest else {gold}
    return {hashlib.sha1(text.encode()).hexdigest() for text in texts}


def _spread(files: list[Path], rng: random.Random) -> list[Path]:
    """`files` in a shuffled order that takes the folders in turn, so a sample of a site is
    not all changelogs or all release notes when one folder holds most pages."""
    by_folder: dict[Path, list[Path]] = {}
    for path in files:
        by_folder.setdefault(path.parent, []).append(path)
    queues = [by_folder[folder] for folder in sorted(by_folder)]
    for queue in queues:
        rng.shuffle(queue)
    rng.shuffle(queues)
    spread: list[Path] = []
    while queues:
        spread.extend(queue.pop() for queue in queues)
        queues = [queue for queue in queues if queue]
    return spread


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "site"


def _prepare_out(out: Path) -> Path:
    """A fresh temporary folder beside `out`; `out` must be missing, empty or a dataset this
    module wrote (it is replaced once the new one is complete)."""
    if out.exists():
        if not out.is_dir():
            raise DocsDataError(f"{out}: exists and is not a folder")
        if any(out.iterdir()) and not (out / "meta.jsonl").is_file():
            raise DocsDataError(f"{out}: not empty and not a dataset folder; pick another --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.building"
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "html").mkdir(parents=True)
    (tmp / "gold").mkdir()
    return tmp


def build_docs_dataset(
    sources: list[Source],
    out: Path,
    per_site: int = 150,
    min_words: int = 30,
    command: str = "",
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Write the dataset of `sources` to `out` (replacing a dataset there) and return its
    stats: at most `per_site` pages per site, each with at least `min_words` gold words. When
    no page qualifies, `out` is left as it was and `DocsDataError` says so."""
    names = [s.site for s in sources]
    if len(set(names)) != len(names):
        raise DocsDataError(f"two sources have one site name: {sorted(names)}")
    tmp = _prepare_out(out)
    records: list[dict[str, Any]] = []
    per_source: list[tuple[Source, Counter[str]]] = []
    for source in sources:
        pages = pick_pages(source, per_site, min_words)
        generators: Counter[str] = Counter(page.generator for page in pages)
        per_source.append((source, generators))
        for number, page in enumerate(pages, 1):
            records.append(_write_page(tmp, source, page, number))
        if say:
            say(f"{source.site}: {len(pages)} pages of {len(source.files)} ({_counts(generators)})")
    if not records:
        shutil.rmtree(tmp)
        raise DocsDataError(
            "no page with gold text of a known generator in: "
            + ", ".join(str(s.root) for s in sources)
        )
    with (tmp / "meta.jsonl").open("w", encoding="utf-8") as meta:
        for record in records:
            meta.write(json.dumps(record, ensure_ascii=False) + "\n")
    stats = _stats(records)
    (tmp / "stats.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    (tmp / "README.md").write_text(_readme(per_source, stats, command), encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return stats


def _write_page(folder: Path, source: Source, page: DocsPage, number: int) -> dict[str, Any]:
    page_id = f"{_slug(source.site)}-{number:04d}"
    (folder / "html" / f"{page_id}.html").write_text(page.html, encoding="utf-8")
    (folder / "gold" / f"{page_id}.txt").write_text(page.gold + "\n", encoding="utf-8")
    return {
        "id": page_id,
        "url": page.url,
        "site": source.site,
        "domain": source.site,
        "title": page.title,
        "page_type": PAGE_TYPE,
        "generator": page.generator,
        "package": source.package or None,
        "version": source.version or None,
        "licence": source.licence or None,
        "path": str(page.path.relative_to(source.root)),
    }


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counter.most_common()) or "none"


def _stats(records: list[dict[str, Any]]) -> dict[str, Any]:
    sites = Counter(r["site"] for r in records)
    return {
        "pages": len(records),
        "sites": len(sites),
        "max_pages_per_site": max(sites.values(), default=0),
        "pages_per_site": dict(sorted(sites.items())),
        "generators": dict(Counter(r["generator"] for r in records).most_common()),
        "page_types": {PAGE_TYPE: len(records)},
    }


_CONVENTIONS = """\
## Gold conventions
The gold text of a page is what its generator marks as the page's main body:

| generator | main element |
|---|---|
| Sphinx (any theme) | `div[itemprop=articleBody]`; Django's `div#docs-content`, `div#yui-main`; \
else `div.body`, `div[role=main]` |
| DocBook XSL | the body less `div.navheader`, `div.navfooter` and `hr` |
| GTK-Doc | the body less its `table.navigation`, `div.footer` and `hr` |
| Doxygen | `div.headertitle` and `div.contents` |
| Javadoc | `main` (older: `div.header` and `div.contentContainer`) |
| MkDocs | `div[role=main]` (Material: `article.md-content__inner`) |
| AsciiDoc | `div#header` and `div#content` |
| gi-docgen | `section#main` |
| Texinfo (makeinfo) | the body less node headers (`div.header`, `div.nav-panel`) and `hr` |
| rustdoc | `section#main-content` |
| mdBook | `div#content > main` |

Inside it, these are not main text and are left out: permalink marks (`¶`, `#`, `§`, Sphinx's
`a.headerlink`), navigation (`nav`, `[role=navigation]`, previous/next links, breadcrumbs,
Doxygen's member summary links, group breadcrumbs and "More..."), sidebars, search boxes and
forms, footers, line numbers of code listings, "[source]" links, copy buttons, scripts, styles
and hidden elements (`hidden`, `display:none`, the body of a closed `details`, mdBook's hidden
"boring" code lines).
Kept: headings, paragraphs, lists, definition lists (`dt` signatures and `dd` descriptions),
tables, code blocks, admonitions, and tables of contents the generator placed inside the main
element (a Sphinx toctree, a DocBook chapter's toc, a Texinfo menu): on an index page they are
the page's content.

Text: whitespace normalised; every block element (paragraph, heading, list item, `dt`, `dd`,
table row, ...) is one paragraph, paragraphs apart by a blank line as in the other datasets; a
table row is its cells joined by ` | `; a `pre` block keeps its lines. Left out: pages with
fewer than the minimum number of gold words; pages whose gold text, or its text past the first
block (stub and redirect pages that differ in their title only), another page of the site
already has; general indexes, search pages, module indexes and highlighted source listings.
"""


def _readme(
    per_source: list[tuple[Source, Counter[str]]], stats: dict[str, Any], command: str
) -> str:
    rows = [
        "| site | package | version | licence (Debian copyright) | generator | pages |",
        "|---|---|---|---|---|---|",
    ]
    for source, generators in per_source:
        rows.append(
            f"| {source.site} | {source.package or '-'} | {source.version or '-'} | "
            f"{source.licence or '-'} | {_counts(generators)} | {sum(generators.values())} |"
        )
    built = f"\nBuilt with:\n\n```\n{command}\n```\n" if command else ""
    return (
        "# Documentation pages with gold main text\n\n"
        "Real documentation pages, as their generators wrote them, from documentation packages "
        "(Debian `-doc` packages and the like) under free licences. The gold text of each page "
        "is its generator's own marking of the main body (see Gold conventions). One site per "
        "manual; `page_type` is `documentation` on every page.\n\n"
        f"{stats['pages']} pages, {stats['sites']} sites.\n\n"
        "## Layout\n"
        "As the dev datasets: `html/ID.html` (UTF-8, `<meta charset>` rewritten), `gold/ID.txt`, "
        "`meta.jsonl` (id, url: the page's canonical link or null, site, domain, title, "
        "page_type, generator, package, version, licence, path in the package), `stats.json`.\n\n"
        "## Sources\n" + "\n".join(rows) + "\n\n"
        "The pages remain their authors' work under the licences named; they are kept outside "
        "the project, for training and evaluation.\n\n" + _CONVENTIONS + built
    )
