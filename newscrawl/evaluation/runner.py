"""Score extractors on one dataset: parse each page once, time parsing and each extractor apart.

Speed is measured in this one process, as the crawl runs it: ``pages/s`` of an extractor is the
number of pages over (time to parse them all + time the extractor spent on them), so parsing is
included, and the parse time alone is reported beside it. A page that cannot be parsed, or on
which an extractor raises, does not stop the run: it is scored as empty output and counted, so a
report can show how often that happened (the extractors are meant never to raise).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from newscrawl.dom import Dom, PageError, parse_html
from newscrawl.evaluation.dataset import Dataset
from newscrawl.evaluation.metric import PageScore, Scores, aggregate, score_page, score_tokens
from newscrawl.extractors.base import Extractor

__all__ = ["DatasetResult", "ExtractorResult", "evaluate_dataset"]


@dataclass(slots=True)
class ExtractorResult:
    """Per-page scores and timing of one extractor on one dataset."""

    name: str
    shingle: list[PageScore] = field(default_factory=list)
    token: list[PageScore] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # page id -> "ExcType: message"
    seconds: float = 0.0  # time inside extract() only

    @property
    def shingle_scores(self) -> Scores:
        return aggregate(self.shingle)

    @property
    def token_scores(self) -> Scores:
        return aggregate(self.token)


@dataclass(slots=True)
class DatasetResult:
    """Everything measured on one dataset."""

    name: str
    path: str
    page_ids: list[str] = field(default_factory=list)
    skipped: int = 0  # pages without gold
    parse_errors: dict[str, str] = field(default_factory=dict)
    parse_seconds: float = 0.0
    extractors: dict[str, ExtractorResult] = field(default_factory=dict)

    @property
    def pages(self) -> int:
        return len(self.page_ids)

    def pages_per_second(self, extractor: str | None = None) -> float:
        """Pages/s of parsing alone (`extractor` None) or of parse + that extractor."""
        seconds = self.parse_seconds
        if extractor is not None:
            seconds += self.extractors[extractor].seconds
        return self.pages / seconds if seconds > 0 else 0.0


def _error_text(err: BaseException) -> str:
    message = " ".join(str(err).split())
    return f"{type(err).__name__}: {message}" if message else type(err).__name__


def _parse(html: bytes, url: str | None) -> tuple[Dom | None, str | None, float]:
    start = time.perf_counter()
    try:
        dom = parse_html(html, url=url)
    except PageError as err:
        return None, str(err), time.perf_counter() - start
    return dom, None, time.perf_counter() - start


def _run_extractor(extractor: Extractor, dom: Dom) -> tuple[str, str | None, float]:
    """Extracted text, error text (None when fine) and seconds spent."""
    start = time.perf_counter()
    try:
        text = extractor.extract(dom).text
    except Exception as err:  # an extractor bug must not end the evaluation
        return "", _error_text(err), time.perf_counter() - start
    return text, None, time.perf_counter() - start


def evaluate_dataset(
    dataset: Dataset, extractors: Mapping[str, Extractor], progress: bool | None = None
) -> DatasetResult:
    """Score every extractor on every scorable page of `dataset`.

    `progress`: True shows a tqdm bar on stderr, False hides it, None shows it on a terminal only.
    """
    from tqdm import tqdm

    result = DatasetResult(name=dataset.name, path=str(dataset.path), skipped=dataset.skipped)
    result.extractors = {name: ExtractorResult(name) for name in extractors}
    pages = tqdm(
        dataset,
        total=len(dataset),
        desc=dataset.name,
        unit="page",
        disable=_disable(progress),
        leave=False,
    )
    for page in pages:
        result.page_ids.append(page.id)
        url = page.meta.get("url")
        dom, parse_error, seconds = _parse(page.html, url if isinstance(url, str) else None)
        result.parse_seconds += seconds
        if parse_error is not None:
            result.parse_errors[page.id] = parse_error
        for name, extractor in extractors.items():
            if dom is None:
                text, error, seconds = "", None, 0.0
            else:
                text, error, seconds = _run_extractor(extractor, dom)
            scored = result.extractors[name]
            scored.seconds += seconds
            if error is not None:
                scored.errors[page.id] = error
            scored.shingle.append(score_page(page.gold, text))
            scored.token.append(score_tokens(page.gold, text))
    return result


def _disable(progress: bool | None) -> bool | None:
    # tqdm reads disable=None as "only when stderr is not a terminal".
    return None if progress is None else not progress
