"""The gateway as a local OpenAI-compatible endpoint, for memory systems that run in their own process.

A foreign system (A-MEM, LangMem, Graphiti, any program with an OpenAI client) is pointed at `base_url` and asks
for the model `engram-bench/<role>` (`extract`, `decide`, `escalate`, `llm_decider`, `answer`, `judge`, and
`engram-bench/embed` for embeddings). Each chat call is served by the stack's model for that role through the same
gateway as in-process calls: the cache, strict replay, the budget and the ledger. Embeddings come from the local
MiniLM. Translations make a weaker server look like OpenAI to the system (`bench.models.endpoint.translate`).

    handle = start_endpoint("local", mode="record")      # or inside a run: start_endpoint(..., gateway=, hub=)
    os.environ["OPENAI_BASE_URL"] = handle.base_url       # http://127.0.0.1:<port>/v1
    ...
    handle.check()   # raises the first error that must stop the run (a replay miss names its key)
    handle.stop()

`engram-bench gateway serve --stack S [--port P] [--mode replay|record|live]` serves it in the foreground. A run of
an `http` arm starts one per conversation (`model_endpoint`, installed as `bench.systems.http_system`'s starter).
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from bench.errors import ConfigError
from bench.models.embeddings import shared_minilm
from bench.models.endpoint.server import EndpointServer
from bench.models.endpoint.service import EMBED_ROLE, MODEL_PREFIX, EndpointService, model_name
from bench.models.gateway import Gateway, check_mode
from bench.models.providers import Models
from bench.models.stacks import ModelRef, Stack, build_stack, load_stack_spec

if TYPE_CHECKING:
    from pathlib import Path

    from bench.models.gateway import Gateway, Mode
    from bench.models.providers import Models
    from bench.models.stacks import Stack
    from engram import Embedder

__all__ = [
    "EMBED_ROLE",
    "ENDPOINT_KEY",
    "MODEL_PREFIX",
    "EndpointContext",
    "EndpointEnv",
    "EndpointHandle",
    "model_endpoint",
    "model_name",
    "start_endpoint",
]

# What a system's OpenAI client sends as its key: the endpoint needs none, and clients refuse to start without one.
ENDPOINT_KEY = "engram-bench-endpoint-needs-no-key"
LOOPBACK = "127.0.0.1"


class EndpointHandle:
    """A running endpoint: `base_url` (…/v1), `check()`, `report()`, `stop()` (also a context manager)."""

    def __init__(self, server: EndpointServer, service: EndpointService, owned: list[Any]) -> None:
        self._server = server
        self.service = service
        self._owned = owned  # the gateway and model hub this handle made, closed with it
        self._stopped = False
        self.base_url = f"http://{LOOPBACK}:{server.port}/v1"

    @property
    def port(self) -> int:
        return self._server.port

    def env(self) -> dict[str, str]:
        """The environment a system needs to find the endpoint."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_BASE": self.base_url, "OPENAI_API_KEY": ENDPOINT_KEY}

    def check(self) -> None:
        """Raise the first error that must stop the run (replay miss, refused spend or request, unknown model,
        chat on the offline stack), even when the system swallowed the error reply it got."""
        failure = self.service.failure
        if failure is not None:
            raise type(failure)(str(failure))

    def report(self) -> dict[str, Any]:
        return self.service.report()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.stop()
        for thing in reversed(self._owned):
            thing.close()

    def __enter__(self) -> EndpointHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _bound(service: EndpointService, port: int) -> EndpointServer:
    """The server listening on 127.0.0.1:`port`; a port another program holds is one line, not a traceback."""
    try:
        return EndpointServer(service, LOOPBACK, port)
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
            raise
        found = "in use" if exc.errno == errno.EADDRINUSE else "refused to this user"
        raise ConfigError(
            f"--port {port}: expected a free port on {LOOPBACK}, found it {found} ({exc.strerror}); "
            "pick another, or --port 0 for any free one"
        ) from None


def start_endpoint(
    stack: str | Stack,
    mode: Mode | None = None,
    *,
    port: int = 0,
    gateway: Gateway | None = None,
    hub: Models | None = None,
    models: Mapping[str, str] | None = None,
    embedder: Callable[[], Embedder] | None = None,
    strict: bool = False,
    cache_dir: Path | None = None,
    subsets: list[Path] | None = None,
    run_id: str = "gateway-endpoint",
) -> EndpointHandle:
    """Serve `stack` on 127.0.0.1:`port` (0: a free port) in a background thread.

    Inside a run, pass the run's `gateway` and `hub` (its keys then land in the run's key list and its models in the
    result). Alone, the endpoint opens its own gateway (`mode`, `strict`, `cache_dir`, `subsets` as for a run) and
    closes it on `stop()`. `models` are an arm's role overrides (role -> provider/model); `embedder` builds the
    embedder on the first embeddings request (default: the process-wide MiniLM)."""
    check_mode(mode)
    if gateway is not None and (mode is not None or strict):
        raise ConfigError("start_endpoint: mode and strict belong to the gateway; pass them or a gateway, not both")
    built = build_stack(stack, overrides=models) if isinstance(stack, str) else stack
    owned: list[Any] = []
    try:
        if gateway is None:
            gateway = Gateway.from_env(mode=mode, strict=strict, run_id=run_id, cache_dir=cache_dir, subsets=subsets)
            owned.append(gateway)
        factory = embedder or shared_minilm
        if hub is None:
            hub = Models.for_stack(built.name, built.models, gateway, factory)
            owned.append(hub)
        server = _bound(EndpointService(built, hub, factory), port)
    except BaseException:
        for thing in reversed(owned):
            thing.close()
        raise
    server.start()
    return EndpointHandle(server, server.service, owned)


class EndpointEnv(dict[str, str]):
    """The environment an out-of-process system gets for its run (OPENAI_BASE_URL, ...), with the endpoint's
    `check()` and `report()` beside it for the harness."""

    def __init__(self, handle: EndpointHandle) -> None:
        super().__init__(handle.env())
        self.handle = handle

    def check(self) -> None:
        self.handle.check()

    def report(self) -> dict[str, Any]:
        return self.handle.report()


class EndpointContext(Protocol):
    """What the endpoint needs of one conversation's system context (`bench.systems.base.SystemContext` is one): the
    stack's name and models per role, the run's gateway and model hub, and the shared embedder. A protocol, so the
    models layer never imports the systems layer above it."""

    @property
    def stack(self) -> str: ...

    @property
    def models(self) -> Mapping[str, str]: ...

    @property
    def gateway(self) -> Gateway: ...

    @property
    def hub(self) -> Models: ...

    def get_embedder(self) -> Embedder: ...


@contextlib.contextmanager
def model_endpoint(context: EndpointContext) -> Iterator[EndpointEnv]:
    """The endpoint for one conversation of an out-of-process system: the run's gateway, stack and model hub."""
    spec = load_stack_spec(context.stack)
    refs = {role: ModelRef.parse(model, f"models.{role}") for role, model in context.models.items()}
    handle = start_endpoint(
        Stack(spec=spec, refs=refs), gateway=context.gateway, hub=context.hub, embedder=context.get_embedder
    )
    try:
        yield EndpointEnv(handle)
    finally:
        handle.stop()
