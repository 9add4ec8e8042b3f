"""The one line format the answer model sees for each retrieved fact (the article's `render`, §3.3).

    [said YYYY-MM-DD] <fact text> - "<source quote>"
    [said YYYY-MM-DD] <fact text> (no longer true since YYYY-MM-DD) - "<source quote>"

- the date is when the fact was said (conversation time of its source message);
- the validity note appears for closed facts only; belief, confidence and scores are never shown;
- the source quote is the verbatim text the fact came from, whitespace collapsed to single spaces, not cut;
- a fact without a quote renders without the ` - "..."` part.
Token counts of these lines are the caller's business (the harness counts them with its token counter).
"""

from __future__ import annotations

from engram._types import Fact


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_fact(fact: Fact) -> str:
    until = None if fact.valid_until is None else fact.valid_until.date().isoformat()
    return render_parts(fact.said_at.date().isoformat(), fact.text, until, fact.source_text)


def render_parts(said_day: str, text: str, until_day: str | None, source_text: str | None) -> str:
    """`render_fact` from the fields it reads, dates as YYYY-MM-DD (the store renders from its read columns)."""
    line = f"[said {said_day}] {_one_line(text)}"
    if until_day is not None:
        line += f" (no longer true since {until_day})"
    if source_text:
        line += f' - "{_one_line(source_text)}"'
    return line
