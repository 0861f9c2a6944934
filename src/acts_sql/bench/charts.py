"""The charts of `acts-sql bench compare`: accuracy against LLM calls, accuracy by dialect.

`ChartData` holds the numbers (overall accuracy, mean LLM calls per task,
accuracy by dialect, all over the tasks every run scored; `bench.compare`'s
`chart_data` takes them from a comparison), so they can be checked without
matplotlib. `write_charts` draws them as PNG and SVG next to the comparison
page with matplotlib (the optional ``plots`` extra): the Agg backend, `Figure`
objects only (no pyplot state), and settings that make a re-run write the same
bytes (a fixed SVG hash salt, no date). Without matplotlib it writes no image
and gives the same numbers as markdown tables, with one line saying how to
install the extra.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ACCURACY_CALLS = "compare-accuracy-calls"
BY_DIALECT = "compare-by-dialect"
FORMATS = ("png", "svg")
INSTALL_HINT = (
    "charts need matplotlib: pip install 'acts-sql[plots]' (the numbers are given as tables)"
)


class RunPoint(BaseModel):
    """One run in the accuracy-against-calls chart."""

    name: str
    accuracy: float | None
    """Percent of the common tasks passed (None: none was evaluable)."""
    mean_calls: float
    """Mean LLM calls per common task."""


class DialectAccuracy(BaseModel):
    """The accuracy of every run on one dialect's common tasks."""

    dialect: str
    accuracy: dict[str, float | None]
    """Run name -> percent passed (None: the run has no evaluable task of the dialect)."""


class ChartData(BaseModel):
    """What the two charts show, in the comparison's run order."""

    tasks: int
    points: list[RunPoint] = Field(default_factory=list)
    dialects: list[DialectAccuracy] = Field(default_factory=list)

    @property
    def runs(self) -> list[str]:
        return [point.name for point in self.points]


class ChartFiles(BaseModel):
    """What `write_charts` wrote: image file names, or the fallback tables and the hint."""

    images: dict[str, list[str]] = Field(default_factory=dict)
    """Chart (``ACCURACY_CALLS``, ``BY_DIALECT``) -> its file names, relative to the page."""
    table: list[str] = Field(default_factory=list)
    """Markdown lines with the charts' numbers, when no image could be drawn."""
    hint: str | None = None
    """How to install the extra, when matplotlib is missing."""


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def chart_table(data: ChartData) -> list[str]:
    """The charts' numbers as two markdown tables (the fallback without matplotlib)."""
    lines = [
        "| run | mean LLM calls per task | accuracy |",
        "|---|---:|---:|",
        *(f"| {p.name} | {p.mean_calls:g} | {_pct(p.accuracy)} |" for p in data.points),
        "",
        "| dialect | " + " | ".join(data.runs) + " |",
        "|---|" + "---:|" * len(data.runs),
    ]
    for group in data.dialects:
        cells = [_pct(group.accuracy.get(run)) for run in data.runs]
        lines.append(f"| {group.dialect} | " + " | ".join(cells) + " |")
    return lines


def _figure_class() -> type[Figure] | None:
    """matplotlib's `Figure`, or None when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure
    except ImportError:
        return None
    return Figure


def _remove_images(directory: Path) -> None:
    """Drop chart images of an earlier run, so the directory shows no stale chart."""
    for stem in (ACCURACY_CALLS, BY_DIALECT):
        for fmt in FORMATS:
            (directory / f"{stem}.{fmt}").unlink(missing_ok=True)


def write_charts(directory: Path, data: ChartData) -> ChartFiles:
    """The two charts as PNG and SVG in ``directory``; without matplotlib, the tables."""
    if data.tasks == 0 or not data.points:
        _remove_images(directory)
        return ChartFiles()
    figure_class = _figure_class()
    if figure_class is None:
        _remove_images(directory)
        return ChartFiles(table=chart_table(data), hint=INSTALL_HINT)
    images = {}
    for stem, draw in ((ACCURACY_CALLS, _draw_accuracy_calls), (BY_DIALECT, _draw_by_dialect)):
        figure = figure_class(figsize=(6.4, 4.4), layout="constrained")
        draw(figure, data)
        images[stem] = _save(figure, directory, stem)
    return ChartFiles(images=images)


def _save(figure: Figure, directory: Path, stem: str) -> list[str]:
    """``figure`` as ``stem.png`` and ``stem.svg``, with the Agg canvas and stable bytes."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    names = []
    with matplotlib.rc_context({"svg.hashsalt": "acts-sql", "svg.fonttype": "none"}):
        for fmt in FORMATS:
            name = f"{stem}.{fmt}"
            metadata = {"Date": None} if fmt == "svg" else {"Software": None}
            figure.savefig(directory / name, format=fmt, dpi=120, metadata=metadata)
            names.append(name)
    return names


def _draw_accuracy_calls(figure: Figure, data: ChartData) -> None:
    """One point per run: mean LLM calls per task (x) against accuracy (y), labelled with
    the run's name (runs on the same spot share one label, their names joined)."""
    axes = figure.add_subplot()
    shown = [p for p in data.points if p.accuracy is not None]
    spots: dict[tuple[float, float], list[str]] = {}
    for index, point in enumerate(shown):
        assert point.accuracy is not None
        axes.scatter([point.mean_calls], [point.accuracy], color=f"C{index % 10}", zorder=3)
        spots.setdefault((point.mean_calls, point.accuracy), []).append(point.name)
    for spot, names in spots.items():
        axes.annotate(", ".join(names), spot, xytext=(5, 5), textcoords="offset points")
    top = max((p.mean_calls for p in shown), default=1.0)
    axes.set_xlim(0, max(1.0, math.ceil(top * 1.15 + 0.5)))
    axes.set_ylim(0, 105)
    axes.set_xlabel("mean LLM calls per task")
    axes.set_ylabel("accuracy (%)")
    axes.set_title(f"Accuracy against LLM calls ({data.tasks} common tasks)")
    axes.grid(True, alpha=0.3)


def _draw_by_dialect(figure: Figure, data: ChartData) -> None:
    """Grouped bars: one group per dialect, one bar per run (no bar: not evaluable)."""
    axes = figure.add_subplot()
    runs = data.runs
    width = 0.8 / max(1, len(runs))
    for index, run in enumerate(runs):
        xs = [g + (index - (len(runs) - 1) / 2) * width for g in range(len(data.dialects))]
        heights = [group.accuracy.get(run) for group in data.dialects]
        bars = axes.bar(
            xs,
            [math.nan if h is None else h for h in heights],
            width=width,
            label=run,
            color=f"C{index % 10}",
        )
        labels = ["" if h is None else f"{h:.1f}" for h in heights]
        axes.bar_label(bars, labels=labels, fontsize="x-small", padding=2)
    axes.set_xticks(range(len(data.dialects)), [group.dialect for group in data.dialects])
    axes.set_ylim(0, 105)
    axes.set_ylabel("accuracy (%)")
    axes.set_title(f"Accuracy by dialect ({data.tasks} common tasks)")
    axes.legend(fontsize="small")
    axes.grid(True, axis="y", alpha=0.3)


def chart_section(files: ChartFiles) -> list[str]:
    """The comparison page's lines for the charts: links to the images, or the tables."""
    if not files.images and not files.table:
        return []
    lines = ["", "### Charts", ""]
    titles = {
        ACCURACY_CALLS: "Accuracy against mean LLM calls per task",
        BY_DIALECT: "Accuracy by dialect",
    }
    for stem, names in files.images.items():
        svg = next((n for n in names if n.endswith(".svg")), names[0])
        others = ", ".join(f"[{n.rsplit('.', 1)[1].upper()}]({n})" for n in names)
        lines += [f"![{titles[stem]}]({svg})", "", f"{titles[stem]}: {others}", ""]
    if files.table:
        lines += [f"_{files.hint}_", ""] if files.hint else []
        lines += files.table
    return lines[:-1] if lines[-1] == "" else lines
