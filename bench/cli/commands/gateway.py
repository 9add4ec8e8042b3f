"""`engram-bench gateway serve`: the gateway as a local OpenAI-compatible endpoint (bench.models.endpoint), in the foreground.

Point any program's OpenAI client at the printed base URL and ask for `engram-bench/<role>`: its calls share the
cache, strict replay, budget and ledger of the harness's own calls. Ctrl-C (or SIGTERM) stops it and prints what it
served.
"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from types import FrameType

import typer

from bench.errors import SpendNotConfirmed
from bench.models.endpoint import model_name, start_endpoint
from bench.models.gateway import check_mode
from bench.models.stacks import build_stack

gateway_app = typer.Typer(help="The gateway as a local OpenAI-compatible endpoint.", no_args_is_help=True)


@gateway_app.command("serve")
def serve_command(
    stack: str = typer.Option(..., "--stack", help="The stack whose model serves each role (stacks/<name>.toml)."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: any free port, printed)."),
    mode: str | None = typer.Option(
        None, "--mode", help="replay | record | live (default: live when the provider's key is set, else replay)."
    ),
    strict: bool = typer.Option(False, "--strict", help="Strict replay: any call the cache lacks is an error."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Local cache folder (default: cache/local/)."),
    assume_yes: bool = typer.Option(False, "--yes", help="Allow paid calls (a paid stack in live or record mode)."),
) -> None:
    """Serve /v1/chat/completions, /v1/embeddings and /v1/models on 127.0.0.1 until interrupted."""
    checked = check_mode(mode)
    built = build_stack(stack)
    if built.paid_providers and checked in ("live", "record") and not assume_yes:
        raise SpendNotConfirmed(
            f"--stack {stack}: {', '.join(built.paid_providers)} bill per call and --mode {checked} sends calls the "
            f"cache lacks; expected --yes to allow that, found none"
        )
    if not 0 <= port <= 65535:
        raise typer.BadParameter(f"expected a port 0..65535, found {port}", param_hint="--port")
    handle = start_endpoint(
        built, checked, port=port, strict=strict, cache_dir=cache_dir, run_id=f"gateway-serve-{stack}"
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        typer.echo(f"gateway endpoint: {handle.base_url} (stack {stack}; OPENAI_BASE_URL={handle.base_url})")
        for role, ref in built.refs.items():
            if role != "count_tokens":
                typer.echo(f"  {model_name(role):<26} -> {ref}")
        typer.echo(f"  {model_name('embed'):<26} -> local MiniLM (all-MiniLM-L6-v2)")
        typer.echo("Ctrl-C stops it.", err=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        report = handle.report()
        handle.stop()
    typer.echo(f"gateway endpoint stopped; served: {json.dumps(report, sort_keys=True)}")
    failure = handle.service.failure
    if failure is not None:
        # A client's mistake (a replay miss, an unknown model) was answered to that client as an error reply; the
        # endpoint itself did its job, so stopping it is not a failure of this command: say it, exit 0.
        typer.echo(f"note: the first error a client was answered with: {failure}", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(gateway_app, name="gateway")
