"""Evidence recall (`evidence-recall@<k>`): the share of the question's evidence turns that at least one shown line
came from (bench.models.judge.evidence_recall, computed by the run from what the system retrieved); null when the
question lists no evidence. Named per budget, so A and B naming it differently is no warning."""

from __future__ import annotations

from bench.analysis.scoring.metric import Metric, Shown
from bench.vocab import EVIDENCE_RECALL

METRIC = Metric(
    name=EVIDENCE_RECALL,
    field="answers[].evidence_recall",
    choice="evidence-recall",
    version=1,
    named_per_run=True,
    on_adversarial=EVIDENCE_RECALL,
    warn_if_names_differ=False,
    shown=Shown(label="evidence recall", column="ER", tooltip="evidence recall", order=2),
)
