"""Charts as inline SVG, drawn here: horizontal bars and a line chart, each with a title for screen readers."""

from __future__ import annotations

from html import escape

BAR_HEIGHT = 22
LABEL_WIDTH = 170
CHART_WIDTH = 640
# dark enough on white for text and shapes (WCAG contrast ≥ 4.5:1)
PRIORITY_COLOURS = {
    "critical": "#8b0000",
    "high": "#b23c00",
    "medium": "#7a5b00",
    "low": "#245f8f",
    "info": "#4a4a4a",
}


def bar_chart(
    chart_id: str,
    title: str,
    bars: list[tuple[str, float]],
    colour: str = "#1f4e79",
    colours: list[str] | None = None,
) -> str:
    """Horizontal bars, one per (label, value), the value written at the end of each bar; ``colours`` one
    per bar (default: ``colour`` for all)."""
    if not bars:
        return ""
    top = max(value for _, value in bars) or 1
    span = CHART_WIDTH - LABEL_WIDTH - 70
    height = BAR_HEIGHT * len(bars) + 10
    parts = [
        f'<svg class="chart" id="{chart_id}" role="img" aria-labelledby="{chart_id}-title" '
        f'viewBox="0 0 {CHART_WIDTH} {height}" width="100%" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
    ]
    for i, (label, value) in enumerate(bars):
        y = 5 + i * BAR_HEIGHT
        width = max(1.0, span * value / top) if value else 0
        fill = colours[i] if colours else colour
        parts.append(
            f'<text x="{LABEL_WIDTH - 8}" y="{y + 15}" text-anchor="end" font-size="13" fill="#1a1a1a">'
            f"{escape(str(label))}</text>"
            f'<rect x="{LABEL_WIDTH}" y="{y + 2}" width="{width:.1f}" height="{BAR_HEIGHT - 6}" fill="{fill}"/>'
            f'<text x="{LABEL_WIDTH + width + 6:.1f}" y="{y + 15}" font-size="13" fill="#1a1a1a">'
            f"{_number(value)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    chart_id: str,
    title: str,
    labels: list[str],
    series: dict[str, list[int]],
    names: dict[str, str] | None = None,
) -> str:
    """One line per series (keyed by priority, coloured by it) over the labels (commits), with a legend
    naming each series by ``names[key]`` (default: the key)."""
    if not labels or not series:
        return ""
    width, height, left, bottom, top_pad = CHART_WIDTH, 260, 50, 40, 15
    top = max((max(values) for values in series.values() if values), default=0) or 1
    plot_w, plot_h = width - left - 120, height - bottom - top_pad
    step = plot_w / max(1, len(labels) - 1)
    parts = [
        f'<svg class="chart" id="{chart_id}" role="img" aria-labelledby="{chart_id}-title" '
        f'viewBox="0 0 {width} {height}" width="100%" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="#555"/>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot_h}" stroke="#555"/>',
        f'<text x="{left - 6}" y="{top_pad + 5}" text-anchor="end" font-size="12" fill="#1a1a1a">{top}</text>',
        f'<text x="{left - 6}" y="{top_pad + plot_h}" text-anchor="end" font-size="12" fill="#1a1a1a">0</text>',
    ]
    for i, label in enumerate(labels):
        x = left + i * step if len(labels) > 1 else left + plot_w / 2
        parts.append(
            f'<text x="{x:.1f}" y="{height - bottom + 20}" text-anchor="middle" font-size="12" fill="#1a1a1a">'
            f"{escape(label)}</text>"
        )
    for n, (name, values) in enumerate(series.items()):
        colour = PRIORITY_COLOURS.get(name, "#1f4e79")
        points = []
        for i, value in enumerate(values):
            x = left + i * step if len(labels) > 1 else left + plot_w / 2
            y = top_pad + plot_h - plot_h * value / top
            points.append((x, y))
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in points)
        legend_y = top_pad + 10 + n * 18
        parts.append(
            f'<rect x="{left + plot_w + 20}" y="{legend_y - 9}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{left + plot_w + 36}" y="{legend_y}" font-size="12" fill="#1a1a1a">'
            f"{escape((names or {}).get(name, name))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
