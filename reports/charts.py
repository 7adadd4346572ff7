"""The 12-week trend chart: server-rendered SVG through pygal, with no JavaScript at all.

pygal links a tooltip script from the internet by default (`js=[]` drops it) and always
embeds an inline config script, which is removed from the tree before serializing: the page's
CSP forbids inline scripts, and the chart needs none.
"""

from __future__ import annotations

from collections.abc import Sequence

import pygal
from django.utils.translation import gettext as _
from pygal.etree import etree
from pygal.style import Style

from common.choices import Stage

# The stage colours of the pages (build, data, train, serve), darker so they print.
STAGE_COLOURS = ("#4c6ef5", "#2f9e44", "#f08c00", "#c2255c")
STYLE = Style(
    background="#ffffff",
    plot_background="#ffffff",
    foreground="#1d2330",
    foreground_strong="#1d2330",
    foreground_subtle="#6b7385",
    colors=STAGE_COLOURS,
    font_family="system-ui, sans-serif",
    label_font_size=11,
    major_label_font_size=11,
    legend_font_size=12,
    title_font_size=14,
)


def trend_chart_svg(trend: Sequence[dict]) -> str:
    """Failures per week (new incidents + recurrences), stacked by stage, oldest week first.

    `trend` is the snapshot's list of weeks; labels follow the active language."""
    chart = pygal.StackedBar(
        js=[],
        style=STYLE,
        width=760,
        height=300,
        disable_xml_declaration=True,
        legend_at_bottom=True,
        legend_at_bottom_columns=len(Stage.values),
        print_values=False,
        show_y_guides=True,
        x_label_rotation=0,
        margin=8,
        min_scale=2,
        max_scale=6,
    )
    chart.title = _("Failures per week, by stage")
    chart.x_labels = [week["week"].split("-")[1] for week in trend]
    for stage, label in Stage.choices:
        chart.add(str(label), [week["stages"].get(stage, 0) for week in trend])
    tree = chart.render_tree()
    for parent in list(tree.iter()):
        for child in list(parent):
            if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return etree.tostring(tree, encoding="unicode")
