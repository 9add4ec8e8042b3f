"""The paper builds state their gold and the official gold's ceiling, and can be rebuilt from the same result files
under the audited gold without touching the committed paper."""

from __future__ import annotations

import json
import re

from bench.data.audit import official_ceilings
from bench.report.gold import gold_note
from tests.bench.analysis.test_compare import run_cli
from tests.conftest import REPO_ROOT


def _table(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\| \d", line)]


def test_readme_and_both_committed_gold_notes_carry_the_computed_ceilings() -> None:
    computed = _table(gold_note("official", None))
    assert len(computed) == len(official_ceilings()) == 5
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("<!-- ceilings:start -->") : readme.index("<!-- ceilings:end -->")]
    assert _table(block) == computed
    for note in (REPO_ROOT / "paper" / "gold.md", REPO_ROOT / "paper" / "v3" / "gold.md"):
        assert note.read_text(encoding="utf-8") == gold_note("official", None)


def test_the_v3_paper_under_audited_exclude_is_written_aside_and_labelled(tmp_path, capsys, monkeypatch) -> None:
    committed = (REPO_ROOT / "paper" / "v3" / "numbers.json").read_bytes()
    out = tmp_path / "v3-excluded"
    code, _, err = run_cli(
        ["paper", "build", "--paper", "v3", "--gold", "audited-exclude", "--out", str(out)], capsys, monkeypatch
    )
    assert code == 0, err
    assert (REPO_ROOT / "paper" / "v3" / "numbers.json").read_bytes() == committed
    assert "gold audited-exclude" in (out / "tables" / "v3_table1.md").read_text(encoding="utf-8")
    assert "**audited-exclude**" in (out / "gold.md").read_text(encoding="utf-8")
    numbers = json.loads((out / "numbers.json").read_text(encoding="utf-8"))
    official = json.loads(committed)
    # fewer questions once the audited ones are dropped, so every pooled n shrinks
    assert numbers["v3.H1.n"]["value"] < official["v3.H1.n"]["value"]
    caption = (out / "tables" / "v3_table3.md").read_text(encoding="utf-8").splitlines()[0]
    assert f"{numbers['v3.H1.n']['value']:,} LoCoMo held-out questions" in caption


def test_a_view_that_lacks_what_the_article_prints_writes_nothing(tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "v1-no-adversarial"
    code, outtext, err = run_cli(
        ["paper", "build", "--gold", "audited-exclude", "--categories", "1,2,3,4", "--out", str(out)],
        capsys,
        monkeypatch,
    )
    assert code == 2 and not out.exists()
    assert len(err.strip().splitlines()) == 1 and "keep category 5" in err
