"""The site pass: a site's own template cut out of its pages' extracted text.

A page-level extractor sees one page; a site repeats its layout on every page. Once a site is
complete (a crawl: page cap reached, frontier exhausted or crawl over; offline: all the site's
pages read), the site pass compares what the page-level extractor chose on each page with the
same places on the site's other pages, and removes what the site's template says is not the
article:

- every text block sits in a **slot**: the chain of its named ancestors (tag, class and id, as
  `slot_name` reads them) below <body>, so the comments box, the related-links box, the
  article body and the headline of an article page are each one slot, the same on every page
  of the site whatever text they hold;
- a slot with text on at least `min_slot_pages` of the site's pages, that the extractor chose
  on fewer than `content_share` of them, is boilerplate (comments, related stories, teasers,
  widgets): its text is dropped wherever the extractor chose it;
- a slot whose text is the page's title on at least `title_share` of the pages that show it is
  the site's title slot: the title is the `title` field, and it leaves the text;
- a content slot whose characters the extractor chose at `whole_share` over the site's pages
  is the site's article slot: on a page where it chose most of it, the lines it left out
  between its chosen lines, and a single last line that ends a sentence, come back
  (`given_back`; never what opens the slot, a label, text in links or a line left out on
  `common_share` of the site's pages);
- a page left with no text keeps its page-level text;
- text of the page's comment thread (`newscrawl.extractors.comments`) that the pass cuts - the
site's
  comment slot, which the extractor chose on a few pages - goes to the page's `comments`
  (`Extraction.comments`), so it leaves `text` without being lost.

SiteLevel (Chakrabarti, Kumar and Punera) runs in the same pass
(`newscrawl.template.sitelevel.run_sitelevel`): its node hashes and labels go to the `nodes`
dataset. `SitePassConfig.cut_sitelevel` also cuts a chosen block owned by a node SiteLevel labels
template, outside the site's content slots; no setting turns it on (it is the lab's comparison
of site methods, `newscrawl.evaluation.site_method_scores`).

Only what the slot decisions need is kept per page (`PageChoice`: the chosen text pieces, the
pieces left out of the slots chosen on the page, and the page's slot ids), never the parsed
tree, so a 200-page site costs little memory, and the text is re-joined from the kept pieces
exactly as `Dom.pieces_text` joins them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from newscrawl.extractors.comments import thread_text
from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.markdown import MarkdownOptions
from newscrawl.extractors.markdown_render import render_marks
from newscrawl.html.dom import Dom
from newscrawl.html.text_pieces import join_pieces as render_pieces
from newscrawl.site.page_choice import (
    PageChoice,
    SiteSlots,
    page_choice,
)
from newscrawl.template.node_records import PageNodes
from newscrawl.template.sitelevel import (
    PageParser,
    RawPage,
    SiteLevelConfig,
    SiteLevelRun,
    parsed_pages,
    run_sitelevel,
)

__all__ = [
    "PAGE_STAGE",
    "SITE_STAGE",
    "PageOutcome",
    "SitePassConfig",
    "SitePassRun",
    "SiteTemplate",
    "SlotCounts",
    "cut_thread",
    "final_extraction",
    "finish_site_pass",
    "learn_template",
    "site_pass",
    "spare_lines",
]

Stage = Literal["site", "page"]
SITE_STAGE: Final = "site"  # the text went through the site pass
PAGE_STAGE: Final = "page"  # page-level text (the site had too few pages, or no site pass ran)


@dataclass(frozen=True, slots=True)
class SitePassConfig:
    """`min_pages`: sites with fewer pages keep their page-level text. `min_slot_pages`: a
    slot is judged only when it has text on at least this many pages. `content_share`: a slot
    the extractor chose on fewer than this share of the pages showing it is boilerplate.
    `title_share`: a slot holding the page's title on at least this share of its pages is the
    title slot. `cut_sitelevel`: also drop chosen text owned by SiteLevel template nodes
    outside content slots (slots chosen on at least `content_share` of their pages).
    `whole_share`: a content slot whose text the extractor chose at this share of its
    characters, over the pages it chose the slot on, is taken whole: on a page where it chose
    at least `page_whole_share` of the slot's characters, lines it left out of the slot
    (outside links) are given back (`given_back`), but not a line left out on at least
    `common_share` of the site's pages."""

    min_pages: int = 5
    min_slot_pages: int = 3
    content_share: float = 1 / 3
    title_share: float = 0.8
    cut_sitelevel: bool = False
    whole_share: float = 0.9
    page_whole_share: float = 0.5
    common_share: float = 0.25


@dataclass(frozen=True, slots=True)
class SiteTemplate:
    """A site's slot decisions: slots whose text leaves the articles, and content slots."""

    boilerplate: frozenset[int]
    title: frozenset[int]
    content: frozenset[int]
    pages: int
    # content slots the extractor takes whole on the site's pages: what it left out of them
    # on a page whose slot text it mostly chose is given back
    whole: frozenset[int] = frozenset()
    # lines left out on many of the site's pages ("Advertisement", "By", "Comments"): they
    # never come back
    common: frozenset[str] = frozenset()

    @property
    def dropped(self) -> frozenset[int]:
        return self.boilerplate | self.title


class SlotCounts:
    """What the slot decisions count over a site's pages, a page at a time: per slot, the
    pages it has text on, the pages the extractor chose it on, and those it holds the title on."""

    def __init__(self) -> None:
        self.present: Counter[int] = Counter()
        self.chosen: Counter[int] = Counter()
        self.titled: Counter[int] = Counter()
        self.picked_chars: Counter[int] = Counter()
        self.spare_chars: Counter[int] = Counter()
        self.spare_lines: Counter[str] = Counter()
        self.pages = 0

    def add(self, choice: PageChoice) -> None:
        self.present.update(choice.present)
        self.chosen.update(choice.chosen)
        self.titled.update(choice.title_slots)
        self.picked_chars.update(choice.slot_chars(True))
        self.spare_chars.update(choice.slot_chars(False))
        self.spare_lines.update(set(spare_lines(choice).values()))
        self.pages += 1

    def template(self, config: SitePassConfig) -> SiteTemplate:
        """The site's slot decisions from the pages counted (see the module docstring)."""
        boilerplate, title, content = set(), set(), set()
        for slot, pages in self.present.items():
            if not slot or pages < config.min_slot_pages:
                continue
            if self.chosen[slot] < config.content_share * pages:
                boilerplate.add(slot)
            else:
                content.add(slot)
                if self.titled[slot] >= config.title_share * pages:
                    title.add(slot)
        whole = {
            slot
            for slot in content - title
            if self.picked_chars[slot]
            >= config.whole_share * (self.picked_chars[slot] + self.spare_chars[slot])
        }
        least = max(config.min_slot_pages, config.common_share * self.pages)
        common = frozenset(line for line, pages in self.spare_lines.items() if pages >= least)
        return SiteTemplate(
            frozenset(boilerplate),
            frozenset(title),
            frozenset(content),
            self.pages,
            frozenset(whole),
            common,
        )


def learn_template(choices: Sequence[PageChoice], config: SitePassConfig) -> SiteTemplate:
    """The site's slot decisions from all of its pages (see the module docstring)."""
    counts = SlotCounts()
    for choice in choices:
        counts.add(choice)
    return counts.template(config)


def join_pieces(choice: PageChoice, keep: Sequence[int]) -> str:
    """The kept pieces (positions in `choice`) joined as `Dom.pieces_text` joins them."""
    return render_pieces(
        (choice.index[i], choice.texts[i], choice.lines[i], choice.glued[i], choice.pre[i])
        for i in keep
    )


def final_extraction(
    choice: PageChoice,
    template: SiteTemplate,
    label: np.ndarray | None = None,
    config: SitePassConfig | None = None,
) -> Extraction:
    """The page's text without its site's template (the page-level extraction when nothing
    is cut, or when cutting would leave nothing). `label`: SiteLevel's template label per
    node, used with `config.cut_sitelevel`."""
    config = config or SitePassConfig()
    if not choice.exact:
        return choice.extraction
    dropped = template.dropped
    cut = label if config.cut_sitelevel and label is not None else None

    given = given_back(choice, template, config)

    def kept(i: int) -> bool:
        slot = choice.slot[i]
        if slot in dropped or (choice.picked and not choice.picked[i] and i not in given):
            return False
        return cut is None or slot in template.content or not cut[choice.owner[i]]

    keep = [i for i in range(len(choice.slot)) if kept(i)]
    if keep == [i for i in range(len(choice.slot)) if not choice.picked or choice.picked[i]]:
        return choice.extraction
    text = join_pieces(choice, keep)
    if not text.strip():
        return choice.extraction
    nodes = tuple(sorted({choice.root[i] for i in keep}))
    pieces = tuple(choice.index[i] for i in keep)
    markdown = None
    if choice.marks is not None and choice.markdown is not None:
        options, marks = choice.markdown, choice.marks
        markdown = render_marks([marks[i] for i in keep], options.links, options.images)
    return Extraction(
        choice.extraction.title,
        text,
        nodes,
        choice.extraction.extractor,
        pieces,
        markdown,
        comments=cut_thread(choice, pieces),
    )


def given_back(choice: PageChoice, template: SiteTemplate, config: SitePassConfig) -> set[int]:
    """The left-out pieces (positions in `choice`) that come back. In a slot the site's pages
    take whole (`SiteTemplate.whole`) and of which the extractor chose at least
    `page_whole_share` of the characters on this page: the lines between its chosen pieces
    (a sub-heading, a short paragraph), but not a label (a line ending in ":"), and the one
    line after them when it is the slot's last and ends a sentence (a short last paragraph).
    What opens the slot before its first chosen piece (a date, a byline) never comes back."""
    if not choice.picked or not template.whole:
        return set()
    picked, spare = choice.slot_chars(True), choice.slot_chars(False)
    slots = {
        slot
        for slot in spare
        if slot in template.whole
        and picked[slot] >= config.page_whole_share * (picked[slot] + spare[slot])
    }
    found: set[int] = set()
    for slot in slots:
        found.update(_slot_given_back(choice, slot, template.common))
    return found


_SENTENCE_END = re.compile(r"[.!?][\"'”’»)]*$")


def spare_lines(choice: PageChoice, slot: int | None = None) -> dict[tuple[int, int], str]:
    """The lines of the pieces the extractor left out (of one slot, or of every slot), keyed
    by (slot, line number), as text."""
    found: dict[tuple[int, int], list[str]] = {}
    for i, picked in enumerate(choice.picked):
        if not picked and (slot is None or choice.slot[i] == slot):
            found.setdefault((choice.slot[i], choice.lines[i]), []).append(choice.texts[i])
    return {key: " ".join(" ".join(parts).split()) for key, parts in found.items()}


def _slot_given_back(choice: PageChoice, slot: int, common: frozenset[str]) -> list[int]:
    """`given_back` of one slot (`common`: lines that never come back)."""
    places = [i for i, at in enumerate(choice.slot) if at == slot]
    chosen = [i for i in places if choice.picked[i]]
    texts = spare_lines(choice, slot)
    lines: dict[int, list[int]] = {}
    for i in places:
        if not choice.picked[i] and i > chosen[0]:
            lines.setdefault(choice.lines[i], []).append(i)
    found = [
        i
        for number, line in lines.items()
        if line[0] < chosen[-1]
        and not texts[slot, number].endswith(":")
        and texts[slot, number] not in common
        for i in line
    ]
    after = [number for number, line in lines.items() if line[0] > chosen[-1]]
    if len(after) == 1:
        text = texts[slot, after[0]]
        if _SENTENCE_END.search(text) and text not in common:
            found.extend(lines[after[0]])
    return found


def cut_thread(choice: PageChoice, kept: Sequence[int]) -> str | None:
    """The page's comments once the pass kept the pieces `kept`: its thread without them,
    when the pass cut some of the thread out of the text (a comment slot of the site's
    template) or gave some back to it; None when the text holds the thread's pieces the
    extractor chose (the page-level comments stand)."""
    if not choice.thread:
        return None
    flags = choice.picked or [True] * len(choice.index)
    chosen = {k for k, picked in zip(choice.index, flags, strict=True) if picked}
    left = set(kept)
    if all((k in chosen) == (k in left) for k, *_ in choice.thread):
        return None
    return thread_text(render_pieces(piece for piece in choice.thread if piece[0] not in left))


@dataclass(slots=True)
class PageOutcome:
    """One page after the site pass: its final extraction and the stage that produced it."""

    raw: RawPage
    extraction: Extraction
    stage: Stage


@dataclass(slots=True)
class SitePassRun:
    """A site after the site pass: its SiteLevel run (for the `nodes` dataset), the outcome of
    each page that parsed (URL order) and the slot decisions (None: too few pages)."""

    sitelevel: SiteLevelRun
    outcomes: list[PageOutcome]
    template: SiteTemplate | None


PageExtract = Callable[[RawPage, Dom], Extraction]


def site_pass(
    site: str,
    raws: Iterable[RawPage],
    extract: PageExtract,
    *,
    config: SitePassConfig | None = None,
    sitelevel: SiteLevelConfig | None = None,
    geometry: str = "flow",
    max_pages: int | None = None,
    method: str = "sitelevel",
    parse: PageParser | None = None,
    nodes: bool = True,
    markdown: MarkdownOptions | None = None,
) -> SitePassRun:
    """The site pass of one site: SiteLevel (`run_sitelevel`: one parse per page; or another
    site-level `method`: sst, pagelets, entropy), the page-level extraction of each page
    (`extract(raw, dom)`, which may also read whatever else it wants from the parsed page), then
    the site's template out of every page's text. `parse`: as `run_sitelevel` takes it.
    `nodes` False: the caller writes no `nodes` rows (offline extraction), so unless SiteLevel's
    labels cut text (`config.cut_sitelevel`) no node records are built: the run has none.
    `markdown`: the final extractions' Markdown is rendered with these options (the
    page-level extractions `extract` returns carry theirs)."""
    config = config or SitePassConfig()
    slots = SiteSlots()
    choices: list[PageChoice] = []
    seen: list[RawPage] = []

    def visit(index: int, raw: RawPage, dom: Dom, records: PageNodes | None = None) -> None:
        choices.append(page_choice(dom, extract(raw, dom), slots, markdown))
        seen.append(raw)

    if not nodes and not config.cut_sitelevel:
        run = SiteLevelRun(site)
        for raw, dom in parsed_pages(run, raws, max_pages, parse):
            visit(len(seen), raw, dom)
        return finish_site_pass(run, seen, choices, config)
    run = run_sitelevel(
        site,
        raws,
        config=sitelevel,
        geometry=geometry,
        max_pages=max_pages,
        visit=visit,
        method=method,
        parse=parse,
    )
    return finish_site_pass(run, seen, choices, config)


def finish_site_pass(
    run: SiteLevelRun,
    seen: Sequence[RawPage],
    choices: Sequence[PageChoice],
    config: SitePassConfig | None = None,
) -> SitePassRun:
    """The site pass once every page was visited (`seen`, each with its `PageChoice`, in
    SiteLevel's order): the site's slot decisions, then each page's final text. The pages
    may have been visited by several processes (`SiteSlots` ids agree across them)."""
    config = config or SitePassConfig()
    if len(choices) < config.min_pages:
        pairs = zip(seen, choices, strict=True)
        outcomes = [PageOutcome(raw, choice.extraction, PAGE_STAGE) for raw, choice in pairs]
        return SitePassRun(run, outcomes, None)
    template = learn_template(choices, config)
    labels: Sequence[np.ndarray | None] = run.labels if run.labels else [None for _ in choices]
    outcomes = [
        PageOutcome(raw, final_extraction(choice, template, label, config), SITE_STAGE)
        for raw, choice, label in zip(seen, choices, labels, strict=True)
    ]
    return SitePassRun(run, outcomes, template)
