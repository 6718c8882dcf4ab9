"""Deterministic news-like and blog-like text from the bundled grammar (corpus/grammar.txt).

The grammar is a plain list of symbols and choices written for this project; expanding it with a
seeded `random.Random` gives the same sentences on every machine, so the demo web and its gold
text are reproducible byte for byte. A story keeps its cast: once a person or a place has been
named, later sentences name it again more often than not, which makes an article read like one.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Literal

__all__ = [
    "Block",
    "Grammar",
    "StoryText",
    "load_grammar",
    "person",
    "write_comment",
    "write_story",
]

_SLOT = re.compile(r"\{([A-Za-z_][\w.]*)\}")
# Symbols whose first expansion in a story (the headline's, usually) is remembered and often
# reused, so the body keeps talking about the people, places and projects the headline named.
_CAST = ("person_name", "place_name", "accented_name", "project", "dish", "route", "book")
_MAX_DEPTH = 12
_A_AN = re.compile(r"\b([Aa]) ([aeiouAEIOU])")

SiteKind = Literal["news", "blog"]


@dataclass(frozen=True, slots=True)
class Block:
    """One body block of an article: a paragraph, a subheading, a bullet or numbered list, a
    table (`rows`, the first the header when `header`) or a code block (`text`, its lines)."""

    kind: Literal["p", "h2", "ul", "ol", "table", "pre"]
    text: str = ""
    items: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    header: bool = False

    def gold_paragraphs(self) -> list[str]:
        """The block as it counts in the gold text: a list item, a table row (its cells in
        order) is a paragraph of its own."""
        if self.kind in ("ul", "ol"):
            return list(self.items)
        if self.kind == "table":
            return [" ".join(row) for row in self.rows]
        if self.kind == "pre":  # its words; the page keeps its lines
            return [" ".join(self.text.split())]
        return [self.text]


@dataclass(frozen=True, slots=True)
class StoryText:
    title: str
    blocks: tuple[Block, ...]

    @property
    def gold(self) -> str:
        return "\n\n".join(p for block in self.blocks for p in block.gold_paragraphs())


@dataclass
class Grammar:
    """Symbol -> choices. `expand` prefers "symbol.section" lists when they exist."""

    rules: dict[str, list[str]]
    section: str = ""
    cast: dict[str, str] = field(default_factory=dict)

    def with_section(self, section: str) -> Grammar:
        return Grammar(self.rules, section, {})

    def choices(self, symbol: str) -> list[str]:
        specific = self.rules.get(f"{symbol}.{self.section}")
        if specific:
            return specific
        try:
            general = self.rules[symbol]
        except KeyError:
            raise KeyError(f"grammar has no symbol {symbol!r}") from None
        return general + self.rules.get(f"{symbol}.{self.section} +", [])

    def expand(self, symbol: str, rng: random.Random, depth: int = 0) -> str:
        if depth > _MAX_DEPTH:
            raise RecursionError(f"grammar symbol {symbol!r} nests too deeply")
        if symbol in _CAST and symbol in self.cast and rng.random() < 0.6:
            return self.cast[symbol]
        return self._fill(rng.choice(self.choices(symbol)), symbol, rng, depth)

    def _fill(self, choice: str, symbol: str, rng: random.Random, depth: int) -> str:
        text = _SLOT.sub(lambda m: self.expand(m.group(1), rng, depth + 1), choice)
        if symbol in _CAST:
            self.cast.setdefault(symbol, text)
        return text

    def sentence(self, symbol: str, rng: random.Random, avoid: set[str] | None = None) -> str:
        """One capitalised expansion; top-level choices in `avoid` are skipped while others
        remain (and the chosen one is added), so a story does not reuse a sentence pattern."""
        choices = self.choices(symbol)
        if avoid is not None:
            fresh = [c for c in choices if c not in avoid] or choices
            choice = rng.choice(fresh)
            avoid.add(choice)
        else:
            choice = rng.choice(choices)
        text = _A_AN.sub(r"\1n \2", self._fill(choice, symbol, rng, 0))
        return text[:1].upper() + text[1:]


def _parse(text: str) -> dict[str, list[str]]:
    rules: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = rules.setdefault(line[1:-1], [])
        elif current is None:
            raise ValueError(f"grammar line outside a [symbol] list: {line!r}")
        else:
            current.append(line)
    return rules


@cache
def load_grammar() -> Grammar:
    """The bundled grammar (parsed once per process)."""
    source = files("newscrawl.demo").joinpath("corpus/grammar.txt").read_text("utf-8")
    return Grammar(_parse(source))


def _paragraph(grammar: Grammar, rng: random.Random, symbol: str, used: set[str]) -> str:
    count = rng.choice((1, 2, 2, 3, 3, 3, 4, 5))
    return " ".join(grammar.sentence(symbol, rng, used) for _ in range(count))


def _length(rng: random.Random) -> int:
    """Number of paragraphs: mostly medium, some briefs, some long reads."""
    roll = rng.random()
    if roll < 0.15:
        return rng.randint(1, 2)
    if roll < 0.8:
        return rng.randint(3, 7)
    return rng.randint(8, 16)


def write_story(
    rng: random.Random, kind: SiteKind, section: str, *, accented: bool = False
) -> StoryText:
    """Headline and body blocks of one article; `kind` is "news" or "blog"."""
    grammar = load_grammar().with_section(section)
    title = grammar.sentence("headline", rng)
    used: set[str] = set()
    lead = grammar.sentence("news_lead", rng) if kind == "news" else ""
    symbol = "news_sentence" if kind == "news" else "blog_sentence"
    count = _length(rng)
    blocks: list[Block] = []
    for index in range(count):
        text = _paragraph(grammar, rng, symbol, used)
        if index == 0 and lead:
            text = f"{lead} {text}" if rng.random() < 0.5 else lead
        if accented and index == min(1, count - 1):
            text = f"{text} {grammar.sentence('accented_quote', rng)}"
        if count >= 6 and index in (count // 2, count - 2) and rng.random() < 0.6:
            blocks.append(Block("h2", grammar.sentence("subheading", rng)))
        blocks.append(Block("p", text))
    if kind == "blog" and count >= 3 and rng.random() < 0.3:
        items = tuple(dict.fromkeys(grammar.sentence("blog_object", rng) for _ in range(4)))
        blocks.insert(len(blocks) // 2 + 1, Block("ul", items=items))
    _add_structure(blocks, grammar, random.Random(f"{kind}/{section}/{title}"), kind)
    return StoryText(title, _dedupe_headings(blocks))


def _add_structure(
    blocks: list[Block], grammar: Grammar, rng: random.Random, kind: SiteKind
) -> None:
    """Some stories gain a table, a numbered list or a code block before their last
    paragraph (drawn from their own generator: the rest of the story is as it was)."""
    if len(blocks) < 4:
        return
    at = len(blocks) - 1
    roll = rng.random()
    if kind == "news" and roll < 0.3:
        blocks.insert(at, _table(grammar, rng))
    elif kind == "news" and roll < 0.45:
        steps = (grammar.sentence("news_sentence", rng) for _ in range(3))
        blocks.insert(at, Block("ol", items=tuple(dict.fromkeys(steps))))
    elif kind == "blog" and roll < 0.4:
        blocks.insert(at, _code(grammar, rng))


def _table(grammar: Grammar, rng: random.Random) -> Block:
    """Figures by place: a header row (on most tables) and two to five rows of places."""
    places = dict.fromkeys(grammar.expand("place_name", rng) for _ in range(rng.randint(3, 5)))
    for _ in range(20):  # two places at least: one row is no table of figures
        if len(places) >= 2:
            break
        places[grammar.expand("place_name", rng)] = None
    rows = [(place, str(rng.randint(12, 980)), f"{rng.randint(1, 60)}%") for place in places]
    header = rng.random() < 0.7
    if header:
        rows.insert(0, ("Place", "Homes", "Change"))
    return Block("table", rows=tuple(rows), header=header)


def _code(grammar: Grammar, rng: random.Random) -> Block:
    """A small plan written as code: indented lines and a blank line inside."""
    things = [grammar.sentence("blog_object", rng).strip('."') for _ in range(2)]
    lines = [
        "def plan():",
        f"    first = '{things[0].lower()}'",
        f"    then = '{things[1].lower()}'",
        "",
        f"    return first, then, {rng.randint(2, 9)}",
    ]
    return Block("pre", text="\n".join(lines))


def _dedupe_headings(blocks: list[Block]) -> tuple[Block, ...]:
    """Drop a subheading that repeats an earlier one or would end the article."""
    seen: set[str] = set()
    kept: list[Block] = []
    for block in blocks:
        if block.kind == "h2" and block.text in seen:
            continue
        seen.add(block.text)
        kept.append(block)
    while kept and kept[-1].kind == "h2":
        kept.pop()
    return tuple(kept)


def write_comment(rng: random.Random, section: str) -> str:
    grammar = load_grammar().with_section(section)
    return " ".join(grammar.sentence("comment_sentence", rng) for _ in range(rng.randint(1, 3)))


def person(rng: random.Random, accented: bool = False) -> str:
    grammar = load_grammar().with_section("")  # a fresh cast: the cached grammar stays pristine
    return grammar.expand("accented_name" if accented else "person_name", rng)
