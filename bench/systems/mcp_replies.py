"""What an MCP search tool returned, as hits: each hit one line of text for the answerer, and the id it names.

Servers answer in three shapes, read in this order:
- `structuredContent`, or JSON inside the text (a list, or an object holding a list under `results`, `memories`,
  `entities`...; FastMCP wraps a return value as `{"result": ...}`, and a tool that returns its JSON as a string
  arrives as `{"result": "[...]"}`, read as that JSON): one hit per item, its text from the usual keys
  (`text`, `memory`, `content`...) or an entity's `observations`. An item whose text is null is no hit. A list whose
  first item is a one-line header before other items ("Results for the query '...'", mcp-server-qdrant's) has it
  dropped, as a plain-text reply's header is: it is no memory, and it would echo the question to the answerer.
- Plain text: one block split into hits. Numbered items (`1. ...`) or markdown headings each start a hit (what
  comes before the first is a header); when the reply ends with a metadata line (each hit closed by its metadata,
  mcp-memory-service's `Hash:` and `Created:`), only such an item after the previous hit's metadata does, so a
  stored turn's own numbered list or heading (a LongMemEval assistant's answer) stays in its hit; otherwise blank
  lines separate hits; otherwise each line is one. Metadata
  lines (`Hash:`, `ID:`, `Score:`, `Created:`...) are kept out of the hit's text, so the answerer never reads them
  and a wall-clock time never makes a replay differ. A reply saying there is nothing ("No memories found...") is
  no hit.
- An arm whose server this guesses wrong sets `hit_start` (a line matching it starts a hit), `meta_lines` (lines
  matching it are metadata), `no_hits` (a reply matching it is empty) or `strip` (removed from every hit's text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.errors import ConfigError

ITEM_TEXT_KEYS = ("text", "memory", "content", "fact", "note", "document", "observation", "value", "summary")
ITEM_LIST_TEXT_KEYS = ("observations", "facts", "contents")
ITEM_ID_KEYS = ("message_id", "name", "title", "id")
LIST_KEYS = (
    "results",
    "memories",
    "items",
    "data",
    "hits",
    "matches",
    "documents",
    "notes",
    "facts",
    "entities",
    "nodes",
    "result",
)
DEFAULT_HIT_START = r"^\s{0,3}(?:\d{1,4}[.)]\s+|#{1,6}\s+)"
DEFAULT_META_LINES = (
    r"^\s*(?:[-*]\s*)?(?:id|hash|content[_ ]hash|score|similarity|relevance|distance|created|created[_ ]at|"
    r"updated|updated[_ ]at|timestamp|date added|tags?|type|memory[_ ]type|permalink|external[_ ]id|file[_ ]path|"
    r"checksum|metadata|source|rank)\s*[:=]"
)
DEFAULT_NO_HITS = (
    r"^\s*(?:no\s+(?:\w+\s+){0,2}(?:memories|results|matches|notes|entries|items|documents|hits|facts)\b|"
    r"nothing (?:found|matched)|0 results\b|found 0\b)"
)
HEADER = re.compile(r"^\s*(?:found|results?|here (?:are|is)|showing|top)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Hit:
    text: str
    named_id: str | None = None  # an id the server gave the hit (message_id, an entity's name, a note's title)


@dataclass(frozen=True)
class ReplyReader:
    """The patterns of one arm (defaults above)."""

    hit_start: re.Pattern[str]
    meta_lines: re.Pattern[str]
    no_hits: re.Pattern[str]
    strip: re.Pattern[str] | None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], where: str = "settings") -> ReplyReader:
        def compiled(key: str, default: str | None) -> re.Pattern[str] | None:
            pattern = settings.get(key) or default
            if pattern is None:
                return None
            try:
                return re.compile(pattern, re.IGNORECASE | re.MULTILINE)
            except re.error as exc:
                raise ConfigError(f"{where}.{key}: expected a regular expression, found {pattern!r} ({exc})") from None

        hit_start = compiled("hit_start", DEFAULT_HIT_START)
        meta_lines = compiled("meta_lines", DEFAULT_META_LINES)
        no_hits = compiled("no_hits", DEFAULT_NO_HITS)
        assert hit_start is not None and meta_lines is not None and no_hits is not None
        return cls(hit_start, meta_lines, no_hits, compiled("strip", None))

    def hits(self, result: Any) -> list[Hit]:
        """A tool result's hits (see the module doc)."""
        data = getattr(result, "structuredContent", None)
        if data is None:
            texts = [c.text for c in getattr(result, "content", None) or [] if getattr(c, "type", None) == "text"]
            joined = "\n".join(texts)
            try:
                data = json.loads(joined) if joined.strip() else []
            except ValueError:
                data = joined
        found = [self._hit(item) for item in _as_list(data, self)]
        return [hit for hit in found if hit is not None and hit.text]

    def _hit(self, item: Any) -> Hit | None:
        if isinstance(item, Hit):
            return self._cleaned(item)
        if isinstance(item, str):
            return self._cleaned(Hit(item))
        if isinstance(item, Mapping):
            text = item_text(item)
            return None if text is None else self._cleaned(Hit(text, _named_id(item)))
        return None if item is None else self._cleaned(Hit(json.dumps(item, ensure_ascii=False)))

    def _cleaned(self, hit: Hit) -> Hit:
        text = self.strip.sub("", hit.text) if self.strip is not None else hit.text
        return Hit(collapsed(text), hit.named_id)

    def split_text(self, text: str) -> list[Hit]:
        """A plain-text reply as hits (see the module doc)."""
        if not text.strip() or self.no_hits.match(text.strip()):
            return []
        lines = text.splitlines()
        starts = self._hit_starts(lines)
        if starts:
            blocks = [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
            blocks = [[self.hit_start.sub("", block[0], count=1), *block[1:]] for block in blocks]
        elif any(not line.strip() for line in lines):
            blocks = _paragraphs(lines)
            if len(blocks) > 1 and len(blocks[0]) == 1 and _is_header(blocks[0][0]):
                blocks = blocks[1:]  # "Found 3 memories for ...:" says how many, it is no hit
        else:
            blocks = [[line] for line in lines if line.strip()]
        hits = []
        for block in blocks:
            kept = [line.strip() for line in block if line.strip() and not self.meta_lines.match(line)]
            if kept:
                hits.append(Hit(" ".join(kept)))
        return hits

    def _hit_starts(self, lines: Sequence[str]) -> list[int]:
        """The lines that start a hit. In a reply that ends with a metadata line, each hit ends with its metadata:
        a numbered line or heading starts a hit only when the last filled line before it is metadata (or it is the
        first), so the items of a stored text's own list stay in that text."""
        starts = [i for i, line in enumerate(lines) if self.hit_start.match(line)]
        filled = [line for line in lines if line.strip()]
        if not starts or not self.meta_lines.match(filled[-1]):
            return starts
        kept = [starts[0]]
        for i in starts[1:]:
            before = next(line for line in reversed(lines[:i]) if line.strip())
            if self.meta_lines.match(before):
                kept.append(i)
        return kept


def collapsed(text: str) -> str:
    """Runs of whitespace as one space, line breaks included: the form of a hit's text."""
    return " ".join(text.split())


def _paragraphs(lines: Sequence[str]) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [block for block in blocks if block]


def _is_header(text: str) -> bool:
    """A one-line "Found 3 memories for ...:" / "Results for the query '...'": what a reply says before its hits."""
    return "\n" not in text.strip() and HEADER.match(text) is not None


def _as_list(data: Any, reader: ReplyReader) -> list[Any]:
    if isinstance(data, list):
        return data[1:] if len(data) > 1 and isinstance(data[0], str) and _is_header(data[0]) else data
    if isinstance(data, Mapping):
        for key in LIST_KEYS:
            if isinstance(data.get(key), list):
                return list(data[key])
        if len(data) == 1:
            return _as_list(next(iter(data.values())), reader)  # FastMCP wraps a return value as {"result": ...}
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
        return [data] if data else []
    if isinstance(data, str):
        inner = _json_text(data)
        return _as_list(inner, reader) if inner is not None else list(reader.split_text(data))
    return [] if data is None else [data]


def _json_text(text: str) -> list[Any] | dict[str, Any] | None:
    """The list or object a text holds when the whole text is JSON (a tool that returned `json.dumps(...)`, which
    FastMCP wraps as `{"result": "<that text>"}`); None for any other text."""
    if not text.lstrip().startswith(("[", "{")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, list | dict) else None


def item_text(item: Mapping[str, Any]) -> str | None:
    """An item's text: its first text key, else an entity's observations, one after another. None: the item names a
    text key but holds no text there (`{"memory": null}`), so it is no hit. An item with none of them is shown as
    its JSON (a server with a shape of its own still shows what it returned)."""
    for key in ITEM_TEXT_KEYS:
        if isinstance(item.get(key), str):
            return str(item[key])
    for key in ITEM_LIST_TEXT_KEYS:
        values = item.get(key)
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            return " | ".join(values) if values else None
    if any(key in item for key in (*ITEM_TEXT_KEYS, *ITEM_LIST_TEXT_KEYS)):
        return None
    return json.dumps(item, ensure_ascii=False, sort_keys=True)


def _named_id(item: Mapping[str, Any]) -> str | None:
    meta = item.get("metadata")
    if isinstance(meta, Mapping) and isinstance(meta.get("message_id"), str):
        return str(meta["message_id"])
    for key in ITEM_ID_KEYS:
        if isinstance(item.get(key), str):
            return str(item[key])
    return None


_CLOCK = re.compile(r"\b(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}")
_UUID4 = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b", re.IGNORECASE)


def volatile_part(text: str, today: set[str]) -> str | None:
    """A part of a hit that will differ on the next run: a clock time of today's date (`today`: the run's UTC
    dates, yesterday to tomorrow) or a random (version 4) UUID. A replay sends the answerer other lines, so every
    answer misses the cache; `strip` removes such parts."""
    for clock in _CLOCK.finditer(text):
        if clock.group(1) in today:
            return clock.group(0)
    found = _UUID4.search(text)
    return found.group(0) if found else None
