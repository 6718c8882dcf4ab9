"""A crawl's start does not import what only reading stored datasets needs: pyarrow.dataset
pulls in pandas (about half a second of CPU), which a fresh crawl never uses."""

from __future__ import annotations

import subprocess
import sys

CRAWL_MODULES = (
    "newscrawl.crawl.crawl_process",
    "newscrawl.spiders.site",
    "newscrawl.pipelines.rawpages",
    "newscrawl.pipelines.parquet",
)


def test_the_crawl_modules_import_neither_pandas_nor_pyarrow_dataset() -> None:
    code = (
        f"import sys\nimport {', '.join(CRAWL_MODULES)}\n"
        "print(sorted(m for m in ('pandas', 'pyarrow.dataset') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"


def test_pyarrow_imports_pandas_in_the_writers_warm_up_thread_not_in_the_reactors() -> None:
    code = """
import sys, threading
importers = []

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            importers.append(threading.current_thread().name)
        return None

sys.meta_path.insert(0, Watch())
from newscrawl.storage import writer
writer.warm_conversions()
writer._WARMING[0].join()
import pyarrow as pa
pa.array([1])  # the crawl's first row group
print(importers)
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "['pyarrow-warm-up']"


def test_a_command_imports_only_its_own_module() -> None:
    code = (
        "import sys\nfrom newscrawl.cli import main\n"
        "try:\n    main(['crawl', '--help'])\nexcept SystemExit:\n    pass\n"
        "from newscrawl.cli import COMMANDS\n"
        "names = {'newscrawl.commands.' + module for module, _ in COMMANDS.values()}\n"
        "print(sorted(m for m in sys.modules if m in names))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "['newscrawl.commands.crawl']"
