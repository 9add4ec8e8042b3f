"""`engram-bench show RESULT QUESTION_ID`: one question as the terminal shows it, from the same data as the report."""

from __future__ import annotations

import difflib
from typing import Any

from bench.errors import ResultError
from bench.view.model import (
    Side,
    answer_metrics,
    lines_missing_reason,
    sources_missing_reason,
    trace_missing_reason,
)


def matching_positions(side: Side, question: str) -> list[int]:
    """Answers whose key or question id is ``question`` (a stress file asks one question at several checkpoints)."""
    found = [i for i, (key, a) in enumerate(zip(side.keys, side.result.answers)) if question in (key, a.question_id)]
    if not found:
        raise ResultError(
            f"{side.path}: expected one of its question ids ({_ids_listed(side, question)}), found {question!r}"
        )
    return found


LISTED_IDS = 40  # a LoCoMo-wide result has ~2,000 ids: the closest ones and the first few, never a screenful


def _ids_listed(side: Side, question: str) -> str:
    """The result's question ids for the one-line error: all of them when few, else the closest and the first."""
    ids = list(dict.fromkeys(side.keys))
    if len(ids) <= LISTED_IDS:
        return f"{len(ids)}: " + ", ".join(ids) if ids else "it has none"
    close = difflib.get_close_matches(question, ids, n=5, cutoff=0.5)
    shown = list(dict.fromkeys([*close, *ids[: LISTED_IDS - len(close)]]))
    lead = f"closest {', '.join(close)}; " if close else ""
    return f"{len(ids)}, {lead}first {', '.join(i for i in shown if i not in close)}, ..."


SHOWN_OPTIONS = 5  # the most probable options of a decision; edge_type alone has two dozen


def _probs(decision: dict[str, Any]) -> str:
    ranked = sorted(decision["probs"].items(), key=lambda kv: -kv[1])
    shown = " ".join(f"{'*' if o == decision['chosen'] else ''}{o}={p:.3f}" for o, p in ranked[:SHOWN_OPTIONS])
    rest = ranked[SHOWN_OPTIONS:]
    return shown + (f" (+{len(rest)} more, each <= {rest[0][1]:.3f})" if rest else "")


def _chosen(decision: dict[str, Any], times: int) -> str:
    target = f"[{decision['target']}]" if decision.get("target") else ""
    p = decision.get("probs", {}).get(decision.get("chosen"))
    shown = f"{decision['question']}{target}={decision.get('chosen')}" + (f" {p:.2f}" if p is not None else "")
    return shown + (f" x{times}" if times > 1 else "")


def _fact_lines(side: Side, conversation: str, detail: dict[str, Any], all_decisions: bool = False) -> list[str]:
    items = side.trace.items.get(conversation, {}) if side.trace is not None else {}
    fact_id = detail.get("fact_id")
    via = f"found by {detail['via']} {detail.get('score', 0):.3f}" if detail.get("via") else ""
    item = items.get(fact_id) if fact_id else None
    if item is None:
        return [f"      fact {fact_id} {via} (not explained in the trace)"]
    f = item["fact"]
    until = (f.get("valid_until") or "open")[:10]
    closed = f" closed: {f['closed_reason']} by {f['closed_by']}" if f.get("closed_reason") else ""
    out = [f"      fact {fact_id}: belief {f['belief']:.3f}, valid {f['valid_from'][:10]} -> {until}{closed}; {via}"]
    folded = _folded(item.get("decisions", []))
    if not all_decisions and folded:
        # One line per fact: each question's chosen option and its probability; --all-decisions spreads them out.
        out.append("        decided: " + " · ".join(_chosen(d, times) for d, times in folded))
    for d, times in folded if all_decisions else []:
        target = f" [{d['target']}]" if d.get("target") else ""
        again = f" (asked {times} times, the same answer each time)" if times > 1 else ""
        out.append(f"        {d['question']}{target}: {_probs(d)}{again}")
    if f.get("closed_by") and f["closed_by"] in items:
        for d in items[f["closed_by"]].get("decisions", []):
            if d.get("target") == fact_id:
                out.append(f"        closed by {f['closed_by']}: {d['question']}: {_probs(d)}")
    for event in item.get("history", []):
        if event["event"].startswith("blocked_") or event["event"] in ("close", "reopen"):
            rest = {k: v for k, v in event.items() if k not in ("event", "message_id")}
            out.append(f"        {event['event']} at {event.get('message_id')}: {rest}")
    if item.get("superseded"):
        out.append(f"        this fact closed: {', '.join(item['superseded'])}")
    return out


def _folded(decisions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """A fact's decisions with repeats folded: the same question about the same target with the same answer (asked
    again at each read, say) is one line with its count, in first-asked order; a changed answer keeps its own line."""
    counts: dict[str, int] = {}
    first: dict[str, dict[str, Any]] = {}
    for d in decisions:
        probs = sorted((str(o), round(float(p), 3)) for o, p in d.get("probs", {}).items())
        key = repr((d.get("question"), d.get("target"), d.get("chosen"), probs))
        first.setdefault(key, d)
        counts[key] = counts.get(key, 0) + 1
    return [(first[key], counts[key]) for key in first]


def render_question(side: Side, position: int, all_decisions: bool = False) -> str:
    a = side.result.answers[position]
    evidence = set(a.evidence or ())
    turns = side.trace.turns.get(a.conversation, {}) if side.trace is not None else {}
    out = [
        f"{side.keys[position]}  [{a.category}{'' if a.scored else ', unscored'}]  {side.label}",
        f"  question: {a.question}",
        f"  gold:     {a.gold}",
        f"  answer:   {a.answer if a.answer is not None else '(not published)'}",
        f"  label {a.label} · "
        + "".join(f"{m.label} {m.value if m.value is not None else '-'} · " for m in answer_metrics(a))
        + f"tokens {a.retrieved_tokens}",
        f"  evidence: {', '.join(a.evidence) if a.evidence is not None else 'not recorded'}",
    ]
    missing = lines_missing_reason(side, a)
    if missing:
        return "\n".join([*out, f"  lines: {missing}"])
    details = side.trace.lines[position] if side.trace is not None else None
    out.append(f"  lines ({len(a.lines or [])}):")
    for i, text in enumerate(a.lines or []):
        out.append(f"  {i + 1:>3}. {text}")
        if a.sources is None:
            out.append(f"      source: {sources_missing_reason(side, a)}")
        else:
            for s in a.sources[i]:
                mark = " ✓ evidence" if s in evidence else ""
                said = turns.get(s)
                quote = f" {said['speaker']}: {said['text']}" if said else ""
                out.append(f"      source {s}{mark}{quote}")
        if details is not None:
            out.extend(_fact_lines(side, a.conversation, details[i], all_decisions))
    note = trace_missing_reason(side)
    if note:
        out.append(f"  {note}")
    return "\n".join(out)
