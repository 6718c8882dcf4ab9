"""Site-aware offline extraction: `--site-from url|dir|meta|none` on `newscrawl extract` and
`newscrawl evaluate`, `Dom.site`, and output that is the same for every `-j`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import ClassVar

import pytest

from newscrawl import extractors
from newscrawl.cli import main
from newscrawl.evaluation.site_groups import (
    head_site,
    in_order,
    keeps_site_state,
    site_for,
    site_tasks,
)
from newscrawl.extractors import Extraction
from newscrawl.extractors.template_filter import page_site
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "default_template_model.json"
SITES = ("alpha.example", "beta.example", "gamma.example")


class SiteMemory:
    """A stateful throwaway extractor: the <p> texts, then which site the page belongs to
    (`page_site`) and how many pages of that site this extractor has seen so far. Its output
    depends on every earlier page of the site, like the template filter's (and so do its scores
    against gold: one more word per page already seen)."""

    name: ClassVar[str] = "sitemem"

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def extract(self, dom: Dom) -> Extraction:
        ids = tuple(i for i, tag in enumerate(dom.tag) if tag == "p")
        text = "\n".join(dom.text(i) for i in ids)
        if "explode" in text:
            raise RuntimeError("asked to explode")
        site = page_site(dom)
        if site:
            self.seen[site] += 1
            text += f"\n[site {site} page {self.seen[site]}]"
            text += "\nagain" * (self.seen[site] - 1)  # so scores against gold differ too
        else:
            text += "\n[no site]"
        return Extraction(title=dom.title, text=text, node_ids=ids, extractor=self.name)


@pytest.fixture(autouse=True)
def sitemem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extractors.EXTRACTORS, "sitemem", f"{__name__}:SiteMemory")


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def page(site: str, n: int, head: str = "") -> str:
    """A page of a made-up site: the same menu and footer on every page, its own article."""
    name = site.split(".")[0]
    menu = "".join(f'<li><a href="/s{i}">{name} section {i}</a></li>' for i in range(8))
    body = " ".join(
        f"Story {n} of {name} tells sentence {k} about the council and the river."
        for k in range(15)
    )
    return (
        f"<html><head><title>{name} story {n}</title>{head}</head><body>"
        f"<header><nav><ul>{menu}</ul></nav></header>"
        f"<main><article><h1>{name} headline {n}</h1><p>{body}</p></article></main>"
        f"<footer><div>Copyright {name} media group. All rights reserved.</div></footer>"
        "</body></html>"
    )


def canonical(site: str, n: int) -> str:
    return f'<link rel="canonical" href="https://www.{site}/news/{n}.html">'


@pytest.fixture
def flat(tmp_path: Path) -> Path:
    """One folder, pages of three sites interleaved (p1 alpha, p2 beta, p3 gamma, p4 alpha, ...),
    each naming its URL in a canonical link, plus a broken page and a page without a URL."""
    folder = tmp_path / "flat"
    for n in range(18):
        site = SITES[n % 3]
        write(folder / f"p{n + 1}.html", page(site, n, canonical(site, n)))
    write(folder / "p19.html", b"\x89PNG\r\n\x1a\n\x00\x00 binary")
    write(folder / "p20.html", page("nowhere.example", 20))
    return folder


@pytest.fixture
def by_dir(tmp_path: Path) -> Path:
    """Three sites' pages saved without URLs, one folder per site."""
    root = tmp_path / "saved"
    for site in SITES:
        for n in range(7):
            write(root / site / f"{n}.html", page(site, n))
    return root


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def markers(out: str) -> list[str]:
    return re.findall(r"\[(?:site .+? page \d+|no site)\]", out)


# -- Dom.site and page_site ----------------------------------------------------------------------


def test_dom_site_is_what_parse_html_is_told_and_page_site_prefers_it() -> None:
    html = page("alpha.example", 1, canonical("alpha.example", 1))
    dom = parse_html(html)
    assert dom.site is None
    assert page_site(dom) == "alpha.example"  # worked out from the canonical link
    assert parse_html(html, site="my-folder").site == "my-folder"
    assert page_site(parse_html(html, site="my-folder")) == "my-folder"
    assert page_site(parse_html(html, site="")) == ""  # told: no site
    assert page_site(parse_html(html, url="https://other.example/x", site="kept")) == "kept"
    # the re-parse of a page whose </title> swallowed the body keeps the site too
    mangled = "<html><head><title>T</title <body><p>text here</p></body></html>"
    assert parse_html(mangled, site="s").site == "s"


# -- finding a page's site -----------------------------------------------------------------------


def test_head_site_reads_og_url_then_canonical_and_stops_at_body() -> None:
    og = '<meta property="og:url" content="https://News.Example.org/a">'
    assert head_site(f"<html><head>{og}</head><body></body></html>".encode()) == "news.example.org"
    both = canonical("alpha.example", 1) + "<meta content='http://beta.example/x' name=og:url>"
    assert head_site(f"<html><head>{both}</head></html>".encode()) == "beta.example"
    assert head_site(canonical("alpha.example", 1).encode()) == "alpha.example"
    relative = '<link rel="canonical" href="/news/1.html">'
    assert head_site(relative.encode()) == ""
    in_body = f"<html><head></head><body>{canonical('alpha.example', 1)}</body></html>"
    assert head_site(in_body.encode()) == ""
    assert head_site(b"\x00\x01\x02 binary") == ""
    assert head_site(b"") == ""


def test_site_for_each_mode() -> None:
    meta = {"url": "https://www.alpha.example/a", "site": "Alpha Site"}
    head = canonical("beta.example", 1).encode()
    assert site_for("meta", meta=meta, folder="f", head=lambda: head) == "Alpha Site"
    assert site_for("meta", meta={"url": meta["url"]}, head=lambda: head) == "alpha.example"
    assert site_for("meta", meta={}, head=lambda: head) == "beta.example"  # falls back to url
    assert site_for("url", meta=meta, head=lambda: head) == "alpha.example"
    assert site_for("url", meta={}, head=lambda: head) == "beta.example"
    assert site_for("dir", meta=meta, folder="saved-site", head=lambda: head) == "saved-site"
    assert site_for("none", meta=meta, folder="f", head=lambda: head) == ""

    def unreadable() -> bytes:
        raise OSError("gone")

    assert site_for("url", head=unreadable) == ""
    with pytest.raises(ValueError, match="--site-from must be one of"):
        site_for("host")


def test_site_tasks_keep_a_site_whole_and_depend_on_the_input_only() -> None:
    sites = ["a", "b", "", "a", "c", "", "b", "a"]
    assert site_tasks(sites, 1) == [[0, 3, 7], [1, 6], [2], [4], [5]]
    assert site_tasks(sites, 4) == site_tasks(sites, 1)
    loose = site_tasks([""] * 100, 2)
    assert [i for task in loose for i in task] == list(range(100))
    assert max(len(task) for task in loose) <= 32
    assert list(in_order([(2, "c"), (0, "a"), (1, "b")], 3)) == ["a", "b", "c"]
    with pytest.raises(RuntimeError, match="never arrived"):
        list(in_order([(1, "b")], 2))


def test_only_extractors_that_say_so_are_free_of_site_state() -> None:
    class Stateless(SiteMemory):
        keeps_site_state: ClassVar[bool] = False

    assert keeps_site_state([SiteMemory()])  # not declared: assumed to keep state
    assert not keeps_site_state([Stateless()])
    assert keeps_site_state([Stateless(), SiteMemory()])


# -- newscrawl extract ---------------------------------------------------------------------------


def test_extract_url_mode_groups_by_canonical_host(
    flat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        capsys, "extract", "-e", "sitemem", "-f", "jsonl", "-j", "1", str(flat)
    )
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["path"] for r in records] == [str(flat / f"p{n}.html") for n in range(1, 21)]
    found = [markers(r["text"]) for r in records]
    # input order interleaves the sites; each site's pages are counted in input order
    assert found[:6] == [[f"[site {SITES[n % 3]} page {n // 3 + 1}]"] for n in range(6)]
    assert found[17] == ["[site gamma.example page 6]"]
    assert "error" in records[18] and "binary" in records[18]["error"]
    assert found[19] == ["[no site]"]
    assert err.splitlines() == [f"newscrawl extract: {flat / 'p19.html'}: {records[18]['error']}"]


def test_extract_dir_none_and_meta_modes(
    by_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "extract", "-e", "sitemem", "--site-from", "dir", str(by_dir))
    assert code == 0
    assert markers(out) == [f"[site {site} page {n}]" for site in SITES for n in range(1, 8)]
    code, out, _ = run_cli(capsys, "extract", "-e", "sitemem", "--site-from", "none", str(by_dir))
    assert code == 0
    assert markers(out) == ["[no site]"] * 21

    # a dataset's layout: NAME/html/ID.html with NAME/meta.jsonl (site, url); a page without a
    # meta site falls back to its meta url, then to its canonical link
    data = tmp_path / "dataset"
    write(data / "html" / "1.html", page("alpha.example", 1))
    write(data / "html" / "2.html", page("beta.example", 2))
    write(data / "html" / "3.html", page("gamma.example", 3, canonical("gamma.example", 3)))
    write(data / "html" / "4.html", page("delta.example", 4))
    write(
        data / "meta.jsonl",
        '{"id": "1", "site": "Site One", "url": "http://alpha.example/1"}\n'
        '{"id": "2", "url": "http://www.beta.example/2"}\n'
        "not json\n",
    )
    argv = ["extract", "-e", "sitemem", "-f", "jsonl", str(data / "html")]
    code, out, _ = run_cli(capsys, *argv, "--site-from", "meta")
    assert code == 0
    assert markers(out) == [
        "[site Site One page 1]",
        "[site beta.example page 1]",
        "[site gamma.example page 1]",
        "[no site]",
    ]
    # dir: a dataset's pages are grouped by the dataset's name, not by "html"
    other = tmp_path / "other"
    write(other / "html" / "1.html", page("alpha.example", 1))
    both = ["extract", "-e", "sitemem", "--site-from", "dir", str(data / "html"), str(other)]
    code, out, _ = run_cli(capsys, *both)
    assert code == 0
    assert markers(out) == [
        *(f"[site dataset page {n}]" for n in range(1, 5)),
        "[site other page 1]",
    ]
    code, out, _ = run_cli(capsys, *argv)  # default: url, which reads the meta url too
    assert markers(out)[:3] == [
        "[site alpha.example page 1]",
        "[site beta.example page 1]",
        "[site gamma.example page 1]",
    ]


def test_extract_meta_without_meta_jsonl_is_a_clear_usage_error(flat: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "newscrawl.cli", "extract", "--site-from", "meta", str(flat)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("newscrawl extract: --site-from meta: no meta.jsonl")
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_extract_bad_site_from_value_is_a_usage_error(flat: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["extract", "--site-from", "host", str(flat)])
    assert exit_info.value.code == 2


@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_extract_output_is_identical_for_every_jobs(
    flat: Path, by_dir: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stateful extractor sees every site whole whatever -j is: same bytes out and err."""
    outputs = set()
    for jobs in ("1", "2", "3"):
        for site_from, folder in (("url", flat), ("dir", by_dir)):
            run = run_cli(
                capsys,
                "extract",
                "-e",
                "sitemem",
                "-f",
                fmt,
                "-j",
                jobs,
                "--site-from",
                site_from,
                str(folder),
            )
            outputs.add((site_from, run))
    assert len(outputs) == 2  # one result per mode, the same for -j 1, 2 and 3
    for _, (code, out, _) in outputs:
        assert code == 0
        assert "[site " in out


def _real_extract(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "newscrawl.cli",
            "extract",
            "-f",
            "jsonl",
            "--model",
            str(MODEL),
            "-e",
            "nce",
            *options,
            str(folder),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_real_cli_template_filter_learns_sites_and_is_the_same_for_every_jobs(
    flat: Path, by_dir: Path
) -> None:
    """The installed command with the shipped template model: pages of one site saved without
    URLs get the site's template cut out (SiteLevel, from the 5th page on) with --site-from dir,
    and -j 1 and -j 2 give the same bytes."""
    single = _real_extract(by_dir, "--site-from", "dir", "-j", "1")
    pooled = _real_extract(by_dir, "--site-from", "dir", "-j", "2")
    assert single.returncode == 0, single.stderr
    assert (pooled.returncode, pooled.stdout, pooled.stderr) == (0, single.stdout, single.stderr)
    records = [json.loads(line) for line in single.stdout.splitlines()]
    assert len(records) == 21
    for index, site in enumerate(SITES):
        name = site.split(".")[0]
        pages = records[index * 7 : index * 7 + 7]
        assert all(f"Story {n} of {name}" in r["text"] for n, r in enumerate(pages))
        # once the site has 5 pages its footer is known as template and cut out
        assert all("Copyright" not in r["text"] for r in pages[5:])
    alone = _real_extract(by_dir, "--site-from", "none", "-j", "1")
    texts = [json.loads(line)["text"] for line in alone.stdout.splitlines()]
    # without sites nothing is learnt: a site's pages all come out alike
    first = re.sub(r"\d+", "#", texts[0])
    assert all(re.sub(r"\d+", "#", text) == first for text in texts[:7])

    # url mode on a folder that interleaves the sites, with a broken page
    single = _real_extract(flat, "-j", "1")
    pooled = _real_extract(flat, "-j", "2")
    assert single.returncode == 0, single.stderr
    assert (pooled.returncode, pooled.stdout, pooled.stderr) == (0, single.stdout, single.stderr)
    assert len(single.stderr.splitlines()) == 1 and "Traceback" not in single.stderr


def test_one_large_site_split_over_jobs_gives_the_records_of_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder holding one site of SPLIT_PAGES pages or more (and a page that does not parse)
    has its site pass split over -j 2 processes: the same records, errors included, as -j 1."""
    from newscrawl.commands import extract as command
    from newscrawl.lab.synthetic_docsite import docs_page

    site = tmp_path / "docs.test"
    site.mkdir()
    for n in range(command.SPLIT_PAGES + 2):
        (site / f"page-{n:03d}.html").write_bytes(docs_page(n))
    (site / "page-broken.html").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    items = command.page_items([str(path) for path in sorted(site.iterdir())], "dir")
    extractor = command.build_extractor(extractors.DEFAULT_EXTRACTOR, None)
    splits = []
    split = command.split_site_records
    monkeypatch.setattr(
        command, "split_site_records", lambda *args: splits.append(1) or split(*args)
    )

    def records(jobs: int) -> list[dict]:
        found = command.extract_all(
            items, extractor, extractors.DEFAULT_EXTRACTOR, None, jobs, site_pass=True
        )
        return list(found)

    whole = records(1)
    assert not splits
    assert records(2) == whole and splits == [1]
    assert len(whole) == command.SPLIT_PAGES + 3
    assert "error" in whole[-1] and all(record["text"] for record in whole[:-1])


# -- newscrawl evaluate --------------------------------------------------------------------------


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """Pages of three sites, interleaved by id, with gold text and meta.jsonl sites."""
    root = tmp_path / "threesites"
    meta = []
    for n in range(1, 13):
        site = SITES[n % 3]
        write(root / "html" / f"{n}.html", page(site, n))
        name = site.split(".")[0]
        gold = f"Story {n} of {name} tells sentence 0 about the council and the river."
        write(root / "gold" / f"{n}.txt", gold)
        meta.append(json.dumps({"id": str(n), "site": site.upper(), "url": f"http://{site}/{n}"}))
    write(root / "html" / "13.html", b"\x00\x01 binary")
    write(root / "gold" / "13.txt", "gold of a broken page")
    write(root / "meta.jsonl", "\n".join(meta) + "\n")
    return root


def _without_timings(value: object) -> object:
    if isinstance(value, dict):
        return {
            k: _without_timings(v)
            for k, v in value.items()
            if "seconds" not in k and "per_second" not in k
        }
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _table_without_speed(out: str) -> list[list[str]]:
    return [line.split()[:-1] if line[:1] != "-" else [] for line in out.splitlines()]


def test_evaluate_is_the_same_for_every_jobs(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = []
    for jobs in ("1", "2", "3"):
        report = tmp_path / f"report{jobs}.json"
        argv = ["evaluate", str(dataset), "-e", "sitemem", "--per-page", "--json", str(report)]
        code, out, err = run_cli(capsys, *argv, "-j", jobs, "--no-progress")
        assert code == 0, err
        results.append(
            (_table_without_speed(out), _without_timings(json.loads(report.read_text())))
        )
    assert results[0] == results[1] == results[2]
    table, report = results[0]
    assert "WARNING: threesites: 1 pages could not be parsed" in " ".join(map(" ".join, table))
    (data,) = report["datasets"]
    assert data["pages"] == 13 and list(data["parse_errors"]) == ["13"]


def test_evaluate_site_from_reaches_the_extractor(
    dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which site each page got, per mode, as the extractor saw it."""
    from newscrawl.evaluation import evaluator as runner

    seen: list[str] = []
    real_parse = runner._parse

    def spy(html: bytes, url: str | None, site: str | None = None):  # type: ignore[no-untyped-def]
        seen.append(site or "")
        return real_parse(html, url, site)

    monkeypatch.setattr(runner, "_parse", spy)
    by_mode = {}
    for mode in (None, "meta", "url", "dir", "none"):
        seen.clear()
        argv = ["evaluate", str(dataset), "-e", "sitemem", "--no-progress"]
        assert main(argv + (["--site-from", mode] if mode else [])) == 0
        by_mode[mode] = list(seen)
    # pages are processed site by site (each site in id order), in order of first appearance
    assert by_mode["meta"] == ["BETA.EXAMPLE"] * 4 + ["GAMMA.EXAMPLE"] * 4 + [
        "ALPHA.EXAMPLE"
    ] * 4 + [""]
    assert by_mode[None] == by_mode["meta"]  # the default when there is a meta.jsonl
    assert by_mode["url"] == ["beta.example"] * 4 + ["gamma.example"] * 4 + [
        "alpha.example"
    ] * 4 + [""]
    assert by_mode["dir"] == ["threesites"] * 13  # a dataset's pages all sit in html/
    assert by_mode["none"] == [""] * 13

    (dataset / "meta.jsonl").unlink()
    seen.clear()
    assert main(["evaluate", str(dataset), "-e", "sitemem", "--no-progress"]) == 0
    assert seen == [""] * 13  # default falls back to url; these pages name none


def test_evaluate_meta_without_meta_jsonl_is_a_clear_usage_error(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "nometa"
    write(other / "html" / "1.html", page("alpha.example", 1))
    write(other / "gold" / "1.txt", "Story 1")
    code, out, err = run_cli(
        capsys, "evaluate", str(dataset), str(other), "-e", "sitemem", "--site-from", "meta"
    )
    assert code == 2
    assert out == ""
    assert err == (
        f"newscrawl evaluate: --site-from meta: {other} has no meta.jsonl; "
        "use --site-from url, dir or none\n"
    )
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", str(dataset), "--site-from", "folder"])
    assert exit_info.value.code == 2


def test_site_from_dir_tells_apart_folders_of_one_name(tmp_path: Path) -> None:
    """site1/2024/ and site2/2024/ are two sites; a dataset's html/ folder is its dataset's."""
    from newscrawl.commands import extract as command

    paths = []
    for folder in ("site1/2024", "site2/2024", "set/html", "site1"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        page = tmp_path / folder / "page.html"
        page.write_bytes(b"<html><body><p>A page.</p></body></html>")
        paths.append(str(page))
    sites = [item.site for item in command.page_items(paths, "dir")]
    assert sites == ["site1/2024", "site2/2024", "set", "site1"]
    assert [item.site for item in command.page_items(paths[:1], "dir")] == ["2024"]
