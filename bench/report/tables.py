"""Tables: rows of cells that are either registered numbers (by id) or label text, rendered with jinja2 templates
to Markdown and LaTeX. A table never holds a number that is not in numbers.json."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import jinja2

from bench.analysis.coverage import partial_note
from bench.report.numbers import Numbers
from bench.results.schema import Result
from bench.vocab import PAPER_TEMPLATES_DIR


@dataclass
class Table:
    name: str
    title: str
    stack_label: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    number_ids: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class TableBuilder:
    """Collects rows; ``num(id)`` cites a registered number, ``text(s)`` is a label, ``dash()`` an empty cell."""

    def __init__(self, numbers: Numbers, name: str, title: str, stack_label: str, columns: list[str]) -> None:
        self.numbers = numbers
        self.table = Table(name, title, stack_label, columns)

    def num(self, number_id: str) -> str:
        self.table.number_ids.append(number_id)
        return self.numbers[number_id].display

    def num_or_dash(self, number_id: str) -> str:
        return self.num(number_id) if number_id in self.numbers else "–"

    def nums(self, stem: str, *fields: str) -> list[str]:
        """The cells of `<stem>.<field>` for each field, in order (a row of one entity's figures)."""
        return [self.num(f"{stem}.{name}") for name in fields]

    def interval(self, low_id: str, high_id: str) -> str:
        return f"[{self.num(low_id)}, {self.num(high_id)}]"

    def run_label(self, label: str, results: Iterable[Result]) -> str:
        """The label of a row showing a run's figures: a partial run (bench.analysis.coverage) is marked, and a note
        says what it covers, so its accuracy never reads as a whole run's."""
        note = partial_note(results)
        if not note:
            return label
        self.note(f"{label}:{note}.")
        return f"{label} (PARTIAL)"

    def row(self, *cells: str) -> None:
        if len(cells) != len(self.table.columns):
            raise ValueError(f"table {self.table.name}: expected {len(self.table.columns)} cells, found {len(cells)}")
        self.table.rows.append(list(cells))

    def note(self, text: str) -> None:
        self.table.notes.append(text)


def _latex_escape(text: str) -> str:
    replacements = {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "×": r"$\times$",
        "Δ": r"$\Delta$",
        "–": "--",
        "—": "---",
        "−": "$-$",
        "θ": r"$\theta$",
        "ε": r"$\varepsilon$",
    }
    return "".join(replacements.get(ch, ch) for ch in text)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PAPER_TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tex"] = _latex_escape
    return env


def render(table: Table, kind: str) -> str:
    """``kind`` is ``md`` or ``tex``; one generic template per kind renders every table."""
    return environment().get_template(f"table.{kind}.j2").render(table=table)
