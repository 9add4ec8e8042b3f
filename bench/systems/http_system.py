"""`system = "http"`: a memory system in another process, spoken to through the memory protocol.

docs/memory-protocol.md is the contract; `bench.systems.wire` checks every reply against it. The system is reached
at an arm's `url`, or started from its `command` (or an adapter's, `adapter = "NAME"`) once per conversation: the
harness picks the port, waits for `/health`, and stops the process in close(), which the runner calls even when
the run fails.

Each conversation is one namespace, reset before its first write. Before it, the isolation canary writes one
marker message under a namespace of its own; a retrieval that returns the marker or the canary's id stops the unit
(`IsolationLeak`). The canary's words are derived from the conversation name, not drawn at random, so the model
calls a system makes to store it are the same request on every run and replay from the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import httpx

from bench.errors import ConfigError, IsolationLeak, SystemFailed
from bench.models.endpoint import model_endpoint
from bench.systems import wire
from bench.systems.adapters import Adapter, load_adapter
from bench.systems.base import (
    AuditFact,
    RetrievedLines,
    Setting,
    System,
    SystemContext,
    WriteUsage,
    register_system,
)
from bench.systems.handoff import handoff_env
from bench.systems.process import ServerProcess, command_words, env_table, expand, free_port, project_python

if TYPE_CHECKING:
    from bench.data.slices import SliceMessage, SliceQuestion

DEFAULT_TIMEOUT_S = 120.0
CANARY_NAMESPACE_PREFIX = "canary-"
DATA_DIR_NAME = "system-data"
EXIT_WAIT_S = 2.0  # how long a lost connection waits for the server process to end, to say how it ended
PROBE_K = 10  # lines the canary probe asks for

#: Who starts a model endpoint for a run's out-of-process system: a context manager over the SystemContext that
#: yields the environment the system needs (OPENAI_BASE_URL, OPENAI_API_KEY) and stops the endpoint on exit. The
#: gateway endpoint (`bench.models.endpoint.model_endpoint`) is the default; `set_model_endpoint` replaces it (a test's
#: fake). The mapping it yields may also carry `check()` (raise the endpoint's first run-stopping error, e.g. a replay
#: miss the system swallowed) and `report()` (what it served, for the result).
ModelEndpoint = Callable[[SystemContext], AbstractContextManager[Mapping[str, str]]]
_model_endpoint: ModelEndpoint | None = None


def set_model_endpoint(starter: ModelEndpoint | None) -> None:
    global _model_endpoint
    _model_endpoint = starter


@dataclass(frozen=True)
class Canary:
    """The isolation canary of one conversation: a message nobody in any dataset says, under its own namespace."""

    namespace: str
    message_id: str
    marker: str
    text: str

    @classmethod
    def for_conversation(cls, conversation: str) -> Canary:
        digest = hashlib.sha256(f"engram-bench canary {conversation}".encode()).hexdigest()
        marker = f"Zorvane{digest[:8]}"
        return cls(
            namespace=f"{CANARY_NAMESPACE_PREFIX}{digest[:12]}",
            message_id=f"canary-{digest[:12]}",
            marker=marker,
            text=f"My pet tortoise is called {marker} and he lives in my greenhouse.",
        )

    @property
    def question(self) -> str:
        """The probe: a question only the canary's message answers, asked in the conversation's own namespace."""
        return "What is the name of the pet tortoise that lives in the greenhouse?"

    def leaked_in(self, body: Any) -> bool:
        """Whether a reply names the canary anywhere (a line's text or a source id)."""
        text = json.dumps(body, ensure_ascii=False)
        return self.marker.lower() in text.lower() or self.message_id in text


class ProtocolClient:
    """Requests to one memory-protocol server; every failure is a SystemFailed naming `label` and the request."""

    def __init__(
        self,
        url: str,
        label: str,
        timeout_s: float,
        process: ServerProcess | None = None,
        after: Callable[[], None] | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.label = label
        self.timeout_s = timeout_s
        self.process = process
        self.after = after  # runs after every request, also a failed one: the model endpoint's check
        self._http = httpx.Client(timeout=timeout_s)

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None, what: str = "") -> Any:
        try:
            return self._request(method, path, body, what)
        finally:
            # A run-stopping error of the model endpoint (a replay miss names its key) wins over whatever the
            # system made of it: a system may swallow a failed model call and answer as if all went well.
            if self.after is not None:
                self.after()

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None, what: str) -> Any:
        where = f"{self.label}: {method} {path}{what}"
        try:
            response = self._http.request(method, self.url + path, json=body)
        except httpx.TimeoutException:
            raise SystemFailed(f"{where}: timed out, no answer within timeout_s={self.timeout_s:g} s") from None
        except httpx.ConnectError as exc:
            raise SystemFailed(f"{where}: could not connect to {self.url} ({self._why(exc)})") from None
        except httpx.TransportError as exc:
            raise SystemFailed(f"{where}: lost the connection to {self.url} ({self._why(exc)})") from None
        try:
            data = response.json()
        except ValueError:
            data = None
        if response.status_code >= 400:
            said = data.get("error") if isinstance(data, dict) else None
            text = str(said) if said else (response.text.strip().splitlines() or ["(empty body)"])[0][:200]
            raise SystemFailed(f"{where}: answered HTTP {response.status_code}: {text}")
        if data is None:
            raise SystemFailed(f"{where}: expected a JSON reply, found {response.text[:80]!r}")
        return data

    def _why(self, exc: Exception) -> str:
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.proc.wait(EXIT_WAIT_S)  # a crashing server drops the connection a moment before it ends
            if self.process.exited() is not None:
                return self.process.describe_exit()
        return f"{type(exc).__name__}: {exc}"

    def health(self) -> wire.Identity:
        return wire.read_health(self.call("GET", "/health"), f"{self.label}: GET /health")

    def reset(self, namespace: str) -> None:
        wire.read_reset(self.call("POST", "/reset", {"namespace": namespace}), f"{self.label}: POST /reset")

    def close(self) -> None:
        self._http.close()


def message_body(namespace: str, message: SliceMessage) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "id": message.id,
        "speaker": message.speaker,
        "date": message.session_date,
        "timestamp": message.timestamp.isoformat(),
        "text": message.text,
    }


@register_system("http")
class HttpSystem(System):
    """A memory system behind the HTTP memory protocol (docs/memory-protocol.md)."""

    SETTINGS: ClassVar[tuple[Setting, ...]] = (
        Setting("url", (str, type(None)), None, "the base URL of a running protocol server"),
        Setting("command", (str, list, type(None)), None, "a command that starts a protocol server ({port}...)"),
        Setting("adapter", (str, type(None)), None, "an adapter folder systems/<name>/ to start"),
        Setting("timeout_s", (int, float), DEFAULT_TIMEOUT_S, "the longest one request may take"),
        Setting("start_timeout_s", (int, float), DEFAULT_TIMEOUT_S, "the longest the server may take to start"),
        Setting("canary", bool, True, "write the isolation canary and check every retrieval for it"),
        Setting("prefix_stable", bool, False, "the lines at a small k are the first lines at a larger k"),
        Setting("env", dict, {}, "environment variables for a started server ({port}, {data_dir}, {python}, {dir})"),
    )
    PREFIX_STABLE = False
    REPLAY_CHECKED = True

    def __init__(self, settings: Mapping[str, Any], context: SystemContext) -> None:
        super().__init__(settings, context)
        self.PREFIX_STABLE = bool(settings["prefix_stable"])  # type: ignore[misc]
        self.namespace = context.conversation
        self.adapter: Adapter | None = load_adapter(settings["adapter"]) if settings["adapter"] else None
        self.label = self._label()
        self._written: dict[str, str] = {}
        self._last: SliceMessage | None = None
        self._stack = contextlib.ExitStack()
        self._endpoint: Mapping[str, str] = {}
        self.canary = Canary.for_conversation(context.conversation) if settings["canary"] else None
        try:
            self.client = self._connect(context)
            self.identity = self.client.health()
            self._check_identity()
            self.client.reset(self.namespace)
            if self.canary is not None:
                self._plant_canary(self.canary)
        except BaseException:
            self._stack.close()
            raise

    # -- start-up ----------------------------------------------------------------------------------------------

    def _label(self) -> str:
        if self.adapter is not None:
            return f"system {self.adapter.name!r} (adapter)"
        if self.settings["url"]:
            return f"system 'http' at {self.settings['url']}"
        words = command_words(self.settings["command"], "settings.command")
        return f"system 'http' ({' '.join(Path(w).name for w in words[:2])})"

    def _connect(self, context: SystemContext) -> ProtocolClient:
        timeout = float(self.settings["timeout_s"])
        if self.settings["url"]:
            client = ProtocolClient(self.settings["url"], self.label, timeout)
            self._stack.callback(client.close)
            return client
        self._endpoint = self._stack.enter_context(endpoint_env(context))
        env = dict(self._endpoint)
        if self.adapter is not None and self.adapter.environment == "project":
            env.update(handoff_env(context))
        process, url = start_server(
            self._command(),
            label=self.label,
            run_dir=context.run_dir,
            env=env,
            cwd=self.adapter.folder if self.adapter else None,
            python=self._python(),
            folder=self._folder(),
            env_setting=self.settings["env"],
        )
        self._stack.callback(process.stop)
        client = ProtocolClient(url, self.label, timeout, process, after=getattr(self._endpoint, "check", None))
        self._stack.callback(client.close)
        start_timeout = float(self.settings["start_timeout_s"])
        process.wait_ready(lambda: client.call("GET", "/health"), start_timeout)
        return client

    def _command(self) -> list[str]:
        if self.adapter is not None:
            reason = self.adapter.not_runnable_reason()
            if self.adapter.protocol == "mcp":
                reason = f"it is an MCP server: run it with its arm, arms/{self.adapter.name}.toml (system = 'mcp')"
            if reason is not None:
                raise ConfigError(f"settings.adapter: {self.adapter.name!r} cannot run here: {reason}")
            return list(self.adapter.command)
        return command_words(self.settings["command"], "settings.command")

    def _python(self) -> str:
        return str(self.adapter.python) if self.adapter is not None else project_python()

    def _folder(self) -> str:
        return str(self.adapter.folder) if self.adapter is not None else str(Path.cwd())

    def _check_identity(self) -> None:
        """An adapter's /health must name the library its manifest names, at the version its environment holds."""
        if self.adapter is None:
            return
        if self.identity.library != self.adapter.library:
            raise SystemFailed(
                f"{self.label}: GET /health: system.library: expected {self.adapter.library!r} (its adapter.toml), "
                f"found {self.identity.library!r}"
            )
        installed = self.adapter.installed_version()
        if installed is None:
            raise SystemFailed(
                f"{self.label}: library {self.adapter.library!r}: expected it installed in {self.adapter.python}, "
                "found it missing (engram-bench systems install " + self.adapter.name + ")"
            )
        if self.identity.version != installed:
            raise SystemFailed(
                f"{self.label}: GET /health: system.version: expected {installed} (installed in its environment), "
                f"found {self.identity.version!r}"
            )

    def _plant_canary(self, canary: Canary) -> None:
        self.client.reset(canary.namespace)
        body = {
            "namespace": canary.namespace,
            "id": canary.message_id,
            "speaker": "Canary",
            "date": self._canary_date(),
            "timestamp": "2000-01-01T00:00:00",
            "text": canary.text,
        }
        reply = wire.read_write(
            self.client.call("POST", "/write", body, " (isolation canary)"), f"{self.label}: canary"
        )
        self._note_calls(reply.usage)

    @staticmethod
    def _canary_date() -> str:
        return "12:00 pm on 1 January, 2000"

    # -- the System interface ----------------------------------------------------------------------------------

    def write(self, message: SliceMessage) -> WriteUsage:
        what = f" of message {message.id}"
        body = self.client.call("POST", "/write", message_body(self.namespace, message), what)
        reply = wire.read_write(body, f"{self.label}: POST /write{what}")
        self._written[message.id] = message.text
        self._last = message
        self._note_calls(reply.usage)
        return usage_of(reply.usage, reply.stored)

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        what = f" for question {question.id}"
        body = self.client.call("POST", "/retrieve", self.retrieve_body(question, k), what)
        self.check_canary(body, question)
        reply = wire.read_retrieve(body, f"{self.label}: POST /retrieve{what}", k, self._written)
        self._note_calls(reply.usage)
        return lines_of(reply)

    def _note_calls(self, usage: wire.Usage) -> None:
        note = getattr(self.context.gateway, "note_external", None)
        if note is not None and (usage.cache_keys or usage.cache_hits or usage.cache_misses):
            note(usage.cache_keys, usage.cache_hits, usage.cache_misses)

    def retrieve_body(self, question: SliceQuestion, k: int | None) -> dict[str, Any]:
        return self.retrieve_body_for(question.question, k)

    def retrieve_body_for(self, question: str, k: int | None) -> dict[str, Any]:
        last = self._last
        return {
            "namespace": self.namespace,
            "question": question,
            "k": k,
            "as_of": last.session_date if last else None,
            "as_of_timestamp": last.timestamp.isoformat() if last else None,
        }

    def before_final_questions(self) -> None:
        """The canary probe: ask, in this conversation's namespace, the one question the canary answers. Ordinary
        questions rarely rank a stray marker high enough to show it; this one would."""
        if self.canary is None:
            return
        body = {**self.retrieve_body_for(self.canary.question, PROBE_K), "namespace": self.namespace}
        self.check_canary(self.client.call("POST", "/retrieve", body, " (isolation canary probe)"), "the canary probe")

    def check_canary(self, body: Any, question: SliceQuestion | str) -> None:
        asked = question if isinstance(question, str) else f"question {question.id}"
        if self.canary is not None and self.canary.leaked_in(body):
            raise IsolationLeak(
                f"{self.label}: isolation canary leaked: retrieving for {asked} in namespace "
                f"{self.namespace!r} returned the marker written only under namespace {self.canary.namespace!r}"
            )

    def facts_for_audit(self) -> list[AuditFact]:
        """The optional /facts: a system that lists what it stored gets the update-set scoring; 404 = it does not."""
        try:
            body = self.client.call("POST", "/facts", {"namespace": self.namespace})
        except SystemFailed as exc:
            if "answered HTTP 404" in str(exc):
                return []
            raise
        facts = wire.read_facts(body, f"{self.label}: POST /facts", self._written)
        audit = [
            AuditFact(
                fact_id=f["id"],
                text=f["text"],
                source_message_id=f["source"],
                active=f["active"],
                closed_reason=f["closed_reason"],
                closed_by=f["closed_by"],
            )
            for f in facts
        ]
        return sorted(audit, key=lambda f: (f.source_message_id or "", f.fact_id))

    def stats(self) -> dict[str, Any]:
        body = self.client.call("POST", "/stats", {"namespace": self.namespace})
        return store_stats(wire.read_stats(body, f"{self.label}: POST /stats"))

    def describe(self) -> dict[str, Any]:
        described = {
            **super().describe(),
            "protocol": wire.PROTOCOL,
            "memory_system": identity_record(self.identity),
            "isolation_canary": self.canary is not None,
        }
        report = getattr(self._endpoint, "report", None)
        if report is not None:
            described["model_endpoint"] = report()  # calls per role, translations and errors, by name
        if self.adapter is not None:
            described["adapter"] = {
                "name": self.adapter.name,
                "environment": self.adapter.environment,
                "roles": list(self.adapter.roles),
                "config": self.adapter.config,
            }
        return described

    def close(self) -> None:
        if self.canary is not None:
            with contextlib.suppress(SystemFailed):
                self.client.reset(self.canary.namespace)
        self._stack.close()

    @classmethod
    def validate_settings(cls, settings: Mapping[str, Any], where: str = "settings") -> dict[str, Any]:
        resolved = super().validate_settings(settings, where)
        given = [key for key in ("url", "command", "adapter") if resolved[key]]
        if len(given) != 1:
            raise ConfigError(
                f"{where}: expected exactly one of url, command or adapter for system 'http', found "
                f"{', '.join(given) if given else 'none'}"
            )
        for key in ("timeout_s", "start_timeout_s"):
            if resolved[key] <= 0:
                raise ConfigError(f"{where}.{key}: expected a number of seconds > 0, found {resolved[key]!r}")
        if resolved["url"] and not str(resolved["url"]).startswith(("http://", "https://")):
            raise ConfigError(f"{where}.url: expected an http:// or https:// URL, found {resolved['url']!r}")
        if resolved["command"]:
            command_words(resolved["command"], f"{where}.command")
        return resolved


@contextlib.contextmanager
def endpoint_env(context: SystemContext) -> Iterator[Mapping[str, str]]:
    starter = _model_endpoint
    if starter is None:
        starter = model_endpoint
    with starter(context) as env:
        yield env


def start_server(
    words: list[str],
    *,
    label: str,
    run_dir: Path,
    env: Mapping[str, str],
    cwd: Path | None,
    python: str,
    folder: str,
    env_setting: Mapping[str, Any] | None = None,
) -> tuple[ServerProcess, str]:
    """Start a protocol server on a free port with its data folder under the run's store folder."""
    port = free_port()
    data_dir = (run_dir / DATA_DIR_NAME).resolve()  # absolute: the server's cwd is not the harness's
    data_dir.mkdir(parents=True, exist_ok=True)
    values = {"port": str(port), "python": python, "dir": folder, "data_dir": str(data_dir)}
    argv = expand(words, values, "settings.command")
    full_env = {
        **env,
        "ENGRAM_MEMORY_PORT": str(port),
        "ENGRAM_MEMORY_DATA_DIR": str(data_dir),
        **env_table(env_setting or {}, values, "settings.env"),
    }
    process = ServerProcess(argv, label=label, log_dir=run_dir, env=full_env, cwd=cwd)
    return process, f"http://127.0.0.1:{port}"


def usage_of(usage: wire.Usage, stored: int | None) -> WriteUsage:
    """The protocol's usage as the runner's WriteUsage: a foreign system's model calls all count as extraction
    (the harness cannot tell its phases apart)."""
    return WriteUsage(
        extract_cost_usd=usage.cost_usd or 0.0,
        extract_ms=usage.latency_ms or 0.0,
        facts=stored or 0,
        calls=usage.calls or 0,
    )


def lines_of(reply: wire.RetrieveReply) -> RetrievedLines:
    scores = [line.score for line in reply.lines]
    details = tuple({"score": s} for s in scores) if any(s is not None for s in scores) else ()
    return RetrievedLines(
        lines=tuple(line.text for line in reply.lines),
        sources=tuple(line.sources for line in reply.lines),
        cost_usd=reply.usage.cost_usd or 0.0,
        latency_ms=reply.usage.latency_ms or 0.0,
        notes={"system_retrieved_tokens": reply.retrieved_tokens},
        details=details,
    )


def store_stats(stats: Mapping[str, Any]) -> dict[str, Any]:
    """A foreign store as the runner's stats: it reports how many items it holds; closing, reopening and
    escalating are engram's notions and stay at zero."""
    return {
        "stored": stats["stored"],
        "active": stats["stored"],
        "tentative": 0,
        "closes_by_reason": {},
        "reopens": 0,
        "escalations": 0,
        "unit": stats["unit"],
        # writes that went wrong without failing (a swallowed model error), counted by the adapter
        **({"health": dict(stats["health"])} if stats.get("health") else {}),
    }


def identity_record(identity: wire.Identity) -> dict[str, Any]:
    return {
        "name": identity.name,
        "library": identity.library,
        "version": identity.version,
        "store": identity.store,
        "config": dict(identity.config),
    }
