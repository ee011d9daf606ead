"""Report figures with matplotlib (object API, Agg canvas, no pyplot state), saved as SVG and PNG.

Every figure has a title naming the n it is computed on, labelled axes with units, and reads in
greyscale: heatmaps use a grey ramp with the values printed in the cells, bars differ by hatch
as well as by grey level, and points by marker shape.

Sizes are chosen for the page: a figure is at most :data:`MAX_WIDTH_IN` wide, so the page shows
it at its natural size (one point = 4/3 CSS px) and never shrinks it, and no text is smaller
than :data:`MIN_FONT_PT` (10.7 px). What grows with the data grows in height, not width.
"""

from __future__ import annotations

import functools
import itertools
import multiprocessing
import multiprocessing.context
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib as mpl
import matplotlib.collections
import matplotlib.patches
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

mpl.use("Agg")

#: The smallest text of any figure (points; 8 pt = 10.7 CSS px at the natural size).
MIN_FONT_PT = 8.0
#: The widest figure (inches): 936 pt = 1,248 CSS px, inside the page's 1,280 px column.
MAX_WIDTH_IN = 13.0
#: The tallest figure (inches).
MAX_HEIGHT_IN = 48.0
#: PNG resolution: 96 dpi, so a PNG has the pixel size the page shows the SVG at.
PNG_DPI = 96
_RC: Any = {"svg.hashsalt": "authpairs", "font.size": 9, "axes.titlesize": 10,
            "legend.fontsize": 9, "hatch.linewidth": 0.6, "svg.fonttype": "none"}
#: Cells above this many get no printed values (the CSV and the HTML table carry them).
MAX_ANNOTATED_CELLS = 160
HATCHES = ("", "//", "x", "..", "\\\\", "+", "o", "--")
GREYS = ("0.15", "0.45", "0.7", "0.9", "0.3", "0.6", "0.8", "0.95")


@dataclass(frozen=True)
class FigureFile:
    """A written figure: its stem, title and the SVG/PNG paths relative to the report folder."""

    stem: str
    title: str
    svg: str
    png: str


def _render(out_dir: Path, stem: str, builder: str, args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> None:
    """Draw ``builder(*args, **kwargs)`` (a builder of this module, named: the job may cross to
    a worker process) and write ``figures/<stem>.svg`` and ``.png`` (deterministic metadata).

    The layout is computed once on an Agg canvas, then frozen for both files.
    """
    fig = globals()[builder](*args, **kwargs)
    folder = out_dir / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    with mpl.rc_context(_RC):
        FigureCanvasAgg(fig)
        engine = fig.get_layout_engine()
        if engine is not None:
            engine.execute(fig)
            fig.set_layout_engine(None)  # frozen: no second layout pass per file
        fig.savefig(folder / f"{stem}.svg", format="svg", metadata={"Date": None})
        fig.savefig(folder / f"{stem}.png", format="png", dpi=PNG_DPI,
                    metadata={"Software": None})


def _pool_context() -> multiprocessing.context.BaseContext:
    """'fork' where it is cheap and quiet (Linux, Python < 3.12); otherwise 'forkserver'
    with this module preloaded (spawn-like safety, one interpreter start per report)."""
    if sys.platform.startswith("linux") and sys.version_info < (3, 12):
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _warm_fonts() -> None:
    """Draw a little text once, so that forked workers inherit loaded fonts and caches."""
    with mpl.rc_context(_RC):
        figure = Figure(figsize=(1, 1))
        FigureCanvasAgg(figure)
        figure.text(0.1, 0.5, "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        figure.canvas.draw()


class FigureQueue:
    """Figures are handed to worker processes as soon as they are queued, so they are drawn
    while the remaining sections are computed (drawing text dominates the report time). With
    one worker (or one core) they are drawn in this process when :meth:`render` is called."""

    def __init__(self, out_dir: Path, workers: int | None = None) -> None:
        self.out_dir = out_dir
        self.workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
        self.jobs: list[functools.partial[None]] = []
        self._pool: ProcessPoolExecutor | None = None
        self._futures: list[Future[None]] = []

    def add(self, stem: str, caption: str, builder: Callable[..., Figure], /, *args: Any,
            **kwargs: Any) -> FigureFile:
        """Queue ``builder(*args, **kwargs)``; returns the files it will write."""
        if globals().get(builder.__name__) is not builder:
            raise ValueError(f"{builder.__name__} is not a figure builder of {__name__}")
        job = functools.partial(_render, self.out_dir, stem, builder.__name__, args, kwargs)
        if self.workers > 1 and self._pool is None:
            _warm_fonts()
            try:
                self._pool = ProcessPoolExecutor(self.workers, mp_context=_pool_context())
            except (OSError, NotImplementedError):  # no process support (e.g. no /dev/shm)
                self.workers = 1
        if self._pool is not None:
            self._futures.append(self._pool.submit(job))
        else:
            self.jobs.append(job)
        return FigureFile(stem, caption, f"figures/{stem}.svg", f"figures/{stem}.png")

    def render(self) -> None:
        """Draw (or wait for) every queued figure."""
        try:
            for job in self.jobs:
                job()
            for future in self._futures:
                future.result()
        finally:
            self.close()
        self.jobs, self._futures = [], []

    def close(self) -> None:
        """Stop the worker processes (pending figures are cancelled)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _wrap(title: str, width_inches: float, points: float = 10.0) -> str:
    """Break a long text into lines that fit ``width_inches`` at ``points`` (a character of
    DejaVu Sans is about 0.62 em wide on average; a little margin is kept)."""
    per_line = int(width_inches * 72 / (0.62 * points))
    return "\n".join(textwrap.wrap(title, max(16, per_line)))


def _text_width_in(text: str, points: float) -> float:
    """About how wide ``text`` (its longest line) is at ``points``, in inches."""
    longest = max((len(line) for line in text.split("\n")), default=0)
    return longest * 0.62 * points / 72


def _figure(width: float, height: float) -> Figure:
    """A figure of at most the page's size (called in every builder's :data:`_RC` context)."""
    return Figure(figsize=(min(width, MAX_WIDTH_IN), min(height, MAX_HEIGHT_IN)),
                  layout="constrained")


def heatmap(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], *, title: str,
            xlabel: str, ylabel: str, cbar_label: str, vmin: float, vmax: float,
            text: Sequence[Sequence[str]], cmap: str = "Greys",
            reverse_text: bool = False) -> Figure:
    """A grey-ramp heatmap; NaN cells are hatched.

    ``text`` holds one printed label per cell (omitted above :data:`MAX_ANNOTATED_CELLS`
    cells, or when the labelled cells would not fit :data:`MAX_WIDTH_IN`; the CSV and the
    page's table carry the values). Cells are as wide as their printed labels; column labels
    are turned 45 degrees when they are wider than a cell; a map of few rows gets its colour
    bar below, so the bar's label always has room.
    """
    nrows, ncols = values.shape
    row_w = max((_text_width_in(r, 9) for r in rows), default=0)
    annotate = nrows * ncols <= MAX_ANNOTATED_CELLS
    cells = [t for row in text for t in row] if annotate else []
    cell_w = max(0.55, max((_text_width_in(t, MIN_FONT_PT) for t in cells), default=0) + 0.15)
    if 2.3 + row_w + cell_w * ncols > MAX_WIDTH_IN:  # printed values would not fit the cells
        annotate, cells, cell_w = False, [], 0.55
    lines = max((t.count("\n") + 1 for t in cells), default=1)
    cell_h = max(0.26, lines * MIN_FONT_PT * 1.3 / 72 + 0.08)
    col_w = max((_text_width_in(c, 9) for c in cols), default=0)
    rotate = col_w > cell_w - 0.05
    col_h = 0.71 * col_w + 0.1 if rotate else 0.25
    plot_h = cell_h * nrows
    below = plot_h < 2.4  # too short for an upright colour-bar label
    width = min(MAX_WIDTH_IN, max(4.0, 1.0 + row_w + cell_w * ncols + (0 if below else 1.3)))
    plot_w = width - row_w - 1.0  # about what the layout leaves the cells
    title_lines = _wrap(title, width - 0.3).count("\n") + 1
    height = 0.9 + 0.2 * title_lines + plot_h + col_h + (1.0 if below else 0)
    with mpl.rc_context(_RC):
        fig = _figure(width, height)
        ax = fig.add_subplot()
        masked = np.ma.masked_invalid(values)
        # vector cells: no image resampling (which dominated the drawing time of big maps)
        image = ax.pcolormesh(np.arange(ncols + 1) - 0.5, np.arange(nrows + 1) - 0.5, masked,
                              cmap=cmap, vmin=vmin, vmax=vmax, edgecolors="face",
                              linewidth=0)
        ax.set_xlim(-0.5, ncols - 0.5)
        ax.set_ylim(nrows - 0.5, -0.5)
        for i, j in zip(*np.nonzero(np.isnan(values)), strict=True):
            ax.add_patch(mpl.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False,
                                               hatch="xx", edgecolor="0.35", linewidth=0))
        ax.set_xticks(range(ncols), labels=list(cols), rotation=45 if rotate else 0,
                      ha="right" if rotate else "center",
                      rotation_mode="anchor" if rotate else "default")
        ax.set_yticks(range(nrows), labels=list(rows))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(_wrap(ylabel, max(plot_h, 1.0), 9))
        fig.suptitle(_wrap(title, fig.get_figwidth() - 0.3))
        if annotate:
            span = vmax - vmin or 1.0
            for i in range(nrows):
                for j in range(ncols):
                    v = values[i, j]
                    dark = not np.isnan(v) and ((v - vmin) / span > 0.55) != reverse_text
                    ax.text(j, i, text[i][j], ha="center", va="center", fontsize=MIN_FONT_PT,
                            color="white" if dark else "black", in_layout=False)
        if below:
            bar = fig.colorbar(image, ax=ax, location="bottom", shrink=0.8, aspect=30)
            bar.set_label(_wrap(cbar_label, max(1.5, plot_w), 9))  # centred under the cells
        else:
            bar = fig.colorbar(image, ax=ax, shrink=0.8)
            bar.set_label(_wrap(cbar_label, 0.8 * plot_h, 9))
    return fig


def correctness_heatmap(attribute: str, values: Sequence[str], runs: Sequence[str],
                        pct: np.ndarray, n: np.ndarray, xlabel: str = "run") -> Figure:
    """Usable correctness (%) by attribute value and run (paper Figures 3-5); ``runs`` name
    the columns (run ids, or a study's factor levels) and ``xlabel`` says which."""
    totals = n.sum(axis=0) if n.size else np.zeros(1, dtype=np.int64)
    per_run = (f"{int(totals.max())}" if totals.min() == totals.max()
               else f"{int(totals.min())}-{int(totals.max())}")
    sizes = n.max(axis=1) if n.size else np.zeros(0, dtype=np.int64)
    rows = [f"{v} ({int(k)})" for v, k in zip(values, sizes, strict=True)]
    return heatmap(pct, rows, runs,
                   title=f"Usable correctness by {attribute} "
                         f"(n = {per_run} inputs per run, {len(runs)} runs)",
                   xlabel=xlabel, ylabel=f"{attribute} (inputs per run)",
                   cbar_label="usable correctness (% of inputs)", vmin=0, vmax=100,
                   text=[["n/a" if np.isnan(v) else f"{v:.0f}" for v in row] for row in pct])


def seed_figure(rows: Sequence[dict[str, Any]], rates: Sequence[tuple[str, str]]) -> Figure:
    """Mean, min-max and bootstrap interval per configuration and rate (paper Figure 1)."""
    configs = list(dict.fromkeys(r["configuration"] for r in rows))
    shown = [(name, title) for name, title in rates if any(r["rate"] == name for r in rows)]
    ncols = min(3, len(shown))
    nrows = -(-len(shown) // ncols)
    with mpl.rc_context(_RC):
        fig = _figure(3.4 * ncols + 2.5, nrows * (1.2 + 0.35 * len(configs)) + 0.8)
        grid = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        axes = list(grid.ravel())
        for ax in axes[len(shown):]:
            ax.set_axis_off()
        for ax, (name, title) in zip(axes, shown, strict=False):
            found = {r["configuration"]: r for r in rows if r["rate"] == name}
            ys = [y for y, c in enumerate(configs) if c in found]
            picked = [found[configs[y]] for y in ys]
            ax.hlines(ys, [r["bootstrap_low"] for r in picked],
                      [r["bootstrap_high"] for r in picked], color="0.6", linewidth=5,
                      label="95% cluster bootstrap")
            ax.hlines(ys, [r["min"] for r in picked], [r["max"] for r in picked],
                      color="black", linewidth=1, label="min-max over seeds")
            ax.plot([r["min"] for r in picked] + [r["max"] for r in picked], ys + ys,
                    linestyle="none", marker="|", markersize=9, color="black")
            ax.plot([r["mean"] for r in picked], ys, linestyle="none", marker="o",
                    color="black", markerfacecolor="white", label="mean over seeds")
            ax.set_xlim(-2, 102)
            ax.set_title(title)
            ax.set_xlabel("rate (%)")
            ax.grid(axis="x", color="0.85", linewidth=0.5)
        for row in grid:
            row[0].set_yticks(range(len(configs)), labels=configs)
            row[0].set_ylabel("configuration")
        axes[0].invert_yaxis()
        seeds = max((r["seeds"] for r in rows), default=0)
        n = max((r["n_per_seed"] for r in rows if r["rate"] == "usable_correctness"),
                default=0)
        fig.suptitle(f"Rates across seeds ({len(configs)} configurations, up to {seeds} seeds, "
                     f"n = {n} inputs per seed)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3, frameon=False)
    return fig


def _label_bars(ax: Any, bars: Any, keys: Sequence[str] | None = None) -> None:
    """Print each bar's count at its end; with ``keys`` each label gets the SVG id
    ``count-<key>`` (a test reads the counts back from the file)."""
    for k, annotation in enumerate(ax.bar_label(bars, fontsize=MIN_FONT_PT, padding=2)):
        annotation.set_in_layout(False)
        if keys is not None:
            annotation.set_gid(f"count-{keys[k]}")


def grouped_bars(groups: Sequence[str], series: Sequence[tuple[str, Sequence[int]]], *,
                 title: str, xlabel: str, ylabel: str) -> Figure:
    """Horizontal bars per group, one bar per series, each series with its own hatch and grey
    level. The figure grows in height with the groups (and suits long group names); its width
    follows the longest group name, up to :data:`MAX_WIDTH_IN`."""
    k = len(series)
    width = 0.8 / max(k, 1)
    with mpl.rc_context(_RC):
        label_w = max((_text_width_in(g, 9) for g in groups), default=0)
        fig = _figure(max(7.5, label_w + 6.0), 1.8 + 0.2 * len(groups) * max(k, 1) + 0.2 * k)
        ax = fig.add_subplot()
        y = np.arange(len(groups))
        for s, (label, counts) in enumerate(series):
            bars = ax.barh(y - 0.4 + width * (s + 0.5), counts, height=width,
                           color=GREYS[s % len(GREYS)], hatch=HATCHES[s % len(HATCHES)],
                           edgecolor="black", linewidth=0.6, label=label)
            _label_bars(ax, bars)
        ax.set_yticks(y, labels=list(groups))
        ax.invert_yaxis()
        ax.margins(x=0.08, y=0.02)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        fig.suptitle(_wrap(title, fig.get_figwidth() - 0.3))
        fig.legend(loc="outside lower center", ncols=min(k, 2), frameon=False)
    return fig


def transition_bars(lawful: Sequence[tuple[str, str, int]],
                    forbidden: Sequence[tuple[str, str, int]],
                    lost_split: Sequence[tuple[str, int]], *, title: str) -> Figure:
    """Request transitions: one panel per reference label, one bar per transition (``(key,
    title, count)``), every transition shown even at zero. The lost bar is split by what it
    was lost to (``(title, count)``, hatched apart: a denial and unavailability for a guardrail
    run); each panel's bars add up to its matched requests."""
    with mpl.rc_context(_RC):
        label_w = max((_text_width_in(t, 9) for _, t, _ in (*lawful, *forbidden)), default=0)
        fig = _figure(max(8.0, label_w + 6.0),
                      2.2 + 0.32 * (len(lawful) + len(forbidden)))
        axes = fig.subplots(2, 1, sharex=True,
                            height_ratios=[max(len(lawful), 1), max(len(forbidden), 1)])
        for ax, side, rows in ((axes[0], "lawful", lawful), (axes[1], "forbidden", forbidden)):
            y = np.arange(len(rows))
            counts = [c for _, _, c in rows]
            bars = ax.barh(y, counts, height=0.6, color="0.75", edgecolor="black",
                           linewidth=0.6)
            _label_bars(ax, bars, [key for key, _, _ in rows])
            ax.set_yticks(y, labels=[t for _, t, _ in rows])
            ax.invert_yaxis()
            ax.set_ylabel(f"{side}\n(n = {sum(counts)})")
            ax.margins(x=0.12)
            ax.grid(axis="x", color="0.85", linewidth=0.5)
            ax.set_axisbelow(True)
        keys = [key for key, _, _ in lawful]
        if "lost" in keys and lost_split:  # split the lost bar, part by part
            i, left = keys.index("lost"), 0
            for (part, count), (color, hatch) in zip(lost_split, _LOST_HATCHES, strict=False):
                axes[0].barh([i], [count], left=[left], height=0.6, color=color, hatch=hatch,
                             edgecolor="black", linewidth=0.6, label=f"{part} ({count})")
                left += count
            fig.legend(loc="outside lower center", ncols=min(len(lost_split), 2),
                       frameon=False)
        axes[1].set_xlabel("requests (count)")
        fig.align_ylabels(axes)
        fig.suptitle(_wrap(title, fig.get_figwidth() - 0.3))
    return fig


_LOST_HATCHES = (("0.3", "//"), ("white", ".."), ("0.6", "xx"), ("0.9", "\\\\"))
"""The fill and hatch of each part of the lost bar, in order."""


def _row_runs(cells: Sequence[tuple[int, int, int]], panel: int) -> list[mpl.patches.Rectangle]:
    """Horizontal runs of adjacent cells as single rectangles (fewer paths to hatch)."""
    rows: dict[int, list[int]] = {}
    for q, a, b in cells:
        if q == panel:
            rows.setdefault(a, []).append(b)
    rects = []
    for a, columns in rows.items():  # adjacent columns keep column - rank constant
        for _, run in itertools.groupby(enumerate(sorted(columns)), key=lambda x: x[1] - x[0]):
            run_columns = [b for _, b in run]
            rects.append(mpl.patches.Rectangle((run_columns[0] - 0.5, a - 0.5),
                                               len(run_columns), 1))
    return rects


def grid_figure(rows: Sequence[dict[str, Any]], order_index: dict[str, int], *,
                title: str, max_styles: int = len(HATCHES)) -> Figure:
    """The cost grid, one panel per availability cap: rows severity x approval cap, columns
    output x input price. Each cell is filled with the style (grey level + hatch) of the
    composition of least loss; ties and infeasible cells have their own marked styles."""
    sev = sorted({r["severity"] for r in rows})
    caps = list(dict.fromkeys(r["approval_cap"] for r in rows))
    outs = sorted({r["output_price"] for r in rows})
    ins = sorted({r["input_price"] for r in rows})
    avails = list(dict.fromkeys(r["availability_cap"] for r in rows))
    row_keys = [(c, s) for c in caps for s in sev]
    col_keys = [(o, i) for o in outs for i in ins]
    cells: dict[str, list[tuple[int, int, int]]] = {}
    for r in rows:  # a cell's style: its one winner, else its status (tie, infeasible)
        category = r["best"][0] if r["status"] == "unique" else r["status"]
        cells.setdefault(category, []).append((
            avails.index(r["availability_cap"]),
            row_keys.index((r["approval_cap"], r["severity"])),
            col_keys.index((r["output_price"], r["input_price"]))))
    winners = sorted((k for k in cells if k not in ("tie", "infeasible")),
                     key=lambda k: (-len(cells[k]), order_index.get(k, 0)))
    other = winners[max_styles:]
    with mpl.rc_context(_RC):
        fig = _figure(4.5 + 0.3 * len(col_keys) * len(avails), 2.4 + 0.2 * len(row_keys))
        axes = fig.subplots(1, len(avails), squeeze=False, sharey=True)[0]
        groups = [(f"#{order_index.get(name, 0)} {name} ({len(cells[name])} cells)", cells[name],
                   GREYS[n % len(GREYS)], HATCHES[n % len(HATCHES)])
                  for n, name in enumerate(winners[:max_styles])]
        if other:
            groups.append((f"other compositions ({sum(len(cells[k]) for k in other)} cells)",
                           [c for k in other for c in cells[k]], "0.55", "||"))
        for key, label, grey, hatch in (
                ("tie", "tie between compositions", "white", "o"),
                ("infeasible", "infeasible (no composition meets the caps)", "white", "xx")):
            if key in cells:
                groups.append((f"{label} ({len(cells[key])} cells)", cells[key], grey, hatch))
        for _, members, grey, hatch in groups:
            for p, ax in enumerate(axes):
                ax.add_collection(mpl.collections.PatchCollection(
                    _row_runs(members, p), facecolor=grey, hatch=hatch, edgecolor="none"))
        for ax in axes:  # cell borders, drawn once over all styles
            ax.set_xticks(np.arange(-0.5, len(col_keys)), minor=True)
            ax.set_yticks(np.arange(-0.5, len(row_keys)), minor=True)
            ax.grid(which="minor", color="0.2", linewidth=0.3)
            ax.tick_params(which="minor", length=0)
        for ax, avail in zip(axes, avails, strict=True):
            ax.set_xlim(-0.5, len(col_keys) - 0.5)
            ax.set_ylim(len(row_keys) - 0.5, -0.5)
            ax.set_xticks(range(len(col_keys)), labels=[f"{o:g}/{i:g}" for o, i in col_keys],
                          rotation=90)
            ax.set_xlabel("token price output/input (loss units per million tokens)")
            ax.set_title("availability cap: " + ("none" if avail is None
                                                 else f"at most {avail} unavailable"))
        axes[0].set_yticks(range(len(row_keys)),
                           labels=[f"U<={'any' if c is None else c}, r={s:g}"
                                   for c, s in row_keys])
        axes[0].set_ylabel("incorrect-approval cap U, severity ratio r (loss units)")
        fig.suptitle(_wrap(title, fig.get_figwidth()))
        handles = [mpl.patches.Patch(facecolor=grey, hatch=hatch, edgecolor="0.2", label=label)
                   for label, _, grey, hatch in groups]
        fig.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False)
    return fig
