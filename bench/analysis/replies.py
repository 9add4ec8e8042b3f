"""Whether a model's reply can be used by the role that asked for it (bench.run.health counts these per run;
judge-probe flags a judge whose replies hold no label).

- extract: a JSON object with a `memory` or `facts` list (mem0's and engram's extraction format);
- decide, escalate, llm_decider: a JSON object (typed answers, mem0's update events);
- judge: a JSON object holding a CORRECT/WRONG label (the rule of `bench.models.judge.parse_label`);
- answer and every other role: any text (only an empty reply is unusable);
- a foreign system's call through the gateway endpoint, whatever its role: its prompts and formats are its own, so
  any text, or a JSON object when the request asked for JSON (`foreign_verdict`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench.models.judge import CORRECT, WRONG

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
JSON_ROLES = ("decide", "escalate", "llm_decider")


def _json_object(text: str) -> dict[str, Any] | None:
    body = _FENCE.sub("", text.strip())
    for candidate in (body, *(_OBJECT.findall(body)[:1])):
        try:
            value = json.loads(candidate, strict=False)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(value, dict):
            return value
    return None


def verdict(role: str, text: str) -> str:
    """One reply of a role: ok, empty or unreadable."""
    if not text.strip():
        return "empty"
    if role == "extract":
        parsed = _json_object(text)
        ok = parsed is not None and any(isinstance(parsed.get(key), list) for key in ("memory", "facts"))
        return "ok" if ok else "unreadable"
    if role in JSON_ROLES:
        return "ok" if _json_object(text) is not None else "unreadable"
    if role == "judge":
        labels = re.findall(r'"label"\s*:\s*"(\w+)"', text)
        return "ok" if any(label.upper() in (CORRECT, WRONG) for label in labels) else "unreadable"
    return "ok"


def foreign_verdict(text: str, asked_json: bool) -> str:
    """One reply to a foreign system (A-MEM, LangMem, ... through the gateway endpoint): ok, empty or unreadable.
    The role's own rule (mem0's `facts` list for extract) says nothing about a library with its own prompts."""
    if not text.strip():
        return "empty"
    if asked_json and _json_object(text) is None and not text.lstrip().startswith("["):
        return "unreadable"
    return "ok"
