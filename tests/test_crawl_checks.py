"""Crawl settings checked before anything is fetched: a typo stops the command with one line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from newscrawl.cli import main
from newscrawl.crawl.checks import check_crawl_id, check_settings, known_settings
from newscrawl.crawl.discovery.site_lists import SiteListError, read_sites
from newscrawl.gold.pagefiles import find_pages, not_found_reason


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"NEWSCRAWL_EXTRACTORS": ["learned", "cetd_tpc"]}, "unknown extractor 'cetd_tpc'"),
        ({"NEWSCRAWL_EXTRACTORS": "bogus"}, "unknown extractor 'bogus'"),
        ({"NEWSCRAWL_PRIMARY_EXTRACTOR": "nce"}, "'nce' is not among the extractors"),
        ({"NEWSCRAWL_ALLOW_PRIVATE": "nonsense"}, "--allow-private 'nonsense': not a network"),
        ({"LOG_LEVEL": "LOUD"}, "log level 'LOUD'"),
        ({"NEWSCRAWL_SITELEVEL": "maybe"}, "NEWSCRAWL_SITELEVEL='maybe': not true or false"),
        ({"MAX_PAGES_PER_SITE": "abc"}, "MAX_PAGES_PER_SITE='abc': not a number"),
        ({"MAX_PAGES_PER_SITE": -1}, "must be 0 or more"),
        ({"DOWNLOAD_DELAY": "soon"}, "DOWNLOAD_DELAY='soon': not a number"),
        ({"NEWSCRAWL_CRAWL_ID": "../up"}, "not a plain name"),
        # a negative site limit started no site: the crawl waited for ever
        ({"NEWSCRAWL_MAX_ACTIVE_SITES": "-3"}, "NEWSCRAWL_MAX_ACTIVE_SITES='-3': must be 0"),
        ({"NEWSCRAWL_MAX_PAGE_NODES": "-1"}, "must be 1 or more"),
        ({"NEWSCRAWL_SITE_METHOD": "bogus"}, "unknown site method 'bogus'"),
        ({"NEWSCRAWL_EXTRACTOR_CONFIG": "notjson"}, "CONFIG='notjson': not a JSON object"),
        ({"NEWSCRAWL_EXTRACTOR_MAX_NODES": "[1, 2]"}, "not a JSON object"),
        ({"NEWSCRAWL_EXTRACTOR_MAX_NODES": '{"learned": "x"}'}, "'learned' needs a number"),
        ({"NEWSCRAWL_EXTRACTORS": '["learned", "bogus"]'}, "unknown extractor 'bogus'"),
        ({"NEWSCRAWL_EXTRACTORS": '["learned",'}, "not a JSON list of names"),
        (
            {"NEWSCRAWL_EXTRACTOR_CONFIG": '{"learned": {"model": "/nonexistent/m.json"}}'},
            "learned model /nonexistent/m.json: no extractor model",
        ),
        ({"NEWSCRAWL_WARC_DIR": "/proc/no-such-folder"}, "cannot make the folder"),
        # the NEWSCRAWL_ prefix is ours: a name we do not read is a typo
        (
            {"NEWSCRAWL_SITELEVELL": "0"},
            r"unknown setting NEWSCRAWL_SITELEVELL \(did you mean "
            "NEWSCRAWL_SITELEVEL\\?\\)",
        ),
        ({"NEWSCRAWL_EXTRACTOR_MODEL": "m.json"}, "read from the environment, not from"),
        # the shared prefix alone makes no suggestion
        ({"NEWSCRAWL_FOO": "1"}, "unknown setting NEWSCRAWL_FOO: newscrawl reads"),
        ({"NEWSCRAWL_MAX_PAGE_NODE": "9"}, r"did you mean NEWSCRAWL_MAX_PAGE_NODES\?"),
        ({"NEWSCRAWL_NO_SUCH_THING": "1"}, "unknown setting NEWSCRAWL_NO_SUCH_THING: newscrawl"),
    ],
)
def test_bad_settings_are_named(values: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_settings(values)


def test_an_unknown_scrapy_name_is_only_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    check_settings({"DOWNLOAD_DELAYS": "1", "SOME_MIDDLEWARE_OPTION": "x"})
    warned = caplog.text
    assert (
        "DOWNLOAD_DELAYS is not one Scrapy or newscrawl reads (did you mean DOWNLOAD_DELAY?)"
        in warned
    )
    assert "SOME_MIDDLEWARE_OPTION is not one" in warned


def test_every_setting_the_code_reads_is_known() -> None:
    """A setting read in the code but missing from the known names would be refused."""
    root = Path(__file__).resolve().parent.parent
    read = set()
    for path in [
        *root.joinpath("newscrawl").rglob("*.py"),
        *root.joinpath("pipelines").rglob("*.py"),
    ]:
        read.update(re.findall(r"settings\.get\w*\(\s*\"([A-Z][A-Z0-9_]+)\"", path.read_text()))
    assert len(read) > 40
    assert read - known_settings() == set()


def test_good_settings_pass(tmp_path: Path) -> None:
    check_settings(
        {
            "NEWSCRAWL_EXTRACTORS": ["nce", "mss"],
            "NEWSCRAWL_PRIMARY_EXTRACTOR": "mss",
            "NEWSCRAWL_ALLOW_PRIVATE": "loopback,10.0.0.0/8",
            "LOG_LEVEL": "warning",
            "NEWSCRAWL_SITELEVEL": "False",
            "MAX_PAGES_PER_SITE": "0",
            "DOWNLOAD_TIMEOUT": "1.5",  # a whole-number default, read as a float
            "NEWSCRAWL_WARC_DIR": str(tmp_path),
        }
    )
    check_settings({"NEWSCRAWL_PRIMARY_EXTRACTOR": "cetd-tpc"})  # in the default list
    # the default list as docs/settings.md and settings.py write it
    check_settings({"NEWSCRAWL_EXTRACTORS": '["learned", "cetd-tpc"]'})
    check_settings(
        {"NEWSCRAWL_EXTRACTOR_MAX_NODES": '{"learned": 0}', "NEWSCRAWL_SITE_METHOD": "sst"}
    )
    check_settings({"NEWSCRAWL_WARC_DIR": str(tmp_path / "new" / "warc")})
    assert (tmp_path / "new" / "warc").is_dir()


def test_a_missing_model_named_in_the_environment_stops_the_crawl(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The crawl fell back to CETD-TPC with a warning in the log and reported success."""
    monkeypatch.setenv("NEWSCRAWL_EXTRACTOR_MODEL", "/nonexistent/m.json")
    with pytest.raises(ValueError, match=r"NEWSCRAWL_EXTRACTOR_MODEL /nonexistent/m\.json"):
        check_settings({})
    assert os.environ["NEWSCRAWL_EXTRACTOR_MODEL"] == "/nonexistent/m.json"
    check_settings({"NEWSCRAWL_EXTRACTORS": "nce"})  # no learned extractor: no model read


def test_a_json_list_of_extractors_reaches_the_pipeline() -> None:
    from scrapy.settings import Settings

    from newscrawl.crawl.checks import setting_list

    settings = Settings({"NEWSCRAWL_EXTRACTORS": '["nce", " mss"]'})
    assert setting_list(settings, "NEWSCRAWL_EXTRACTORS") == ["nce", "mss"]
    assert setting_list(Settings({"X": "nce, mss"}), "X") == ["nce", "mss"]


def test_crawl_ids_are_plain_names() -> None:
    assert check_crawl_id("20261127T015336-6c6457") == "20261127T015336-6c6457"
    assert check_crawl_id("daily:2026-11-27") == "daily:2026-11-27"
    for bad in ("", "..", ".hidden", "../../escape", "/tmp/x", "a\\b", "a b", "x" * 129):
        with pytest.raises(ValueError, match="not a plain name"):
            check_crawl_id(bad)


def test_the_crawl_command_stops_on_a_typo_before_fetching(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    url = "http://127.0.0.1:9/"  # nothing listens: a crawl that started would fail, not exit 2
    for option in (
        ["--extractors", "bogus"],
        ["--primary", "nce"],
        ["--crawl-id", "../../escape"],
        ["--warc", str(Path(__file__))],
        ["--max-pages", "-1"],
    ):
        assert main(["crawl", url, "--out", str(out), *option]) == 2
        assert "newscrawl crawl: " in capsys.readouterr().err
    assert not (tmp_path / "escape").exists()
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    assert main(["crawl", url, "--out", str(a_file)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"newscrawl crawl: {a_file} exists and is not a folder"
    )


def test_resume_of_a_crawl_id_that_is_not_there_or_finished_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--resume --crawl-id ID` with a mistyped id must not start a new crawl under it."""
    out = tmp_path / "out"
    url = "http://127.0.0.1:9/"  # nothing listens: a crawl that started would fail, not exit 2
    assert main(["crawl", url, "--out", str(out), "--resume", "--crawl-id", "nosuch"]) == 2
    assert "no crawl 'nosuch' in" in capsys.readouterr().err
    assert not (out / ".newscrawl" / "nosuch").exists()
    done = out / ".newscrawl" / "daily"
    done.mkdir(parents=True)
    (done / "state.json").write_text('{"status": "finished", "updated": "2026-11-27T00:00:00"}')
    assert main(["crawl", url, "--out", str(out), "--resume", "--crawl-id", "daily"]) == 2
    assert "crawl 'daily' in" in capsys.readouterr().err


def test_a_negative_cap_in_a_site_list_is_an_error(tmp_path: Path) -> None:
    sites = tmp_path / "sites.csv"
    sites.write_text("url,max_pages\nhttp://example.org/,-5\n")
    with pytest.raises(SiteListError, match="max_pages must be 0"):
        read_sites(str(sites))


def test_fifos_are_not_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.html").write_text("<html><body><p>A page of text.</p></body></html>")
    os.mkfifo(tmp_path / "b.html")
    found, missing = find_pages([str(tmp_path), str(tmp_path / "b.html")])
    assert found == [str(tmp_path / "a.html")] and missing == [str(tmp_path / "b.html")]
    assert not_found_reason(str(tmp_path / "b.html")) == "not a regular file or a folder"
    assert not_found_reason(str(tmp_path / "none.html")) == "no such file or directory"
    os.mkfifo(tmp_path / "c.warc")
    assert main(["ingest", str(tmp_path / "c.warc"), "--out", str(tmp_path / "o")]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_serve_demo_refuses_a_port_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-demo", "--port", "99999"]) == 2
    assert "--port must be 0" in capsys.readouterr().err


def test_a_missing_optional_package_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the distributed extra, `enqueue` printed redis's ModuleNotFoundError."""
    import sys

    monkeypatch.setitem(sys.modules, "redis", None)  # an import of it fails as if not installed
    monkeypatch.delitem(sys.modules, "newscrawl.scale.redis_queue", raising=False)
    assert main(["enqueue", "--redis", "redis://127.0.0.1:1/0", "http://example.com/"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'newscrawl[distributed]'" in err and "Traceback" not in err


# Runs `newscrawl` with some packages made unimportable, as if they were not installed.
WITHOUT_PACKAGES = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = set(sys.argv[1].split(","))


class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
from newscrawl.cli import main

sys.exit(main(sys.argv[2:]))
"""


PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"


@pytest.mark.parametrize(
    ("blocked", "setting", "message"),
    [
        (
            "playwright",
            "NEWSCRAWL_GEOMETRY=chromium",
            "NEWSCRAWL_GEOMETRY=chromium needs playwright",
        ),
        (
            "scrapy_playwright",
            f'DOWNLOAD_HANDLERS={{"http": "{PLAYWRIGHT_HANDLER}"}}',
            f"DOWNLOAD_HANDLERS names {PLAYWRIGHT_HANDLER}, but there is no module "
            "scrapy_playwright",
        ),
    ],
)
def test_a_missing_component_a_setting_names_stops_the_crawl_before_fetching(
    tmp_path: Path, blocked: str, setting: str, message: str
) -> None:
    """Chromium geometry without playwright crawled everything and only warned in the log;
    a download handler whose package is missing failed every request."""
    import subprocess
    import sys

    from recording_server import Answer, RecordingServer

    from newscrawl.template.geometry import CHROMIUM_PATH

    if blocked == "playwright" and not os.path.exists(CHROMIUM_PATH):
        message = "chromium is not at"  # checked first; the crawl stops all the same
    out = tmp_path / "out"
    home = Answer(200, b"<html><body><p>A page with some text.</p></body></html>")
    with RecordingServer({"/": home}) as site:
        argv = ["crawl", f"{site.origin}/", "--out", str(out), "--fast-local", "--set", setting]
        result = subprocess.run(
            [sys.executable, "-c", WITHOUT_PACKAGES, blocked, *argv],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert site.requested == []
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("newscrawl crawl: ") and message in lines[0]
    assert not (out / "pages").exists()


def test_component_settings_are_loaded_when_checked() -> None:
    check_settings({"SCHEDULER": "scrapy.core.scheduler.Scheduler", "REFERRER_POLICY": "origin"})
    check_settings(
        {"DOWNLOADER_MIDDLEWARES": {"scrapy.downloadermiddlewares.retry.RetryMiddleware": None}}
    )
    with pytest.raises(
        ValueError,
        match=re.escape("ITEM_PIPELINES names newscrawl.pipelines.rawpages.Nope, which cannot"),
    ):
        check_settings({"ITEM_PIPELINES": '{"newscrawl.pipelines.rawpages.Nope": 300}'})
    with pytest.raises(
        ValueError,
        match=re.escape("SCHEDULER names nowhere.Scheduler, but there is no module nowhere"),
    ):
        check_settings({"SCHEDULER": "nowhere.Scheduler"})
