"""The lab: benchmarks (`newscrawl bench NAME`, one ``bench_NAME`` module each) and the
synthetic sites and archives they and the tests generate (``synthetic_*``).

No product module imports it (an import-linter contract in pyproject.toml); the CLI reaches
`newscrawl bench` through the ``newscrawl.commands`` entry point. Its third-party libraries
come with the ``lab`` install extra (``pip install 'newscrawl[lab]'``).
"""
