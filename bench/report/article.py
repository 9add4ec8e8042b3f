"""The article's results sections, rendered from ``paper/templates/article.md.j2``.

The template holds no numbers: every figure in the prose is ``{{ n("id") }}``, a reference into numbers.json, and
tables and figures are included by name. An unknown id stops the build with the id.
"""

from __future__ import annotations

from bench.report.paper import Paper
from bench.report.tables import environment, render

ARTICLE_TEMPLATE = "article.md.j2"


def render_article(paper: Paper) -> str:
    tables = {t.name: t for t in paper.tables}
    figures = {f.name: f for f in paper.figures}

    def n(number_id: str) -> str:
        return paper.numbers[number_id].display

    def table(name: str) -> str:
        return render(tables[name], "md").strip()

    def figure(name: str) -> str:
        spec = figures[name]
        return f"![{spec.caption}](figures/{name}.svg)\n\n*Figure: {spec.caption}* ({paper.results.label})"

    template = environment().get_template(ARTICLE_TEMPLATE)
    return template.render(n=n, table=table, figure=figure, stack_label=paper.results.label)
