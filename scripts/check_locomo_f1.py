"""Check that our `locomo-f1` and `locomo-adversarial` equal LoCoMo's own evaluation code on every stored answer.

    python scripts/check_locomo_f1.py PATH/TO/locomo/task_eval/evaluation.py RESULT_SPEC [RESULT_SPEC ...]

LoCoMo's code is not shipped here (it is theirs, and nothing in this repository may depend on a checkout of it):
clone https://github.com/snap-research/locomo (branch `code`) and point the first argument at its
`task_eval/evaluation.py`. The script feeds every answer of the named result files (files, folders or quoted globs)
to that file's own `eval_question_answering`, in the input layout it reads (`{"qa": [{"answer", "category",
"prediction"}]}`), and compares its per-answer score with the result's `f1` (categories 1-4) or
`scores.locomo-adversarial` (category 5), exactly (`==`, no tolerance). Update-set answers (not LoCoMo categories)
are skipped. The module imports `bert_score` at the top but only uses it for answers marked "bertscore"; when the
package is absent a placeholder module is registered so the import succeeds. Exit 0 when every answer matches,
1 naming each one that differs.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import types
from pathlib import Path

from bench.analysis.scoring.metrics.locomo_adversarial import NAME as LOCOMO_ADVERSARIAL
from bench.analysis.scoring.score import category_code
from bench.results.schema import read_result, result_files


def load_locomo_evaluation(path: Path) -> types.ModuleType:
    if importlib.util.find_spec("bert_score") is None:
        placeholder = types.ModuleType("bert_score")
        placeholder.score = None  # type: ignore[attr-defined]
        sys.modules["bert_score"] = placeholder
    spec = importlib.util.spec_from_file_location("locomo_evaluation", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: expected LoCoMo's task_eval/evaluation.py, found nothing importable")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    evaluation = load_locomo_evaluation(Path(argv[0]))
    rows: list[tuple[str, str, float | None]] = []  # (file, question id, our score)
    qa: list[dict[str, object]] = []
    for spec in argv[1:]:
        for path in result_files(spec):
            result = read_result(path)
            for answer in result.answers:
                code = category_code(answer.category)
                if code is None or answer.answer is None:
                    continue
                ours = (answer.scores or {}).get(LOCOMO_ADVERSARIAL) if code == 5 else answer.f1
                qa.append({"answer": answer.gold, "category": code, "prediction": answer.answer})
                rows.append((str(path), answer.question_id, ours))
    with tempfile.TemporaryDirectory() as tmp:
        infile = Path(tmp) / "qa.json"
        infile.write_text(json.dumps({"qa": qa}), encoding="utf-8")
        theirs, _, _ = evaluation.eval_question_answering(str(infile), eval_key="prediction")
    differing = [(f, q, o, t) for (f, q, o), t in zip(rows, theirs, strict=True) if o is None or float(t) != o]
    for file, qid, ours, official in differing:
        print(f"{file}: {qid}: ours {ours!r}, LoCoMo's evaluation.py {float(official)!r}")
    files = len({f for f, _, _ in rows})
    print(
        f"check_locomo_f1: {len(rows) - len(differing)} of {len(rows)} answers in {files} file(s) equal LoCoMo's code"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
