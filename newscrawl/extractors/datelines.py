"""The date a page shows under (or just above) its headline: "Saturday, December 29, 2007",
"13. Juni 2023", "04-01-2012, 08:02", "2012年01月11日" - for pages whose markup names none.

Only short lines near the first <h1> are read (a dateline, not a paragraph that mentions a
date), in English, German, French, Spanish, Italian, Portuguese, Dutch, Polish and Russian
month names, numeric day-month-year orders and the CJK year-month-day form.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from newscrawl.html.dom import Dom

__all__ = ["date_in_line", "headline_lines", "shown_date"]

LINES_AFTER = 15  # lines after the <h1> read for a dateline
LINES_BEFORE = 12  # lines before it (a date above the headline)
_LONGEST_DATELINE = 100

_MONTH_NAMES = {
    1: "january jan januar janv janvier enero gennaio janeiro januari stycznia января янв",
    2: "february feb februar févr fevrier février febrero febbraio fevereiro februari lutego "
    "февраля фев",
    3: "march mar märz maerz mars marzo março maart marca марта мар",
    4: "april apr avril abril aprile kwietnia апреля апр",
    5: "may mai mayo maggio maio mei maja мая",
    6: "june jun juni juin junio giugno junho czerwca июня июн",
    7: "july jul juli juillet julio luglio julho lipca июля июл",
    8: "august aug août aout agosto augustus sierpnia августа авг",
    9: "september sep sept septembre septiembre settembre setembro września сентября сен",
    10: "october oct oktober octobre octubre ottobre outubro października октября окт",
    11: "november nov novembre noviembre novembro listopada ноября ноя",
    12: "december dec dezember décembre decembre diciembre dicembre dezembro grudnia декабря дек",
}
_MONTHS = {name: month for month, names in _MONTH_NAMES.items() for name in names.split()}
_MONTH = "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True))
_YEAR = r"((?:19|20)\d{2})"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|er|\.)?"
# Each form with the order of its groups: y(ear), m(onth number), n(ame of month), d(ay).
_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"{_YEAR}\s*年\s*(\d{{1,2}})\s*月\s*(\d{{1,2}})\s*日"), "ymd"),
    (re.compile(rf"(?<!\d){_YEAR}[-/.](\d{{1,2}})[-/.](\d{{1,2}})(?!\d)"), "ymd"),
    (re.compile(rf"(?<!\d)(\d{{1,2}})\.\s?(\d{{1,2}})\.\s?{_YEAR}(?!\d)"), "dmy"),
    (re.compile(rf"(?<!\d)(\d{{1,2}})-(\d{{1,2}})-{_YEAR}(?!\d)"), "dmy"),
    (re.compile(r"(?<!\d)(\d{1,2})/(\d{1,2})/((?:19|20)?\d{2})(?!\d)"), "slash"),
    (
        re.compile(
            rf"(?<![\w]){_DAY}\s*(?:de\s+)?({_MONTH})\.?,?\s+(?:de\s+)?{_YEAR}(?!\d)",
            re.IGNORECASE,
        ),
        "dny",
    ),
    (
        re.compile(rf"(?<![\w])({_MONTH})\.?\s+{_DAY},?\s+{_YEAR}(?!\d)", re.IGNORECASE),
        "ndy",
    ),
)


def headline_lines(dom: Dom, after: int = LINES_AFTER, before: int = LINES_BEFORE) -> Iterator[str]:
    """The text lines (the pieces of one block, joined) from the page's first <h1> on, then
    those just before it, nearest first; none without an <h1> (the first lines of a page
    without one are its masthead, whose date is today's)."""
    h1 = dom.nodes_of("h1")
    if not h1:
        return
    start = dom.piece_start[h1[0]]
    yield from _lines(dom, start, 1, after + 1)
    yield from _lines(dom, start - 1, -1, before)


def _lines(dom: Dom, start: int, step: int, limit: int) -> Iterator[str]:
    texts, blocks = dom.piece_text, dom.piece_block
    block, count = -1, 0
    line: list[str] = []
    k = start
    while 0 <= k < len(texts):
        if blocks[k] != block:
            if line:
                yield " ".join(" ".join(line[::step]).split())
                count += 1
                if count >= limit:
                    return
            block, line = blocks[k], []
        line.append(texts[k])
        k += step
    if line:
        yield " ".join(" ".join(line[::step]).split())


def date_in_line(line: str, day_first: bool = True) -> datetime | None:
    """The first date written in `line` (None when none, or when it is not a real day);
    `day_first` reads an ambiguous "03/04/2024" as 3 April, else as March 4."""
    found: list[tuple[int, datetime]] = []
    for pattern, order in _FORMS:
        if match := pattern.search(line):
            when = _as_date(match.groups(), order, day_first)
            if when is not None:
                found.append((match.start(), when))
    return min(found, key=lambda hit: hit[0])[1] if found else None


def _as_date(groups: tuple[str, ...], order: str, day_first: bool) -> datetime | None:
    try:
        if order == "ymd":
            year, month, day = int(groups[0]), int(groups[1]), int(groups[2])
        elif order == "dmy":
            day, month, year = int(groups[0]), int(groups[1]), int(groups[2])
        elif order == "slash":
            first, second, year = int(groups[0]), int(groups[1]), int(groups[2])
            year += 2000 if year < 100 else 0
            day_first = first > 12 or (day_first and second <= 12)
            day, month = (first, second) if day_first else (second, first)
        elif order == "dny":
            day, month, year = int(groups[0]), _MONTHS[groups[1].lower()], int(groups[2])
        else:
            month, day, year = _MONTHS[groups[0].lower()], int(groups[1]), int(groups[2])
        when = datetime(year, month, day, tzinfo=UTC)
    except (ValueError, KeyError):
        return None
    if not datetime(1990, 1, 1, tzinfo=UTC) <= when <= datetime.now(UTC) + timedelta(days=1):
        return None
    return when


def shown_date(dom: Dom, language: str | None = None) -> datetime | None:
    """The first date in a short line near the <h1> headline (`headline_lines`); a numeric date
    with the day and month both 12 or below is read month first only on English pages."""
    day_first = language not in (None, "en")
    for line in headline_lines(dom):
        if len(line) <= _LONGEST_DATELINE and (when := date_in_line(line, day_first)):
            return when
    return None
