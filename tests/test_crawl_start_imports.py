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
