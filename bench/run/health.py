"""Run health and provenance: which server answered each role, and whether its replies could be used.

A run against a broken model can look like a success: every extraction reply unreadable, nothing stored, every
answer "I don't know", and a result file written as usual. `RunHealth` watches every call the gateway serves (a
hit or a fresh reply alike, so a replay reports what the recorded run saw) and counts, per role, the replies that
were empty or that the role's reader cannot use (the rules per role are `bench.analysis.replies.verdict`; a
foreign system's calls through the gateway endpoint are judged by `foreign_verdict`, since their formats are the
library's own, not the role's).
Replies of the offline stand-ins are built by code and counted as readable. With the counts it records, per role,
the server (scheme://host:port/path of the base URL, never a key) and the model id the server reported.

Past a share of unusable replies in any role (`BAD_SHARE`), or with nothing stored after a write, the run is
unhealthy: under `--strict` (the default of `heldout` and `grid --tag`) it stops with one line naming the role;
otherwise it warns on the first screen and in the result (`extras.health`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.analysis.replies import foreign_verdict, verdict
from bench.errors import UnhealthyRun
from bench.models.cache import ENDPOINT_CALLER
from bench.models.provider import default_base_url, is_standin, reply_text

BAD_SHARE = 0.5  # more than half of a role's replies unusable: the role did not work
MIN_CALLS = 4  # fewer replies than this are too few to call a role broken


@dataclass
class RoleHealth:
    calls: int = 0
    empty: int = 0
    unreadable: int = 0

    @property
    def bad(self) -> int:
        return self.empty + self.unreadable

    def broken(self) -> bool:
        return self.calls >= MIN_CALLS and self.bad > BAD_SHARE * self.calls


@dataclass
class RunHealth:
    """Counts of one run's replies per role, the servers that gave them, and facts stored (see the module doc)."""

    roles: dict[str, RoleHealth] = field(default_factory=dict)
    servers: dict[str, dict[str, str]] = field(default_factory=dict)
    facts_stored: int | None = None
    messages_written: int = 0
    #: (retrievals, empty ones, lines that change from run to run) a system counted itself (store.health of an mcp
    #: arm); None: it counts none
    retrievals: tuple[int, int, int] | None = None
    #: (retrievals compared with the first run's, how many differed, the first difference) for a system whose search
    #: a replay runs again (bench.run.retrievals); None: not compared
    replayed: tuple[int, int, str | None] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def watch(self, request: Any, result: Any) -> None:
        """The gateway's watcher: one served call (`CallRequest`, `CallResult`)."""
        role = request.purpose
        body = result.body if isinstance(result.body, Mapping) else {}
        standin = is_standin(request.provider)
        text = None if standin else reply_text(request.provider, body)
        with self._lock:
            counts = self.roles.setdefault(role, RoleHealth())
            counts.calls += 1
            if text is not None:
                outcome = (
                    foreign_verdict(text, _asked_json(request.body, body))
                    if getattr(request, "caller", "") == ENDPOINT_CALLER
                    else verdict(role, text)
                )
                counts.empty += outcome == "empty"
                counts.unreadable += outcome == "unreadable"
            if not standin and role not in self.servers:
                server = {
                    "provider": request.provider,
                    "base_url": request.target or default_base_url(request.provider),
                }
                reported = body.get("model")
                if reported:
                    server["model_reported"] = str(reported)
                self.servers[role] = server

    def merged(self, other: RunHealth) -> RunHealth:
        """Both watchers' counts and servers together (a result file: its ingestion's calls and its own k's)."""
        joined = RunHealth(
            facts_stored=self.facts_stored,
            messages_written=self.messages_written,
            retrievals=self.retrievals,
            replayed=self.replayed,
        )
        joined.absorb(self)
        joined.absorb(other)
        return joined

    def absorb(self, other: RunHealth) -> None:
        """Add another watcher's reply counts and servers to these (a resumed run: the parts done before it)."""
        with self._lock:
            for role, counts in other.roles.items():
                total = self.roles.setdefault(role, RoleHealth())
                total.calls += counts.calls
                total.empty += counts.empty
                total.unreadable += counts.unreadable
            for role, server in other.servers.items():
                self.servers.setdefault(role, server)

    def __getstate__(self) -> dict[str, Any]:
        """Kept in a resume sidecar (bench.run.resume) without its lock; a fresh lock on reading."""
        return {name: value for name, value in self.__dict__.items() if name != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def problems(self) -> list[str]:
        """One phrase per problem, naming the role; empty when the run is healthy."""
        found = [
            f"{role}: {c.bad} of {c.calls} replies unusable ({c.unreadable} unreadable, {c.empty} empty)"
            for role, c in sorted(self.roles.items())
            if c.broken()
        ]
        if self.facts_stored == 0 and self.messages_written > 0:
            found.append(f"store: 0 facts stored from {self.messages_written} messages written")
        if self.retrievals is not None:
            asked, empty, volatile = self.retrievals
            if asked >= MIN_CALLS and empty > BAD_SHARE * asked:
                found.append(f"retrieval: {empty} of {asked} retrievals came back empty")
            if volatile:
                found.append(f"retrieval: {volatile} retrieved lines carry a time or id that changes (no replay)")
        if self.replayed is not None and self.replayed[1]:
            compared, differing, first = self.replayed
            found.append(
                f"retrieval: {differing} of {compared} retrievals differ from the first run's, so their answers miss "
                f"the cache (first: {first}); a Python server may rank by its process's random hash seed: try "
                "PYTHONHASHSEED in the arm's settings.env"
            )
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "roles": {role: asdict(c) for role, c in sorted(self.roles.items())},
            "facts_stored": self.facts_stored,
            "messages_written": self.messages_written,
            **({"retrievals": list(self.retrievals)} if self.retrievals is not None else {}),
            **({"replayed": list(self.replayed[:2])} if self.replayed is not None and self.replayed[0] else {}),
            "threshold": {"bad_share": BAD_SHARE, "min_calls": MIN_CALLS},
            "problems": self.problems(),
        }


def _asked_json(request_body: Mapping[str, Any], reply_body: Mapping[str, Any]) -> bool:
    """Whether a foreign system's reply should be JSON: it asked for JSON, and the endpoint did not turn an emulated
    tool call's "no tool, just this text" branch back into plain text (translation `tool_reply_as_text`)."""
    translations = (reply_body.get("x_engram_bench") or {}).get("translations") or []
    return "response_format" in request_body and "tool_reply_as_text" not in translations


def stored_facts(store: Mapping[str, Any], pooled: bool) -> int | None:
    """Facts (or notes, turns) a system says it stored: its `stored` figure, summed over a pooled slice's parts."""
    parts = list(store.values()) if pooled else [store]
    counts = [part.get("stored") for part in parts if isinstance(part, Mapping)]
    numbers = [c for c in counts if isinstance(c, int)]
    return sum(numbers) if numbers and len(numbers) == len(counts) else None


def retrieval_counts(store: Mapping[str, Any], pooled: bool) -> tuple[int, int, int] | None:
    """(retrievals, empty ones, volatile lines) from the systems that count them in `store.health`, summed over a
    pooled slice's parts; None when the system counts none (its retrievals are not judged here)."""
    parts = list(store.values()) if pooled else [store]
    healths = [part.get("health") for part in parts if isinstance(part, Mapping)]
    counted = [h for h in healths if isinstance(h, Mapping) and isinstance(h.get("retrievals"), int)]
    if not counted:
        return None
    return (
        sum(h["retrievals"] for h in counted),
        sum(int(h.get("empty_retrievals") or 0) for h in counted),
        sum(int(h.get("volatile_hits") or 0) for h in counted),
    )


def check(health: RunHealth, strict: bool, where: str) -> list[str]:
    """Stop an unhealthy strict run with one line; return the problems (warnings) otherwise."""
    problems = health.problems()
    if problems and strict:
        raise UnhealthyRun(
            f"{where}: expected usable model replies, a non-empty store and retrievals that find something (--strict), found "
            + "; ".join(problems)
        )
    return problems
