"""Saved pages' site pass as jobs for the site pass's workers (`newscrawl.site.site_pool`).

`newscrawl extract` runs its work in the same pool of worker processes as the crawl's site pass:
a whole site's records (`SavedSiteJob`: `site_records`, through the site pass or page by
page), or, for one large site split over the workers (`newscrawl.site.site_split`), the node
hashes of a part of its pages (`SavedHashPart`) and what the slot decisions read of a part
(`SavedPassPart`). What every job shares (`SavedSettings`: the extractor and what the records
hold) is built once per worker (`SavedPasser`). Jobs and results are plain, picklable data.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from newscrawl.extractors import EXTRACTORS, build_extractor
from newscrawl.extractors.learned import MODEL_ENV
from newscrawl.extractors.markdown import with_markdown
from newscrawl.html.dom import Dom
from newscrawl.site.page_choice import PageChoice, SiteSlots, page_choice
from newscrawl.site.saved_pages import PLAIN, Item, RecordFields, site_records
from newscrawl.site.site_context import SiteContext, extract_in_site
from newscrawl.site.site_split import part_hashes, part_pages
from newscrawl.template.sitelevel import RawPage

__all__ = [
    "SAVED_JOBS",
    "SavedHashPart",
    "SavedJob",
    "SavedPassPart",
    "SavedPasser",
    "SavedResult",
    "SavedSettings",
    "SavedSiteJob",
]


@dataclass(frozen=True, slots=True)
class SavedSettings:
    """What every job of one `newscrawl extract` run shares: the extractor (`build_extractor`
    of `extractor`, `model_path` and `site_method`) and what the records hold (`fields`).
    `target`: where the run's registry finds the extractor ("module:class", `EXTRACTORS`), so
    a worker builds the same one whatever its own registry holds (None: not registered).
    `learned_model`: the learned extractor's model file this process was given
    (`use_extractor_model`), which a worker started before it was given uses too."""

    extractor: str
    model_path: str | None = None
    site_method: str = "sitelevel"
    fields: RecordFields = PLAIN
    log_level: int = logging.WARNING
    target: str | None = None
    learned_model: str | None = None

    @classmethod
    def of(
        cls,
        extractor: str,
        model_path: str | None,
        site_method: str,
        fields: RecordFields,
        log_level: int,
    ) -> SavedSettings:
        """The settings of a run, `target` from this process's registry and `learned_model`
        from its environment."""
        target = EXTRACTORS.get(extractor)
        learned = os.environ.get(MODEL_ENV) or None
        return cls(extractor, model_path, site_method, fields, log_level, target, learned)


@dataclass(frozen=True, slots=True)
class SavedSiteJob:
    """The records of one site's pages (indexes and items, in input order): through the site
    pass when `with_pass` and the pages have a site, else page by page."""

    pages: tuple[tuple[int, Item], ...]
    with_pass: bool = False


@dataclass(frozen=True, slots=True)
class SavedHashPart:
    """The node hashes of a part of one site's pages, for the site's template."""

    site: str
    raws: tuple[RawPage, ...]


@dataclass(frozen=True, slots=True)
class SavedPassPart:
    """What the slot decisions read of each page of a part of one site's pages (in SiteLevel's
    order), each extracted with the site's template (`context`)."""

    site: str
    raws: tuple[RawPage, ...]
    context: SiteContext | None = None


SavedJob = SavedSiteJob | SavedHashPart | SavedPassPart
SAVED_JOBS = (SavedSiteJob, SavedHashPart, SavedPassPart)


@dataclass(slots=True)
class SavedResult:
    """A saved-page job's result: a site's records (`SavedSiteJob`), a part's node hashes
    (`SavedHashPart`) or its pages' choices (`SavedPassPart`; None for a page that does not
    parse), and the log records the worker emitted meanwhile (logger, level, message)."""

    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    hashes: list[np.ndarray | None] = field(default_factory=list)
    choices: list[PageChoice | None] = field(default_factory=list)
    logs: list[tuple[str, int, str]] = field(default_factory=list)


class SavedPasser:
    """Runs saved-page jobs with one extractor (built once per worker process)."""

    def __init__(self, settings: SavedSettings) -> None:
        self.settings = settings
        if settings.target is not None:
            EXTRACTORS[settings.extractor] = settings.target
        if settings.learned_model:
            os.environ[MODEL_ENV] = settings.learned_model
        else:
            os.environ.pop(MODEL_ENV, None)
        self.extractor = build_extractor(
            settings.extractor, settings.model_path, settings.site_method
        )

    def run(self, job: SavedJob) -> SavedResult:
        """The job's result (its `logs` are the caller's to fill)."""
        if isinstance(job, SavedSiteJob):
            return SavedResult(records=self._site(job))
        if isinstance(job, SavedHashPart):
            return SavedResult(hashes=part_hashes(job.raws, job.site))
        return SavedResult(choices=self._pass_part(job))

    def _site(self, job: SavedSiteJob) -> list[tuple[int, dict[str, Any]]]:
        settings = self.settings
        pages = list(job.pages)
        return site_records(
            self.extractor, pages, job.with_pass, settings.site_method, settings.fields
        )

    def _pass_part(self, job: SavedPassPart) -> list[PageChoice | None]:
        slots = SiteSlots()  # its ids are digests: every part gives a slot the same one
        markdown = self.settings.fields.markdown

        def choice(index: int, raw: RawPage, dom: Dom) -> PageChoice:
            found = extract_in_site(self.extractor, dom, job.context)
            return page_choice(dom, with_markdown(dom, found, markdown), slots, markdown)

        return part_pages(job.raws, job.site, choice)
