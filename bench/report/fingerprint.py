"""What a figure draws, as a hash: its data and its style, never its pixels.

A PNG of the same figure can differ by a few anti-aliased pixels from one CPU to another (float rounding in the
rasteriser), so comparing or rewriting by bytes makes `make paper` dirty the tree on another machine. Instead
`render_figure` keeps `<name>.fingerprint` beside the figure: the SHA-256 of every artist's data and style (positions,
text, colours, sizes, limits, scales), each float rounded to 6 significant digits, plus the matplotlib version and
the source of the drawing code. A figure is rewritten only when that hash changes.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import Collection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

SIGNIFICANT = 6


def _plain(value: Any) -> Any:
    """JSON-able, with every float rounded to SIGNIFICANT digits (a last-bit difference must not change the hash)."""
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(f"{float(value):.{SIGNIFICANT}g}")
    if value is None or isinstance(value, str):
        return value
    return str(value)


def _artist(artist: Any) -> list[Any] | None:
    kind = type(artist).__name__
    if isinstance(artist, Text):
        if not artist.get_visible() or not artist.get_text():
            return None
        return [
            kind,
            artist.get_text(),
            _plain(artist.get_position()),
            artist.get_fontsize(),
            str(artist.get_color()),
            artist.get_horizontalalignment(),
            artist.get_verticalalignment(),
            artist.get_rotation(),
        ]
    if isinstance(artist, Line2D):
        return [
            kind,
            _plain(np.asarray(artist.get_xydata(), dtype=float)),
            str(artist.get_color()),
            artist.get_linewidth(),
            artist.get_linestyle(),
            str(artist.get_marker()),
            artist.get_markersize(),
            artist.get_alpha(),
        ]
    if isinstance(artist, Patch):
        path = artist.get_path().transformed(artist.get_patch_transform())
        return [kind, _plain(path.vertices), _plain(artist.get_facecolor()), _plain(artist.get_edgecolor())]
    if isinstance(artist, Collection):
        return [
            kind,
            _plain(np.asarray(artist.get_offsets(), dtype=float)),
            _plain(artist.get_facecolor()),
            _plain(artist.get_edgecolor()),
            _plain(artist.get_sizes()) if hasattr(artist, "get_sizes") else None,
            [_plain(p.vertices) for p in artist.get_paths()[:200]],
        ]
    if isinstance(artist, Axes):
        return [
            kind,
            _plain(artist.get_position().bounds),
            _plain(artist.get_xlim()),
            _plain(artist.get_ylim()),
            artist.get_xscale(),
            artist.get_yscale(),
            _plain(artist.get_xticks()),
            _plain(artist.get_yticks()),
        ]
    return None


def figure_fingerprint(fig: Figure, draw: Any = None) -> str:
    """SHA-256 of what `fig` draws (see the module docstring); `draw` is the function that drew it."""
    parts: list[Any] = [matplotlib.__version__, _plain(fig.get_size_inches()), _code_of(draw)]
    parts += [item for item in (_artist(a) for a in fig.findobj()) if item is not None]
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _code_of(draw: Any) -> str:
    """The drawing code: the function's module (its helpers and rcParams live there), else the function itself."""
    if draw is None:
        return ""
    module = sys.modules.get(getattr(draw, "__module__", ""))
    try:
        return inspect.getsource(module) if module is not None else inspect.getsource(draw)
    except (OSError, TypeError):
        return getattr(draw, "__qualname__", "")
