"""Shared pytest set-up. Area-specific fixtures live beside their tests."""
