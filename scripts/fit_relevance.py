"""Fit the offline rules stand-in's relevance answer on its tuning conversations, and measure what it retrieves.

The rules stand-in answers the read path's relevance question (Q_rlv, "is this memory relevant to the question?")
with P(yes) = logistic(RELEVANCE_BIAS + sum of RELEVANCE_WEIGHTS x RELEVANCE_FEATURES) (engram/deciders/_rules.py).
The data are every (question, shortlisted memory) pair of the tuning conversations (TUNING_CONVERSATIONS): the 30
facts the read path shortlists for each scored question, from the store the offline engram arm builds of the whole
conversation, labelled 1 when the fact came from one of the question's evidence turns. The slopes are a logistic
regression of that label on the features. The intercept is then chosen on a grid: the fitted intercept calibrates
P(evidence turn), a narrower event than "relevant", and at it the stand-in calls almost nothing relevant, so the read
path is the cosine floor; the intercept kept is the one whose read-path ordering gives the highest evidence recall
at 3 on the same pairs. No held-out conversation of the article is read here.

    features STORES [--out CSV]                      the pairs, their features and labels (needs the stores)
    fit [CSV]                                        the weights the decider should carry
    evaluate STORES --conversation C [...] [--k 3]   evidence recall at k through the real read path, reranked
                                                     and cosine-only (reranking off)

STORES is a folder holding `<conversation>/engram.db`, e.g. the `store/` folder of
`engram-bench run engram --slice locomo --k 3` (runs/offline/locomo/engram/<run-id>/store). The committed table,
data/tuning/relevance-pairs.csv, was made from the stores of rules-standin-v7 (the stores do not depend on the
relevance answer: only the read path asks it).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# The stand-in's tuning conversations: conv-26 (the article's tuning conversation) and the five LoCoMo conversations
# the article used neither for tuning nor as held-out data. The article's four held-out conversations are never read.
TUNING_CONVERSATIONS = ("conv-26", "conv-44", "conv-47", "conv-48", "conv-49", "conv-50")
TABLE = Path(__file__).resolve().parent.parent / "data" / "tuning" / "relevance-pairs.csv"
# label: 1 when the memory came from an evidence turn; hits: those turns (";"-joined); evidence: how many turns the
# question lists; belief: b_u at the time of the read (the read path sorts kept memories by rho * b).
COLUMNS = ("question_id", "fact_id", "label", "hits", "evidence", "belief")


@dataclass(frozen=True)
class Pair:
    question_id: str
    fact_id: str
    features: dict[str, float]
    hits: tuple[str, ...]
    evidence: int
    belief: float

    @property
    def label(self) -> int:
        return int(bool(self.hits))


class _RecordingDecider:
    """The rules decider, keeping the memories each read asked about (the shortlist, in cosine order)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.model = inner.name, inner.model
        self.asked: list[tuple[str, str]] = []  # (fact id, memory text)

    def ask(self, state: dict, asks: Sequence[Any]) -> dict[str, Any]:
        self.asked = [(a.target, a.refs["memory"]["text"]) for a in asks if a.question.id == "relevant_to_query"]
        return self.inner.ask(state, asks)


def _open(store: Path, embedder: Any, *, rerank: bool) -> tuple[Any, _RecordingDecider]:
    """The offline engram over an existing store, with the rules decider behind a recorder."""
    from engram import Engram, Flags
    from engram._extract import RulesExtractor
    from engram.deciders import RulesDecider

    decider = _RecordingDecider(RulesDecider(embedder))
    flags = Flags.frozen() if rerank else Flags.reranking_off()
    return Engram(store, extractor=RulesExtractor(), decider=decider, embedder=embedder, flags=flags), decider


def _embedder() -> Any:
    """One MiniLM for every store the command reads, with room to keep every text it embeds."""
    from engram._embed import MiniLMEmbedder

    return MiniLMEmbedder(cache_size=200_000)


def _questions(conversation: str) -> list[Any]:
    from bench.data.slices import load_slice

    return [q for q in load_slice(f"locomo:{conversation}").questions if q.scored and q.evidence]


def _sources(memory: Any, fact_id: str) -> set[str]:
    return {member.source_message_id for member in memory.same_as(fact_id)}


def pairs_of(stores: Path, conversation: str, embedder: Any) -> Iterator[Pair]:
    """Every (question, shortlisted memory) pair of one conversation, with the rules' features and the label."""
    from engram.deciders._rules import relevance_features

    memory, recorder = _open(stores / conversation / "engram.db", embedder, rerank=True)
    for question in _questions(conversation):
        memory.retrieve(question.question)
        query_vector = embedder.embed([question.question])[0]
        vectors = embedder.embed([text for _, text in recorder.asked]) if recorder.asked else []
        for (fact_id, text), vector in zip(recorder.asked, vectors, strict=True):
            cosine = float(query_vector @ vector)
            hits = tuple(sorted(_sources(memory, fact_id) & set(question.evidence)))
            features = relevance_features(question.question, text, cosine)
            belief = next(f.belief for f in memory.same_as(fact_id) if f.id == fact_id)
            yield Pair(question.id, fact_id, features, hits, len(set(question.evidence)), belief)


def write_table(pairs: Sequence[Pair], out: Path) -> None:
    from engram.deciders._rules import RELEVANCE_FEATURES

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow((*COLUMNS, *RELEVANCE_FEATURES))
        for p in pairs:
            fixed = (p.question_id, p.fact_id, p.label, ";".join(p.hits), p.evidence, _fmt(p.belief))
            writer.writerow((*fixed, *(_fmt(p.features[n]) for n in RELEVANCE_FEATURES)))
    tmp.replace(out)


def _fmt(value: float) -> str:
    return repr(round(value, 6))


@dataclass(frozen=True)
class Row:
    """One line of a features table."""

    question_id: str
    fact_id: str
    hits: frozenset[str]
    evidence: int
    belief: float
    features: tuple[float, ...]


def read_table(path: Path) -> tuple[tuple[str, ...], list[Row]]:
    """(feature names, rows) of a features table."""
    with path.open(newline="") as handle:
        reader = csv.reader(handle)
        names = tuple(next(reader)[len(COLUMNS) :])
        rows = [
            Row(
                r[0],
                r[1],
                frozenset(filter(None, r[3].split(";"))),
                int(r[4]),
                float(r[5]),
                tuple(float(v) for v in r[len(COLUMNS) :]),
            )
            for r in reader
        ]
    return names, rows


def fit_slopes(names: Sequence[str], rows: Sequence[Row]) -> tuple[float, dict[str, float]]:
    """Maximum-likelihood logistic regression of "came from an evidence turn" on the features: (intercept,
    weight per feature)."""
    import numpy as np
    import statsmodels.api as sm

    design = sm.add_constant(np.asarray([r.features for r in rows], dtype=float), has_constant="add")
    labels = np.asarray([float(bool(r.hits)) for r in rows])
    params = [float(v) for v in sm.Logit(labels, design).fit(disp=0, method="newton", maxiter=100).params]
    return params[0], dict(zip(names, params[1:], strict=True))


def read_path_recall(rows: Sequence[Row], bias: float, weights: Sequence[float], k: int = 3) -> float:
    """Mean evidence recall of the first k lines the read path's ordering rule gives: memories with
    rho > theta_rel first, by rho * b, then the cosine floor (the FLOOR_K closest). The relation pull, superseded
    history and same_as folding are left out: this is the criterion the intercept is chosen by, not the read path."""
    from engram import config

    by_question: dict[str, list[Row]] = {}
    for row in rows:
        by_question.setdefault(row.question_id, []).append(row)
    total = 0.0
    for shortlist in by_question.values():
        rho = {r.fact_id: _logistic(bias + math.fsum(w * x for w, x in zip(weights, r.features))) for r in shortlist}
        kept = sorted(
            (r for r in shortlist if rho[r.fact_id] > config.THETA_REL), key=lambda r: -rho[r.fact_id] * r.belief
        )
        closest = sorted(shortlist, key=lambda r: -r.features[0])[: config.FLOOR_K]
        order = kept + [r for r in closest if r not in kept]
        shown = frozenset().union(*(r.hits for r in order[:k]))
        total += len(shown) / shortlist[0].evidence
    return total / len(by_question)


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


# The intercepts tried: the fitted one's neighbourhood on a grid of 0.25 log-odds.
INTERCEPT_GRID = tuple(x / 4 for x in range(-32, 1))


def fit(path: Path) -> tuple[float, dict[str, float]]:
    """The relevance answer's (bias, weights) from a features table: the slopes of the logistic fit, and the
    intercept on INTERCEPT_GRID whose read-path evidence recall at 3 is highest (the fitted intercept calibrates
    P(evidence turn), a narrower event than "relevant": at it the stand-in calls almost nothing relevant and the
    read path is the cosine floor). Ties go to the lower intercept, the more conservative judge."""
    names, rows = read_table(path)
    if names[0] != "cosine":
        raise SystemExit(f"{path}: expected the first feature column to be cosine, found {names[0]!r}")
    _, weights = fit_slopes(names, rows)
    slopes = [weights[n] for n in names]
    best = max(INTERCEPT_GRID, key=lambda b: (round(read_path_recall(rows, b, slopes), 9), -b))
    return best, weights


def evidence_recall_at(stores: Path, conversation: str, k: int, embedder: Any, *, rerank: bool) -> list[float]:
    """Per question with evidence: the share of its evidence turns that one of the first k lines came from."""
    memory, _ = _open(stores / conversation / "engram.db", embedder, rerank=rerank)
    recalls = []
    for question in _questions(conversation):
        lines = memory.retrieve(question.question).lines[:k]
        shown = set().union(*(_sources(memory, line.fact_id) for line in lines)) if lines else set()
        wanted = set(question.evidence)
        recalls.append(len(wanted & shown) / len(wanted))
    return recalls


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    features = sub.add_parser("features")
    features.add_argument("stores", type=Path)
    features.add_argument("--out", type=Path, default=TABLE)
    fitting = sub.add_parser("fit")
    fitting.add_argument("table", type=Path, nargs="?", default=TABLE)
    evaluate = sub.add_parser("evaluate")
    evaluate.add_argument("stores", type=Path)
    evaluate.add_argument("--conversation", action="append", required=True)
    evaluate.add_argument("--k", type=int, default=3)
    args = parser.parse_args(argv)

    if args.command == "features":
        embedder = _embedder()
        pairs = [p for conversation in TUNING_CONVERSATIONS for p in pairs_of(args.stores, conversation, embedder)]
        write_table(pairs, args.out)
        positives = sum(p.label for p in pairs)
        print(f"{args.out}: {len(pairs)} pairs, {positives} from an evidence turn")
    elif args.command == "fit":
        bias, weights = fit(args.table)
        names, rows = read_table(args.table)
        slopes = [weights[n] for n in names]
        cosine = read_path_recall(rows, -math.inf, slopes)
        print(
            f"read-path evidence recall at 3 on the table: cosine floor {cosine:.3f}, "
            f"with the relevance answer {read_path_recall(rows, bias, slopes):.3f}"
        )
        print(f"RELEVANCE_BIAS = {bias:.2f}")
        print("RELEVANCE_WEIGHTS = {" + ", ".join(f'"{n}": {w:.3f}' for n, w in weights.items()) + "}")
    else:
        embedder = _embedder()
        pooled: dict[bool, list[float]] = {True: [], False: []}
        for conversation in args.conversation:
            row = []
            for rerank in (True, False):
                recalls = evidence_recall_at(args.stores, conversation, args.k, embedder, rerank=rerank)
                pooled[rerank] += recalls
                row.append(statistics.fmean(recalls))
            print(
                f"{conversation}: evidence recall@{args.k} reranked {row[0]:.3f}  cosine {row[1]:.3f}  (n={len(recalls)})"
            )
        if len(args.conversation) > 1:
            rr, cs = statistics.fmean(pooled[True]), statistics.fmean(pooled[False])
            print(f"pooled: reranked {rr:.3f}  cosine {cs:.3f}  (n={len(pooled[True])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
