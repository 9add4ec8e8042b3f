"""The computed paper: every number, table and figure of one stack directory, before anything is written.

`bench.report.build.compute` makes one; `write`, the article, the appendix index and `paper check` read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.report.calibration import CalibrationCell
from bench.report.figures import FigureSpec
from bench.report.inputs import ResultSet
from bench.report.numbers import Numbers
from bench.report.tables import Table


@dataclass
class Paper:
    results: ResultSet
    numbers: Numbers
    tables: list[Table]
    figures: list[FigureSpec]
    calibration: list[CalibrationCell] = field(default_factory=list)

    def entries(self) -> list[str]:
        # The article's prose cites the article's numbers, so it is built from the paper stack only.
        article = ["article"] if self.results.stack == "paper" else []
        return (
            ["numbers"]
            + [f"table:{t.name}" for t in self.tables]
            + [f"figure:{f.name}" for f in self.figures]
            + article
        )
