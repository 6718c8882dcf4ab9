"""The package's version, in a module of its own so that settings and the crawl can name it
without importing the Python API."""

__version__ = "0.1.0"
