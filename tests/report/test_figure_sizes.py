"""Figures are sized for the page without a browser: every text is at least MIN_FONT_PT and lies
inside its figure, and no figure is wider than MAX_WIDTH_IN, for small and large inputs (the
browser test measures the same on the rendered page)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from authpairs.report import figures as fig

TITLE = ("Contrast family: net lawful change with Holm-adjusted sign-flip p (3 contrasts, n = 20 "
         "matched lawful requests each)")


def _heatmap(rows: int, cols: int, label: str) -> Figure:
    values = np.linspace(-40, 40, rows * cols).reshape(rows, cols)
    text = [[f"{values[i, j]:+.1f}*\np=1.9e-06" for j in range(cols)] for i in range(rows)]
    return fig.heatmap(values, [f"{label} {i}" for i in range(rows)],
                       [f"{label} {j}" for j in range(cols)], title=TITLE,
                       xlabel="after (or compared levels)", ylabel="before (or fixed levels)",
                       cbar_label="net lawful change (percentage points; dark = lost)",
                       vmin=-40, vmax=40, text=text, cmap="gray", reverse_text=True)


def _bars(orders: int) -> Figure:
    groups = [f"{i}: " + " -> ".join(["model=a interface=schema"] * (1 + i % 3))
              for i in range(orders)]
    return fig.grouped_bars(groups, [(f"series {k}", list(range(orders))) for k in range(4)],
                            title=f"Compositions ({orders} orders)", xlabel="requests (count)",
                            ylabel="ordered composition")


def _transitions() -> Figure:
    return fig.transition_bars(
        [("retained", "retained", 3), ("lost", "lost", 22), ("gained", "gained", 1),
         ("neither", "neither", 3)],
        [("still_approved", "still approved", 2), ("newly_approved", "newly approved", 3),
         ("newly_blocked", "newly blocked (usable denial)", 6),
         ("newly_unavailable", "newly unavailable", 5),
         ("still_blocked", "still not approved", 4)],
        [("lost to denial", 14), ("lost to unavailability", 8)], title="Request transitions")


def _seeds() -> Figure:
    rates = [("usable_correctness", "usable correctness (% of all)"),
             ("incorrect_approval_rate", "incorrect approvals (% of forbidden)"),
             ("unavailable_rate", "unavailable (% of all)"),
             ("abstention_rate", "abstentions (% of all)")]
    rows = [{"configuration": f"model=smollm2 interface={i}", "rate": name, "mean": 40.0 + k,
             "min": 30.0, "max": 50.0 + k, "bootstrap_low": 25.0, "bootstrap_high": 60.0,
             "seeds": 3, "n_per_seed": 40}
            for i in ("direct", "structured", "schema") for k, (name, _) in enumerate(rates)]
    return fig.seed_figure(rows, rates)


CASES: dict[str, Callable[[], Figure]] = {
    "seeds": _seeds,
    "one contrast": lambda: _heatmap(1, 1, "loose-s0"),
    "three contrasts": lambda: _heatmap(2, 2, "loose-s0"),
    "many columns": lambda: _heatmap(3, 30, "run-abcdef123456"),
    "many rows": lambda: _heatmap(40, 10, "model=smollm2 interface=schema seed=2"),
    "few compositions": lambda: _bars(3),
    "many compositions": lambda: _bars(40),
    "transitions": _transitions,
}


@pytest.mark.parametrize("case", list(CASES))
def test_text_is_large_enough_and_inside(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    figure = CASES[case]()
    canvas = FigureCanvasAgg(figure)
    engine = figure.get_layout_engine()
    if engine is not None:
        engine.execute(figure)
    drawn: list[Text] = []  # the texts the figure draws (ticks outside the view are not)
    draw = Text.draw

    def record(self: Text, renderer: Any) -> None:
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        draw(self, renderer)

    monkeypatch.setattr(Text, "draw", record)
    canvas.draw()
    assert figure.get_figwidth() <= fig.MAX_WIDTH_IN + 1e-9
    renderer = canvas.get_renderer()
    box = figure.bbox
    texts = list(dict.fromkeys(drawn))
    assert len(texts) > 5
    for t in texts:
        assert t.get_fontsize() >= fig.MIN_FONT_PT, (t.get_text(), t.get_fontsize())
        extent = t.get_window_extent(renderer)
        inside = (extent.x0 >= box.x0 - 1 and extent.y0 >= box.y0 - 1
                  and extent.x1 <= box.x1 + 1 and extent.y1 <= box.y1 + 1)
        assert inside, (case, t.get_text(), extent, box)
