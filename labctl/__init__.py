"""labctl: small, single-purpose commands for an ML lab's supervisor (JSON Lines in and out)."""

__version__ = "0.1.0"
