"""The package version (one place; the wheel's metadata reads it from here)."""

__version__ = "0.2.2"
