"""The v3 numbers a reader asked for beside the paper's own: raw turns by cosine at k=6 and k=20, and the standard
error of H1 (T0R at its token-matched k against engram v2 at k=3), each recomputed here from the result files."""

from __future__ import annotations

import json
import math
import statistics

from tests.conftest import REPO_ROOT

HELDOUT = REPO_ROOT / "results" / "v3" / "heldout"
NUMBERS = json.loads((REPO_ROOT / "paper" / "v3" / "numbers.json").read_text(encoding="utf-8"))


def _labels(file_name: str) -> dict[str, int]:
    out = {}
    for path in sorted(HELDOUT.glob(f"*/{file_name}")):
        for answer in json.loads(path.read_text(encoding="utf-8"))["answers"]:
            if answer["scored"]:
                out[answer["question_id"]] = int(answer["label"] == "CORRECT")
    return out


def test_turns_cosine_at_k6_and_k20_is_the_pooled_accuracy_of_its_files() -> None:
    for k in (6, 20):
        labels = _labels(f"turns-cosine__k{k}.json")
        assert len(labels) == 778
        entry = NUMBERS[f"v3.L0.k{k}.accuracy"]
        assert entry["value"] == sum(labels.values()) / len(labels)
        assert entry["display"] == f"{100 * entry['value']:.1f}"
    assert NUMBERS["v3.L0.k20.accuracy"]["value"] > NUMBERS["t3.tight.L0"]["value"]


def test_the_standard_error_of_h1_is_that_of_its_paired_differences() -> None:
    k = NUMBERS["v3.token_match.engram-v2-k3.t0r_k"]["value"]
    t0r, engram = _labels(f"turns-rerank__k{k}.json"), _labels("engram-v2__k3.json")
    d = [t0r[q] - engram[q] for q in sorted(engram)]
    se = statistics.stdev(d) / math.sqrt(len(d))
    assert math.isclose(NUMBERS["v3.H1.se"]["value"], se, rel_tol=1e-9)
    # the printed bound is the difference less 1.645 standard errors
    bound = NUMBERS["t1.judge.diff"]["value"] - 1.645 * se
    assert math.isclose(NUMBERS["t1.judge.bound"]["value"], bound, rel_tol=1e-6)
