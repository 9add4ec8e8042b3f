"""What the gateway endpoint answers, independent of HTTP: model names to stack roles, chat completions through the
gateway (cache, strict replay, budget, ledger), embeddings from the local embedder, OpenAI-shaped errors.

A foreign system asks for `engram-bench/<role>`; the stack's model for that role answers. Errors the system must see
are OpenAI-shaped (`{"error": {"message", "type", "param", "code"}}`). Some of them must also stop the run, because
a system may swallow a failed call and carry on with an empty store: a replay miss, a refused spend, a request the
provider refused, a model name the stack does not know, a chat call on the offline stack. The first of those is kept
(`failure`) and the harness raises it, naming the missing key, after the system's request returns.
"""

from __future__ import annotations

import base64
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.errors import BenchError, BudgetExceeded, CacheMiss, ConfigError, ProviderError
from bench.models.cache import ENDPOINT_CALLER
from bench.models.endpoint.translate import Capabilities, Plan, translate_reply, translate_request, translations_of
from bench.models.provider import is_standin
from bench.models.stacks import ROLES
from engram import LLMError

if TYPE_CHECKING:
    from bench.models.providers import Models
    from bench.models.stacks import Stack
    from engram import Embedder

MODEL_PREFIX = "engram-bench/"
EMBED_ROLE = "embed"
CHAT_ROLES = tuple(role for role in ROLES if role != "count_tokens")
# Fields a chat call to a provider that is not OpenAI-compatible may carry (it goes through engram's LLM protocol).
PLAIN_CHAT_FIELDS = frozenset({"model", "messages", "max_tokens", "max_completion_tokens", "temperature"})
DEFAULT_PLAIN_MAX_TOKENS = 1024


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: status, JSON body, and whether the client should retry (OpenAI's SDKs read the header)."""

    status: int
    body: Any
    retry: bool = True


class EndpointError(Exception):
    """A request the endpoint answers with an OpenAI-shaped error; `fatal` ones also stop the run."""

    def __init__(
        self, status: int, message: str, code: str, *, param: str | None = None, fatal: BenchError | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.fatal = fatal

    def reply(self) -> Reply:
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        body = {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}
        return Reply(self.status, body, retry=False)


def model_name(role: str) -> str:
    return f"{MODEL_PREFIX}{role}"


class EndpointService:
    """The endpoint's answers for one stack, on one run's model hub (its gateway and its record of models used)."""

    def __init__(self, stack: Stack, hub: Models, embedder: Callable[[], Embedder]) -> None:
        self.stack = stack
        self.hub = hub
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()
        self.failure: BenchError | None = None
        self.calls: dict[str, Counter[str]] = {}
        self.translations: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.embedded_texts = 0

    # -- names -------------------------------------------------------------------------------------------------

    def known_models(self) -> list[str]:
        return [model_name(role) for role in (*CHAT_ROLES, EMBED_ROLE)]

    def models_reply(self) -> Reply:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "engram-bench"} for name in self.known_models()
        ]
        return Reply(200, {"object": "list", "data": data})

    def model_reply(self, name: str) -> Reply:
        if name not in self.known_models():
            return self._unknown_model(name, fatal=False).reply()
        return Reply(200, {"id": name, "object": "model", "created": 0, "owned_by": "engram-bench"})

    def _role(self, body: Mapping[str, Any], allowed: tuple[str, ...]) -> str:
        name = body.get("model")
        role = name[len(MODEL_PREFIX) :] if isinstance(name, str) and name.startswith(MODEL_PREFIX) else None
        if role not in allowed:
            if role in (*CHAT_ROLES, EMBED_ROLE):
                what = "an embedding model" if role == EMBED_ROLE else "a chat model"
                raise EndpointError(
                    400,
                    f"model {name!r} is {what}; this endpoint takes {', '.join(model_name(r) for r in allowed)}",
                    "model_not_found",
                    param="model",
                )
            raise self._unknown_model(name, fatal=True)
        assert role is not None
        return role

    def _unknown_model(self, name: Any, *, fatal: bool) -> EndpointError:
        message = (
            f"model {name!r} is not served here; expected one of {', '.join(self.known_models())} "
            f"(each maps to the {self.stack.name!r} stack's model for that role)"
        )
        error = ConfigError(f"gateway endpoint: a system asked for {message}") if fatal else None
        return EndpointError(400, message, "model_not_found", param="model", fatal=error)

    # -- the door ----------------------------------------------------------------------------------------------

    def answer(self, what: str, body: Any) -> Reply:
        """Answer one POST (`chat` or `embeddings`); every failure becomes an OpenAI-shaped error."""
        try:
            if not isinstance(body, dict):
                raise EndpointError(400, "expected a JSON object as the request body", "invalid_body")
            return self.chat(body) if what == "chat" else self.embeddings(body)
        except EndpointError as error:
            self._note_error(error)
            return error.reply()

    def _note_error(self, error: EndpointError) -> None:
        with self._lock:
            self.errors[error.code] += 1
            if error.fatal is not None and self.failure is None:
                self.failure = error.fatal

    # -- chat --------------------------------------------------------------------------------------------------

    def chat(self, body: dict[str, Any]) -> Reply:
        role = self._role(body, CHAT_ROLES)
        if body.get("stream"):
            raise EndpointError(400, "stream: this endpoint answers whole replies only; send stream=false", "stream")
        ref = self.stack.ref(role)
        if is_standin(ref.provider):
            message = (
                f"the {self.stack.name!r} stack serves {model_name(role)} with the offline stand-in {ref}, which has "
                f"no stand-in for a foreign system's prompts; use a stack with a model (e.g. --stack local), or a "
                f"cache that holds these calls"
            )
            raise EndpointError(
                400, message, "no_standin", param="model", fatal=ConfigError(f"gateway endpoint: {message}")
            )
        try:
            llm = self.hub.chat(role)
        except ConfigError as exc:
            raise EndpointError(400, f"{model_name(role)} is served by {ref}: {exc}", "not_a_chat_model") from None
        # local import: the openai SDK is the run extra, which the analysis-only install lacks
        from bench.models.providers.openai.client import OpenAIChat

        if isinstance(llm, OpenAIChat):
            return self._openai_chat(llm, role, ref.model, body)
        return self._plain_chat(llm, role, ref.model, body)

    def _openai_chat(self, llm: Any, role: str, model: str, body: dict[str, Any]) -> Reply:
        caps = Capabilities.of(self.stack.settings(self.stack.ref(role).provider))
        try:
            plan = translate_request({**body, "model": model}, caps)
        except ValueError as exc:
            raise EndpointError(400, str(exc), "invalid_tools", param="tool_choice") from None
        result = self._through_gateway(
            lambda: llm.chat_here(plan.body, role, finish=_finisher(plan, caps), caller=ENDPOINT_CALLER)
        )
        self._count(role, result.cached, translations_of(result.body))
        return Reply(200, result.body)

    def _plain_chat(self, llm: Any, role: str, model: str, body: dict[str, Any]) -> Reply:
        extra = sorted(set(body) - PLAIN_CHAT_FIELDS)
        if extra:
            raise EndpointError(
                400,
                f"{extra[0]}: {model_name(role)} is served by {self.stack.ref(role)}, which this endpoint reaches "
                f"through plain chat only (model, messages, max_tokens, temperature)",
                "unsupported_field",
                param=extra[0],
            )
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") in ("system", "developer"))
        rest = [
            {"role": m.get("role"), "content": m.get("content")}
            for m in messages
            if m.get("role") in ("user", "assistant")
        ]
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_PLAIN_MAX_TOKENS)
        completion = self._through_gateway(
            lambda: llm.complete(
                role=role,
                model=model,
                system=system or None,
                messages=rest,
                max_tokens=max_tokens,
                temperature=body.get("temperature"),
            )
        )
        self._count(role, completion.cached, [])
        reply = {
            "id": "chatcmpl-engram-bench",
            "object": "chat.completion",
            "created": 0,
            "model": completion.model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": completion.text}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": completion.input_tokens,
                "completion_tokens": completion.output_tokens,
                "total_tokens": completion.input_tokens + completion.output_tokens,
            },
        }
        return Reply(200, reply)

    def _through_gateway(self, call: Callable[[], Any]) -> Any:
        """Run one gateway call; its errors become what the system sees, and those that stop a run are kept."""
        try:
            return call()
        except CacheMiss as exc:
            raise EndpointError(400, str(exc), "cache_miss", fatal=exc) from None
        except BudgetExceeded as exc:
            raise EndpointError(402, str(exc), "budget_exceeded", fatal=exc) from None
        except ProviderError as exc:
            if isinstance(exc, LLMError):  # unavailable after the gateway's own retries: the system decides
                raise EndpointError(503, str(exc), "upstream_unavailable") from None
            raise EndpointError(400, str(exc), "upstream_refused", fatal=exc) from None
        except BenchError as exc:
            raise EndpointError(400, str(exc), "refused", fatal=exc) from None

    def _count(self, role: str, cached: bool, translations: list[str]) -> None:
        with self._lock:
            self.calls.setdefault(role, Counter())["cached" if cached else "sent"] += 1
            self.translations.update(translations)

    # -- embeddings --------------------------------------------------------------------------------------------

    def embeddings(self, body: dict[str, Any]) -> Reply:
        self._role(body, (EMBED_ROLE,))
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise EndpointError(
                400,
                "input: expected a string or a non-empty list of strings (token arrays are not taken)",
                "invalid_input",
                param="input",
            )
        encoding = body.get("encoding_format") or "float"
        if encoding not in ("float", "base64"):
            raise EndpointError(
                400,
                f"encoding_format: expected float or base64, found {encoding!r}",
                "invalid_encoding",
                param="encoding_format",
            )
        embedder = self.embedder()
        dimensions = body.get("dimensions")
        if dimensions is not None and dimensions != embedder.dim:
            raise EndpointError(
                400,
                f"dimensions: {embedder.name} gives {embedder.dim}, found a request for {dimensions!r}",
                "invalid_dimensions",
                param="dimensions",
            )
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        data = [
            {"object": "embedding", "index": i, "embedding": _encoded(row, encoding)} for i, row in enumerate(vectors)
        ]
        tokens = sum(len(t.split()) for t in texts)  # whitespace words: an approximation, stated here
        with self._lock:
            self.embedded_texts += len(texts)
            self.calls.setdefault(EMBED_ROLE, Counter())["local"] += 1
        return Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": embedder.name,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = self._embedder_factory()
            return self._embedder

    # -- reporting ---------------------------------------------------------------------------------------------

    def report(self) -> dict[str, Any]:
        """What the endpoint served: calls per role (cached / sent / local), translations and errors by name."""
        with self._lock:
            return {
                "calls": {role: dict(sorted(c.items())) for role, c in sorted(self.calls.items())},
                "embedded_texts": self.embedded_texts,
                "translations": dict(sorted(self.translations.items())),
                "errors": dict(sorted(self.errors.items())),
            }


def _finisher(plan: Plan, caps: Capabilities) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def finish(body: dict[str, Any]) -> dict[str, Any]:
        return translate_reply(body, plan, caps)

    return finish


def _encoded(row: np.ndarray, encoding: str) -> Any:
    if encoding == "base64":
        return base64.b64encode(row.astype("<f4").tobytes()).decode("ascii")
    return [float(x) for x in row]
