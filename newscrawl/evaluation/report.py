"""Present evaluation results: a plain-text table for people, a JSON report for programs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from newscrawl.evaluation.evaluator import DatasetResult
from newscrawl.evaluation.snippets import SnippetCounts, has_snippets, total_counts
from newscrawl.gold.metric import PageScore, Scores, aggregate

__all__ = [
    "Row",
    "build_report",
    "error_lines",
    "format_groups",
    "format_snippets",
    "format_table",
    "group_rows",
    "rows",
]

PARSE_ONLY = "(parse only)"
ALL = "all"


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: an extractor on a dataset (or parsing alone, scores None)."""

    dataset: str
    extractor: str
    pages: int
    errors: int
    shingle: Scores | None
    token: Scores | None
    pages_per_second: float
    word: float | None = None  # WCXB's word-bag F1, the mean of per-page F1s


def _dataset_rows(result: DatasetResult) -> list[Row]:
    out = [
        Row(
            result.name,
            name,
            result.pages,
            len(scored.errors) + len(result.parse_errors),
            scored.shingle_scores,
            scored.token_scores,
            result.pages_per_second(name),
            scored.word_f1,
        )
        for name, scored in result.extractors.items()
    ]
    out.append(
        Row(
            result.name,
            PARSE_ONLY,
            result.pages,
            len(result.parse_errors),
            None,
            None,
            result.pages_per_second(),
        )
    )
    return out


def _pooled_rows(results: Sequence[DatasetResult]) -> list[Row]:
    """Every page of every dataset in one mean (each page weighs the same)."""
    pages = sum(r.pages for r in results)
    parse_seconds = sum(r.parse_seconds for r in results)
    parse_errors = sum(len(r.parse_errors) for r in results)
    out = []
    for name in results[0].extractors:
        scored = [r.extractors[name] for r in results if name in r.extractors]
        shingle: list[PageScore] = [s for e in scored for s in e.shingle]
        token: list[PageScore] = [s for e in scored for s in e.token]
        words = [w for e in scored for w in e.word]
        seconds = parse_seconds + sum(e.seconds for e in scored)
        errors = parse_errors + sum(len(e.errors) for e in scored)
        out.append(
            Row(
                ALL,
                name,
                pages,
                errors,
                aggregate(shingle),
                aggregate(token),
                pages / seconds if seconds else 0.0,
                sum(words) / len(words) if words else 0.0,
            )
        )
    out.append(
        Row(
            ALL,
            PARSE_ONLY,
            pages,
            parse_errors,
            None,
            None,
            pages / parse_seconds if parse_seconds else 0.0,
        )
    )
    return out


def rows(results: Sequence[DatasetResult]) -> list[Row]:
    """Table rows: per dataset, then pooled over all datasets when there are several."""
    out = [row for result in results for row in _dataset_rows(result)]
    if len(results) > 1:
        out.extend(_pooled_rows(results))
    return out


_HEADER = (
    "dataset", "extractor", "pages", "errors", "P", "R", "F1", "token F1", "word F1", "pages/s",
)  # fmt: skip


def _cells(row: Row) -> tuple[str, ...]:
    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    shingle, token = row.shingle, row.token
    return (
        row.dataset,
        row.extractor,
        str(row.pages),
        str(row.errors),
        num(None if shingle is None else shingle.precision),
        num(None if shingle is None else shingle.recall),
        num(None if shingle is None else shingle.f1),
        num(None if token is None else token.f1),
        num(row.word),
        f"{row.pages_per_second:.1f}",
    )


def format_table(results: Sequence[DatasetResult]) -> str:
    """Aligned text table; P/R/F1 are shingle scores, pages/s include parsing."""
    return _aligned(_HEADER, [_cells(row) for row in rows(results)])


def _aligned(header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell: the first two to the left, the rest to the right."""
    table = [tuple(header), *(tuple(line) for line in lines)]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    text = []
    for line in table:
        left = [cell.ljust(w) for cell, w in zip(line[:2], widths[:2], strict=True)]
        right = [cell.rjust(w) for cell, w in zip(line[2:], widths[2:], strict=True)]
        text.append("  ".join(left + right).rstrip())
    text.insert(1, "-" * len(text[0]))
    return "\n".join(text)


@dataclass(frozen=True, slots=True)
class GroupRow:
    """An extractor on the pages of every dataset that share a meta value, pooled."""

    group: str
    extractor: str
    pages: int
    shingle: Scores
    snippets: SnippetCounts
    word: float = 0.0  # WCXB's word-bag F1, the mean of per-page F1s


def group_rows(results: Sequence[DatasetResult]) -> list[GroupRow]:
    """Per meta value (`evaluate_dataset(group_by=...)`), in order of first appearance, and per
    extractor: its pages of every dataset pooled (each page weighs the same)."""
    values = list(dict.fromkeys(g for r in results for g in r.groups))
    out = []
    for value in values:
        for name in results[0].extractors:
            shingle: list[PageScore] = []
            words: list[float] = []
            checks: list[SnippetCounts] = []
            for result in results:
                scored = result.extractors[name]
                chosen = [i for i, g in enumerate(result.groups) if g == value]
                shingle += [scored.shingle[i] for i in chosen]
                words += [scored.word[i] for i in chosen]
                checks += [scored.snippets[i] for i in chosen]
            pooled = aggregate(shingle)
            word = sum(words) / len(words) if words else 0.0
            out.append(GroupRow(value, name, len(shingle), pooled, total_counts(checks), word))
    return out


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def format_groups(results: Sequence[DatasetResult], field: str) -> str:
    """The table by meta value: shingle P/R/F1 and the snippet checks of each group."""
    header = (
        field, "extractor", "pages", "P", "R", "F1", "word F1", "snippets kept",
        "unwanted left out",
    )  # fmt: skip
    lines = [
        (
            row.group,
            row.extractor,
            str(row.pages),
            f"{row.shingle.precision:.3f}",
            f"{row.shingle.recall:.3f}",
            f"{row.shingle.f1:.3f}",
            f"{row.word:.3f}",
            _share(row.snippets.kept_share),
            _share(row.snippets.left_out_share),
        )
        for row in group_rows(results)
    ]
    return _aligned(header, lines)


def format_snippets(results: Sequence[DatasetResult]) -> str | None:
    """Per dataset with snippets and extractor: the share of must-have snippets the output kept
    and of must-not snippets it left out (None when no page had snippets)."""
    header = ("dataset", "extractor", "pages", "snippets kept", "unwanted left out")
    lines = []
    for result in results:
        for name, scored in result.extractors.items():
            counted = [c for c in scored.snippets if c.wanted or c.unwanted]
            if not counted:
                continue
            total = total_counts(counted)
            lines.append(
                (
                    result.name,
                    name,
                    str(len(counted)),
                    _share(total.kept_share),
                    _share(total.left_out_share),
                )
            )
    return _aligned(header, lines) if lines else None


def error_lines(results: Sequence[DatasetResult]) -> list[str]:
    """Warnings people must not miss: pages that failed to parse or made an extractor raise."""
    lines = []
    for result in results:
        if result.skipped:
            lines.append(f"{result.name}: {result.skipped} pages without gold were skipped")
        if result.gold_only:
            lines.append(
                f"{result.name}: {len(result.gold_only)} gold files have no page in html/ "
                f"(first: {result.gold_only[0]})"
            )
        if result.bad_meta_lines:
            lines.append(
                f"{result.name}: {result.bad_meta_lines} meta.jsonl lines are not JSON objects "
                "with an id, or repeat an earlier line's id: ignored"
            )
        if result.parse_errors:
            page, error = next(iter(result.parse_errors.items()))
            lines.append(
                f"{result.name}: {len(result.parse_errors)} pages could not be parsed, scored as "
                f"empty output (first: {page}: {error})"
            )
        for name, scored in result.extractors.items():
            if scored.errors:
                page, error = next(iter(scored.errors.items()))
                lines.append(
                    f"{result.name}: extractor {name} RAISED on {len(scored.errors)} pages, scored "
                    f"as empty output (first: {page}: {error})"
                )
    return lines


def _scores(scores: Scores) -> dict[str, float]:
    return {"precision": scores.precision, "recall": scores.recall, "f1": scores.f1}


def _page_scores(result: DatasetResult, name: str) -> list[dict[str, Any]]:
    scored = result.extractors[name]
    return [
        {
            "id": page,
            "precision": shingle.precision,
            "recall": shingle.recall,
            "tp_fp_fn": list(shingle.normalised),
            "token_precision": token.precision,
            "token_recall": token.recall,
            "word_f1": word,
            **({"error": scored.errors[page]} if page in scored.errors else {}),
        }
        for page, shingle, token, word in zip(
            result.page_ids, scored.shingle, scored.token, scored.word, strict=True
        )
    ]


def _row_json(row: Row) -> dict[str, Any]:
    return {
        "pages": row.pages,
        "errors": row.errors,
        "pages_per_second": row.pages_per_second,
        **({"shingle": _scores(row.shingle)} if row.shingle else {}),
        **({"token": _scores(row.token)} if row.token else {}),
        **({"word_f1": row.word} if row.word is not None else {}),
    }


def build_report(
    results: Sequence[DatasetResult], per_page: bool = False, group_by: str | None = None
) -> dict[str, Any]:
    """The table's figures as JSON-ready data (plus per-page scores when asked, and the
    figures by meta value when the results were grouped by field `group_by`)."""
    datasets = []
    for result in results:
        extractors = {}
        for row in _dataset_rows(result):
            if row.extractor == PARSE_ONLY:
                continue
            entry = _row_json(row)
            entry["extract_seconds"] = result.extractors[row.extractor].seconds
            entry["errors_by_page"] = result.extractors[row.extractor].errors
            checks = result.extractors[row.extractor].snippets
            if has_snippets(checks):
                entry["snippets"] = asdict(total_counts(checks))
            if per_page:
                entry["per_page"] = _page_scores(result, row.extractor)
            extractors[row.extractor] = entry
        datasets.append(
            {
                "dataset": result.name,
                "path": result.path,
                "pages": result.pages,
                "skipped_without_gold": result.skipped,
                "gold_without_page": result.gold_only,
                "bad_meta_lines": result.bad_meta_lines,
                "parse_seconds": result.parse_seconds,
                "parse_pages_per_second": result.pages_per_second(),
                "parse_errors": result.parse_errors,
                "extractors": extractors,
            }
        )
    report: dict[str, Any] = {
        "metric": "shingles of 4 \\w+ tokens; P, R = means over pages; F1 of the means; "
        "word_f1: WCXB's mean over pages of the per-page F1 of lower-cased word bags",
        "speed": "pages/s in one process, parsing included",
        "datasets": datasets,
    }
    if len(results) > 1:
        report["all"] = {
            row.extractor: _row_json(row)
            for row in _pooled_rows(results)
            if row.extractor != PARSE_ONLY
        }
    if group_by is not None:
        groups: dict[str, dict[str, Any]] = {}
        for group in group_rows(results):
            groups.setdefault(group.group, {})[group.extractor] = {
                "pages": group.pages,
                "shingle": _scores(group.shingle),
                "word_f1": group.word,
                "snippets": asdict(group.snippets),
            }
        report["by"] = {"field": group_by, "groups": groups}
    return report
