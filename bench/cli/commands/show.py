"""`engram-bench show RESULT QUESTION_ID`: one question in the terminal: answer, lines, sources, decisions."""

from __future__ import annotations

import typer

from bench.view.model import load_side
from bench.view.show import matching_positions, render_question


def show(
    result: str = typer.Argument(..., help="A result file."),
    question_id: str = typer.Argument(..., help="A question id of it, e.g. conv-30:12 (or conv-26:0@4 in stress)."),
    all_decisions: bool = typer.Option(
        False,
        "--all-decisions",
        help="Every decision of a fact on its own line with its top options (default: one line).",
    ),
) -> None:
    """Print one question: gold, answer, label, each shown line with its source turns and, with a trace, engram's
    belief, validity window and decisions for the line's fact."""
    side = load_side(result)
    typer.echo("\n\n".join(render_question(side, i, all_decisions) for i in matching_positions(side, question_id)))


def register(app: typer.Typer) -> None:
    app.command("show")(show)
