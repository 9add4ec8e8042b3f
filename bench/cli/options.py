"""Parsers of option values the commands share: the command line's text in, the request's value out."""

from __future__ import annotations

from bench.errors import ConfigError


def parse_ks(text: str | None) -> tuple[int, ...] | None:
    """`--k 3,20` -> (3, 20): the one reading of `--k` (run, heldout, plan); the request carries the tuple to the
    planner, the only place that decides which k's a unit answers at."""
    if not text:
        return None
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):  # "3,,20" or "3,": a typo, not a shorter list
        raise ConfigError(f"--k: expected integers separated by single commas (e.g. 3,20), found {text!r}")
    try:
        values = tuple(sorted({int(part) for part in parts}))
    except ValueError:
        raise ConfigError(f"--k: expected integers separated by commas (e.g. 3,20), found {text!r}") from None
    if not values or min(values) < 1:
        raise ConfigError(f"--k: expected positive integers, found {text!r}")
    return values
