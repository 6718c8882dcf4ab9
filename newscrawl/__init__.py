"""newscrawl: turn news and blog sites into clean article corpora."""

__version__ = "0.1.0"
