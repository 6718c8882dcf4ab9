"""The one DOM model every extractor and the template stage read.

A page is parsed once with lxml and flattened, in one preorder walk, into parallel arrays indexed
by node id (the preorder number, which the papers' algorithms rely on). Because ids are preorder,
the subtree of node ``i`` is the contiguous id range ``[i, end[i])``, and the visible text of that
subtree is the contiguous range ``[piece_start[i], piece_end[i])`` of text pieces. Every subtree
aggregate (chars, chars in links, words, tags, link tags) is then a difference of two prefix sums:
no second walk, and no reader recurses (the compiled walk recurses to 4,096 levels, twice the
parser's limit, and hands anything deeper to the Python walk, which keeps its stack in a list).

Nodes are elements. Text lives in *pieces*: each non-blank ``text`` or ``tail`` string of lxml,
whitespace-collapsed, owned by the element it sits directly inside. A piece is what the papers call
a text node: its tag path is its owner's path.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import cached_property
from itertools import accumulate, compress

import lxml.etree
import lxml.html
import numpy as np

from newscrawl.html.tags import BLOCK_TAGS, GLUE_TAGS, SKIPPED_TAGS, VOID_TAGS
from newscrawl.html.text_pieces import join_pieces, preformatted_pieces
from newscrawl.html.tree import page_tree, scripts_and_noscripts, shown_noscripts
from newscrawl.html.unicode_scripts import spaceless

try:  # the compiled walk (an optional extension: pip builds it where a C compiler is found)
    from newscrawl.html._domwalk import attribute_values as _compiled_attribute_values
    from newscrawl.html._domwalk import named as _compiled_named
    from newscrawl.html._domwalk import walk as _compiled_walk
    from newscrawl.html._domwalk import with_attribute as _compiled_with_attribute
except ImportError:  # pragma: no cover - exercised where the extension was not built
    _compiled_walk = _compiled_named = _compiled_with_attribute = None
    _compiled_attribute_values = None
# It reads lxml's element struct and libxml2's node struct as it declares them: only with the
# versions they are known for (a wrong layout would crash, not just differ, so the check at
# import below could not catch it); another lxml walks in Python until checked.
if lxml.etree.LXML_VERSION[0] not in (5, 6) or lxml.etree.LIBXML_VERSION[0] != 2:
    _compiled_walk = None  # pragma: no cover

__all__ = [
    "COMPILED_WALK",
    "Dom",
    "elements_named",
]


class Dom:
    """A parsed page as flat per-node arrays (built by `parse_html`); never change its tree."""

    def __init__(
        self, root: lxml.html.HtmlElement, url: str | None = None, site: str | None = None
    ) -> None:
        self.url = url
        #: The site the page belongs to, when the caller knows it (`newscrawl extract|evaluate
        #: --site-from`): an opaque key that groups a site's pages. None: not told, readers work
        #: it out from the URL (`newscrawl.extractors.template_filter.page_site`); "": no site.
        self.site = site
        self._reset_lists()
        self.title = ""
        self.meta: dict[str, str] = {}
        self.lang = (root.get("lang") or "").strip() if isinstance(root.tag, str) else ""
        #: The charset the page's bytes were decoded with ("" when it came as text) and what
        #: decided it: bom, declared, detected, default or text (`newscrawl.html.decoding`).
        self.encoding = ""
        self.encoding_source = "text"
        #: The tree's <script> elements (outside the Dom's nodes), found with its noscripts.
        self.scripts, noscripts = scripts_and_noscripts(root)
        #: The <noscript> elements read as visible text (see `shown_noscripts`).
        self.shown_noscripts = shown_noscripts(root, noscripts)
        self._walk(root)
        self._aggregate()

    def _reset_lists(self) -> None:
        """The node and piece lists, empty (the walk fills them)."""
        self.tag: list[str] = []
        self.parent: list[int] = []
        self.depth: list[int] = []
        self.end: list[int] = []
        self.children: list[list[int]] = []
        #: Each node's lxml element (from the compiled walk: made when read, `_domwalk.Elements`).
        self.elements: Sequence[lxml.html.HtmlElement] = []
        #: Whether the element has any attribute (readers of class, id, style... skip it if not).
        self.has_attributes: list[bool] = []
        self.piece_start: list[int] = []
        self.piece_end: list[int] = []
        # Text pieces, as parallel arrays.
        self.piece_owner: list[int] = []
        self.piece_block: list[int] = []
        self.piece_text: list[str] = []
        self.piece_line: list[int] = []  # pieces with the same number render on one line
        # one word with the piece before: no whitespace between, not laid apart (GLUE_TAGS)
        self.piece_glued: list[bool] = []
        self.piece_in_link: list[bool] = []
        self.href: dict[int, str] = {}

    # -- construction -------------------------------------------------------------------------

    def _walk(self, root: lxml.html.HtmlElement) -> None:
        """One preorder walk: node arrays, pieces, and piece ranges per node. Compiled
        (`html/_domwalk.c`) where it was built and checked, else in Python (`_walk_python`)."""
        if _compiled_walk is None:
            self._walk_python(root)
            return
        try:
            self._walk_compiled(root)
        except RecursionError:  # nested deeper than the C walk recurses: start again
            self._reset_lists()
            self._walk_python(root)

    def _walk_compiled(self, root: lxml.html.HtmlElement) -> None:
        assert _compiled_walk is not None
        titles: list[int] = []
        metas: list[int] = []
        path_ids: list[int] = []
        self.elements = _compiled_walk(
            root, self.tag, self.parent, self.depth, self.end, self.children,
            self.has_attributes, self.piece_start, self.piece_end, self.piece_owner,
            self.piece_block, self.piece_text, self.piece_line, self.piece_glued,
            self.piece_in_link, self.href, titles, metas, path_ids, self.shown_noscripts,
            SKIPPED_TAGS, BLOCK_TAGS, GLUE_TAGS,
        )  # fmt: skip
        self.__dict__["path_ids"] = path_ids  # the cached property, made by the walk
        for node in titles:  # the first <title> with text, as the Python walk takes it
            if not self.title:
                self.title = " ".join("".join(self.elements[node].itertext()).split())
        for node in metas:
            self._read_meta(self.elements[node])

    def _walk_python(self, root: lxml.html.HtmlElement) -> None:
        """The walk in Python (lxml's `iterwalk`, which keeps the stack in C)."""
        # The lists and sets are bound to locals: this loop runs twice per element of the page.
        tags, parents, depths, children = self.tag, self.parent, self.depth, self.children
        elements, piece_start, piece_end = self.elements, self.piece_start, self.piece_end
        assert isinstance(elements, list)  # as `_reset_lists` made it
        pieces, shown, add_piece = self.piece_text, self.shown_noscripts, self._add_piece
        href, has_attributes = self.href, self.has_attributes
        # Per open element: its node id (-1: skipped, it keeps only its tail), the context its
        # children inherit (node, depth, block, in head, in link) and where its tail text lives.
        top: tuple = (-1, -1, -1, False, False)
        stack: list[tuple] = []
        push, pop = stack.append, stack.pop
        last_raw = " "  # raw text of the previous piece, to know whether pieces touch
        self._line = 0  # bumped at every block boundary and <br>
        # Between two texts, the elements that held the first and have ended (0 none, 1 only
        # GLUE_TAGS, 2 another) and those begun since that will hold the next (how many, how
        # many not GLUE_TAGS): an empty element in between (`le<a></a>ave`) is neither.
        # `_texts` counts the texts (blank ones too), to tell whether an element held one.
        self._closed = self._opened = self._opened_apart = self._texts = 0
        walker = lxml.etree.iterwalk(root, events=("start", "end", "comment", "pi"))
        skip = walker.skip_subtree
        for event, el in walker:
            if event == "end":
                node, _, tail_ctx, texts = pop()
                if node >= 0:
                    piece_end[node] = len(pieces)
                    if tags[node] in BLOCK_TAGS:
                        self._line += 1
                    self._end_apart(tags[node] not in GLUE_TAGS, texts)
                top = stack[-1][1] if stack else top
                if el.tail:
                    last_raw = add_piece(el.tail, tail_ctx, last_raw)
                continue
            parent, depth, block, in_head, in_link = top
            ctx = (parent, block, in_head, in_link)  # where this element's tail text lives
            tag = el.tag
            # Comments, processing instructions, entity references (in a tree built by hand;
            # their tag is lxml's Entity factory, no name) and invisible elements keep only
            # their tail.
            if (
                event != "start"
                or not isinstance(tag, str)
                or ((tag := tag.lower()) in SKIPPED_TAGS and el not in shown)
            ):
                if event == "start":
                    skip()
                    push((-1, top, ctx, 0))
                elif el.tail:
                    last_raw = add_piece(el.tail, ctx, last_raw)
                continue
            self._opened += 1
            self._opened_apart += tag not in GLUE_TAGS
            node = len(tags)
            tags.append(tag)
            parents.append(parent)
            depths.append(depth + 1)
            children.append([])
            elements.append(el)
            has_attributes.append(bool(el.keys()))
            piece_start.append(len(pieces))
            piece_end.append(0)
            if parent >= 0:
                children[parent].append(node)
            if tag == "head":
                in_head = True
            elif tag == "a":
                in_link = True
                href[node] = el.get("href") or ""
            elif tag == "title" and not self.title:
                self.title = " ".join("".join(el.itertext()).split())
            elif tag == "meta":
                self._read_meta(el)
            is_block = tag in BLOCK_TAGS
            if is_block:
                self._line += 1
            own_block = node if is_block else block
            # Text after a <br> is a text node of its own in the papers' DOM: its block is the <br>.
            top = (node, depth + 1, own_block, in_head, in_link)
            tail_ctx = (parent, node, ctx[2], ctx[3]) if tag == "br" else ctx
            push((node, top, tail_ctx, self._texts))
            if el.text:
                last_raw = add_piece(el.text, (node, own_block, in_head, in_link), last_raw)
        # end[i]: ids are preorder, so the subtree ends where the next node outside it starts.
        end = [0] * len(tags)
        for node in range(len(end) - 1, -1, -1):
            kids = children[node]
            end[node] = end[kids[-1]] if kids else node + 1
        self.end = end

    def _add_piece(self, raw: str, ctx: tuple[int, int, bool, bool], last_raw: str) -> str:
        """Record one text run; returns the raw text that now precedes the next run."""
        owner, block, in_head, in_link = ctx
        text = " ".join(raw.split())
        if not text:
            self._between_texts()
            return " "  # blank text still separates its neighbours
        if in_head or owner < 0:
            return last_raw
        # two elements side by side are two words (see GLUE_TAGS), unless a script without
        # spaces runs across them
        apart = (
            self._closed
            and self._opened
            and (self._closed == 2 or self._opened_apart)
            and not spaceless(last_raw[-1])
            and not spaceless(raw[0])
        )
        self._between_texts()
        self.piece_owner.append(owner)
        self.piece_block.append(block)
        self.piece_line.append(self._line)
        self.piece_text.append(text)
        self.piece_glued.append(not (apart or raw[0].isspace() or last_raw[-1].isspace()))
        self.piece_in_link.append(in_link)
        return raw

    def _end_apart(self, apart: bool, texts: int) -> None:
        """An element ends (`texts`: the count when it began; `apart`: not in GLUE_TAGS)."""
        if texts == self._texts:  # it held no text: begun and ended between the same two
            self._opened -= 1
            self._opened_apart -= apart
        else:
            self._closed = max(self._closed, 2 if apart else 1)

    def _between_texts(self) -> None:
        self._texts += 1
        self._closed = self._opened = self._opened_apart = 0

    def _read_meta(self, el: lxml.html.HtmlElement) -> None:
        key = el.get("property") or el.get("name") or el.get("itemprop") or el.get("http-equiv")
        content = el.get("content")
        if key and content is not None:
            self.meta.setdefault(key.strip().lower(), content.strip())

    def _aggregate(self) -> None:
        """Subtree sums from prefix sums over the piece and node arrays."""
        lengths = list(map(len, self.piece_text))
        self._chars_prefix = [0, *accumulate(lengths)]
        # a piece's length where it is in a link (True * n), else 0: in C, not a Python loop
        link_lengths = map(operator.mul, self.piece_in_link, lengths)
        self._link_chars_prefix = list(accumulate(link_lengths, initial=0))
        self._links_prefix = list(accumulate(map("a".__eq__, self.tag), initial=0))

    @cached_property
    def _word_prefixes(self) -> tuple[list[int], list[int]]:
        """Prefix sums of words and of words inside links over pieces; made on first use, as
        few readers count words (NCE's title search) and splitting every piece costs."""
        words = [len(t.split()) for t in self.piece_text]
        link_words = (n if f else 0 for n, f in zip(words, self.piece_in_link, strict=True))
        return [0, *accumulate(words)], [0, *accumulate(link_words)]

    # -- per-node measures ----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.tag)

    def text_len(self, node: int) -> int:
        """Visible characters in the subtree of `node` (whitespace collapsed, pieces not joined)."""
        return self._chars_prefix[self.piece_end[node]] - self._chars_prefix[self.piece_start[node]]

    def link_chars(self, node: int) -> int:
        """Visible characters inside <a> elements in the subtree of `node`."""
        p = self._link_chars_prefix
        return p[self.piece_end[node]] - p[self.piece_start[node]]

    def words(self, node: int) -> int:
        p = self._word_prefixes[0]
        return p[self.piece_end[node]] - p[self.piece_start[node]]

    def link_words(self, node: int) -> int:
        p = self._word_prefixes[1]
        return p[self.piece_end[node]] - p[self.piece_start[node]]

    def tag_count(self, node: int) -> int:
        """Elements in the subtree of `node`, itself included."""
        return self.end[node] - node

    def link_count(self, node: int) -> int:
        """<a> elements in the subtree of `node`, itself included."""
        return self._links_prefix[self.end[node]] - self._links_prefix[node]

    def subtree_chars(self, nodes: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`text_len` and `link_chars` of many nodes at once, as float arrays."""
        start, end, chars, links = self.subtree_arrays
        index = np.asarray(nodes, dtype=np.int64)
        start, end = start[index], end[index]
        return chars[end] - chars[start], links[end] - links[start]

    @cached_property
    def path_ids(self) -> list[int]:
        """An interned tag-path id per node: equal ids <=> equal root-to-node tag sequences.

        Parents precede children in preorder, so a node's id is looked up from its parent's id
        and its own tag: one dictionary probe per node, whatever the depth. Made once a page for
        CETD-TPC and the learned extractor's features.
        """
        table: dict[tuple[int, str], int] = {}
        ids: list[int] = []
        append, intern = ids.append, table.setdefault
        for parent, tag in zip(self.parent, self.tag, strict=True):
            append(intern((ids[parent] if parent >= 0 else -1, tag), len(table)))
        return ids

    @cached_property
    def subtree_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`piece_start`, `piece_end` and the prefix sums of characters and of link characters
        over pieces, as arrays made once for `subtree_chars` and vectorised readers."""
        return (
            np.asarray(self.piece_start, dtype=np.int64),
            np.asarray(self.piece_end, dtype=np.int64),
            np.asarray(self._chars_prefix, dtype=np.float64),
            np.asarray(self._link_chars_prefix, dtype=np.float64),
        )

    @cached_property
    def node_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`parent`, `end` and `depth` as int64 arrays, made once for vectorised readers."""
        return (
            np.asarray(self.parent, dtype=np.int64),
            np.asarray(self.end, dtype=np.int64),
            np.asarray(self.depth, dtype=np.int64),
        )

    @cached_property
    def link_tags_prefix(self) -> np.ndarray:
        """Prefix sums of <a> elements over node ids, as floats: `link_count` of every node."""
        return np.asarray(self._links_prefix, dtype=np.float64)

    def link_density(self, node: int) -> float:
        chars = self.text_len(node)
        return self.link_chars(node) / chars if chars else 0.0

    def is_ancestor(self, ancestor: int, node: int) -> bool:
        """True when `node` lies in the subtree of `ancestor` (a node is its own ancestor)."""
        return ancestor <= node < self.end[ancestor]

    @cached_property
    def own_text_len(self) -> list[int]:
        """Characters of the pieces each node owns directly (its text and its children's tails)."""
        own = [0] * len(self.tag)
        for owner, text in zip(self.piece_owner, self.piece_text, strict=True):
            own[owner] += len(text)
        return own

    @cached_property
    def html_len(self) -> list[int]:
        """Characters of each node's HTML (its subtree's markup, invisible elements included).

        Counted, not serialised: a node's own share is its tags and attributes, its text, its
        children's tails and the full markup of the invisible children that got no node (script,
        style, ...); a subtree's total is then a prefix-sum difference over the preorder ids.
        Entities count as their decoded characters, so this approximates the source length.
        """
        shown = self.shown_noscripts
        own = [
            _own_html_len(el, tag, shown) for el, tag in zip(self.elements, self.tag, strict=True)
        ]
        prefix = [0, *accumulate(own)]
        return [prefix[self.end[i]] - prefix[i] for i in range(len(own))]

    @cached_property
    def nodes_by_tag(self) -> dict[str, list[int]]:
        """Node ids of each tag, in document order: one pass over `tag` shared by every reader
        that wants only some tags (<link>, <time>, <article>, headings, ...)."""
        index: dict[str, list[int]] = {}
        for node, tag in enumerate(self.tag):
            index.setdefault(tag, []).append(node)
        return index

    def nodes_of(self, tag: str) -> list[int]:
        """Node ids of one tag, in document order: from `nodes_by_tag` where a reader of many
        tags built it, else found by the list's own C-speed count and index."""
        index = self.__dict__.get("nodes_by_tag")
        if index is not None:
            return list(index.get(tag, ()))
        tags, found, node = self.tag, [], -1
        for _ in range(tags.count(tag)):
            node = tags.index(tag, node + 1)
            found.append(node)
        return found

    def attribute_values(
        self, nodes: list[int], names: tuple[str, ...]
    ) -> list[tuple[str | None, ...] | None]:
        """Per node of `nodes`: None when its element has no attribute, else its values of
        `names` (None where one is missing), as `get` reads them; in one C call where the
        compiled walk runs (for at most 16 ASCII names in no namespace)."""
        compiled = _compiled_attribute_values is not None and len(names) <= 16
        if compiled and all(name.isascii() and _plain_name(name) for name in names):
            return _compiled_attribute_values(self.elements, nodes, names)
        elements, has = self.elements, self.has_attributes
        return [tuple(map(elements[n].get, names)) if has[n] else None for n in nodes]

    def nodes_with_attribute(self, name: str) -> list[int]:
        """Ids of the nodes whose element has attribute `name` written on it (`el.get(name) is
        not None`; a DTD's default attributes are not read), in document order; read in C where
        the compiled walk runs, for a name in no namespace."""
        if _compiled_with_attribute is not None and _plain_name(name):
            return _compiled_with_attribute(self.elements, name)
        elements = self.elements
        nodes = compress(range(len(elements)), self.has_attributes)
        return [node for node in nodes if elements[node].get(name) is not None]

    @cached_property
    def body(self) -> int:
        """Id of <body>, or of the root when the page has none."""
        return next((i for i, t in enumerate(self.tag) if t == "body"), 0)

    def tag_path(self, node: int) -> tuple[str, ...]:
        path: list[str] = []
        while node >= 0:
            path.append(self.tag[node])
            node = self.parent[node]
        return tuple(reversed(path))

    # -- text ---------------------------------------------------------------------------------

    def text(self, node: int) -> str:
        """Visible text of the subtree of `node`, one line per block."""
        return self.pieces_text(range(self.piece_start[node], self.piece_end[node]))

    def text_of(self, nodes: list[int] | tuple[int, ...]) -> str:
        """Visible text of several subtrees in document order, one line per block.

        Nested ids are allowed: a node inside another selected node is not repeated.
        """
        picked: list[int] = []
        covered_until = -1
        for node in sorted(nodes):
            if node < covered_until:
                continue
            picked.extend(range(self.piece_start[node], self.piece_end[node]))
            covered_until = self.end[node]
        return self.pieces_text(picked)

    def pieces_text(self, pieces: range | list[int]) -> str:
        """Join text pieces: a new line at block ends, <br> and gaps, else a space or nothing;
        the pieces of a ``<pre>`` keep its line breaks and indentation (`pre_pieces`)."""
        pre, text = self.pre_pieces, self.piece_text
        line, glued = self.piece_line, self.piece_glued
        if not pre:
            return join_pieces((k, text[k], line[k], glued[k], -1) for k in pieces)
        return join_pieces(_with_pre(k, text[k], line[k], glued[k], pre) for k in pieces)

    @cached_property
    def pre_pieces(self) -> dict[int, tuple[int, str]]:
        """Per piece inside a ``<pre>``: (the outermost ``<pre>``, the piece's text as written,
        with the whitespace since the piece before it in the ``<pre>``); empty for a page
        without one (`preformatted_pieces`)."""
        if "pre" not in self.tag:
            return {}
        found: dict[int, tuple[int, str]] = {}
        covered = -1
        for node in self.nodes_of("pre"):
            if node < covered:
                continue  # a <pre> inside another: read with the outer one
            covered = self.end[node]
            texts = preformatted_pieces(self.elements[node], self.shown_noscripts)
            first = self.piece_start[node]
            if len(texts) == self.piece_end[node] - first:  # else the walk read it otherwise
                found.update((first + i, (node, text)) for i, text in enumerate(texts))
        return found

    def ranges_text(self, starts: Sequence[int], stops: Sequence[int]) -> list[str]:
        """`pieces_text(range(a, b))` of every non-empty range, in one pass over the pieces.

        In a contiguous range each piece after the first follows a new line (its line number
        changed), nothing (glued) or a space, as `join_pieces` renders it; each piece is given
        its lead once, and a range's text is its first piece and the rest with theirs.
        """
        text, line, glued = self.piece_text, self.piece_line, self.piece_glued
        led = [
            ("\n" if line[k] != line[k - 1] else "" if glued[k] else " ") + text[k] if k else ""
            for k in range(len(text))
        ]
        return [
            text[a] + "".join(led[a + 1 : b]) if b - a > 1 else text[a]
            for a, b in zip(starts, stops, strict=True)
        ]


def _own_html_len(el: lxml.html.HtmlElement, tag: str, shown: set[lxml.html.HtmlElement]) -> int:
    """Markup characters that belong to `el` itself rather than to a child node (see html_len)."""
    size = len(tag) + 2 if tag in VOID_TAGS else 2 * len(tag) + 5
    names = el.keys()
    if names:  # name="value" and its space: 4 characters beside the two strings
        size += sum(map(len, names)) + sum(map(len, el.values())) + 4 * len(names)
    text = el.text
    if text:
        size += len(text)
    for child in el:
        tail = child.tail
        if tail:
            size += len(tail)
        tag = child.tag
        if not isinstance(tag, str) or (tag.lower() in SKIPPED_TAGS and child not in shown):
            size += len(lxml.etree.tostring(child, encoding="unicode", with_tail=False))
    return size


def _with_pre(
    k: int, text: str, line: int, glued: bool, pre: dict[int, tuple[int, str]]
) -> tuple[int, str, int, bool, int]:
    """Piece `k` as `join_pieces` takes it, as written where it lies in a ``<pre>``."""
    found = pre.get(k)
    if found is None:
        return k, text, line, glued, -1
    return k, found[1], line, glued, found[0]


# A page with one of each case the walk handles: head, titles, metas, links, skipped and shown
# elements, a <br>, blocks, blank and glued runs, comments, non-ASCII whitespace.
_CHECK_PAGE = (
    "<html><head><title> </title><title>A  title</title><meta name=d content=' x '>"
    "<META NAME=D content=y><style>s</style></head><body> lead <B>glued</B>run<br>after"
    "<!--c-->tail<script>x</script>kept<a href=' /u '>link</a><a>bare</a><P>\u00a0p\u2003q "
    "<noscript>no</noscript>r<div><h2>x</h2>y <i>z</i></div></P>\u3000end</body></html>"
)
_DOM_FIELDS = (
    "tag", "parent", "depth", "end", "children", "has_attributes", "path_ids",
    "piece_start", "piece_end", "piece_owner", "piece_block", "piece_text", "piece_line",
    "piece_glued", "piece_in_link", "href", "title", "meta",
)  # fmt: skip


def compiled_walk_agrees(page: str = _CHECK_PAGE) -> bool:
    """Whether the compiled walk gives `page` the Dom the Python walk gives it (False where it
    was not built). Checked once at import: the compiled walk reads lxml's and libxml2's
    structures as it declares them, and any disagreement keeps the Python walk."""
    global _compiled_walk
    compiled = _compiled_walk
    if compiled is None:
        return False
    try:
        fast = Dom(page_tree(page))
        _compiled_walk = None
        slow = Dom(page_tree(page))
    except Exception:  # a broken extension: never the page's fault
        return False
    finally:
        _compiled_walk = compiled
    same = [e.tag for e in fast.elements] == [e.tag for e in slow.elements]
    return same and all(getattr(fast, f) == getattr(slow, f) for f in _DOM_FIELDS)


def _plain_name(name: str) -> bool:
    """A name the compiled readers match as lxml does: not empty, in no namespace, no
    wildcard."""
    return bool(name) and not any(c in name for c in "{}*")


def elements_named(root: lxml.etree._Element, tag: str) -> list[lxml.etree._Element]:
    """`list(root.iter(tag))` for a tag in no namespace (all of an HTML parser's), found in C
    where the compiled walk runs: elements outside the Dom's nodes, as <script>, included.
    Other tags ("{namespace}name", wildcards) are lxml's to read."""
    if _compiled_named is not None and _plain_name(tag):
        return _compiled_named(root, tag)
    return list(root.iter(tag))


#: Whether `Dom` walks pages in compiled code (else in Python, about twice as slow).
COMPILED_WALK = compiled_walk_agrees()
if not COMPILED_WALK:  # the other C readers read the same structs: none of them either
    _compiled_walk = _compiled_named = _compiled_with_attribute = None
    _compiled_attribute_values = None
