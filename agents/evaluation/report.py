"""Reports: report.json (configuration, metrics per policy and memory setting, every episode),
events.jsonl (the full event log) and report.html (tables and plots, self-contained: the plots
are matplotlib figures rendered with the Agg backend to inline SVG)."""

from __future__ import annotations

import html
import io
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from agents.evaluation.metrics import MAIN_METRICS
from agents.evaluation.runner import RunOutput

MODE_TEXT = {
    "oracle": "oracle signals: ambiguity and slot extraction come from the scenarios' ground "
    "truth, so this measures each policy's decision logic alone",
    "real": "real signals: ambiguity, slot extraction and interpretations come from the "
    "configured model",
}


def build_report(
    run: RunOutput, *, scenarios_name: str, scenarios_origin: str = ""
) -> dict[str, Any]:
    config = run.config
    return {
        "format": 1,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "scenarios": {"name": scenarios_name, "file": scenarios_origin},
        "config": {
            "engine": config.engine,
            "mode": config.mode,
            "mode_text": MODE_TEXT.get(config.mode, config.mode),
            "policies": [p if isinstance(p, str) else p.name for p in config.policies],
            "memory": list(config.memory),
            "seeds": config.seeds,
            "sessions": config.sessions,
            "model": config.model,
            "user": config.user,
        },
        "summaries": run.summaries(),
        "episodes": [r.to_dict() for r in run.results],
    }


def _fmt(value: Any) -> str:
    if value is None:
        return "\u2013"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _label(summary: Mapping[str, Any]) -> str:
    return f"{summary['policy']}" + (" + memory" if summary["memory"] else "")


def _colour(summary: Mapping[str, Any], summaries: Sequence[Mapping[str, Any]]) -> Any:
    """One colour per policy (memory on and off share it; the line or hatch tells them apart)."""
    policies = list(dict.fromkeys(s["policy"] for s in summaries))
    return plt.get_cmap("tab10")(policies.index(summary["policy"]) % 10)


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.find("<svg") :]


def figure_policies(summaries: Sequence[Mapping[str, Any]]) -> Figure:
    """Policies side by side on the asking and outcome metrics (0-1 scale)."""
    keys = [
        ("task_success", "task success"),
        ("ask_f1", "ask F1"),
        ("ask_mcc", "ask MCC"),
        ("over_asking", "over-asking"),
        ("slot_question_precision", "slot q. precision"),
        ("blocker_recall", "blocker recall"),
        ("preference_adherence", "pref. adherence"),
    ]
    figure, axis = plt.subplots(figsize=(10, 4.2))
    width = 0.8 / max(1, len(summaries))
    for index, summary in enumerate(summaries):
        values = [summary["metrics"].get(k) or 0.0 for k, _ in keys]
        positions = [i + index * width for i in range(len(keys))]
        axis.bar(
            positions,
            values,
            width=width,
            label=_label(summary),
            color=_colour(summary, summaries),
            hatch="" if summary["memory"] else "///",
            edgecolor="white",
        )
    axis.set_xticks([i + 0.4 - width / 2 for i in range(len(keys))])
    axis.set_xticklabels([label for _, label in keys], rotation=20, ha="right")
    axis.set_ylim(-0.1, 1.05)
    axis.axhline(0, color="black", linewidth=0.6)
    axis.set_title("Policies side by side")
    axis.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    return figure


def figure_sessions(summaries: Sequence[Mapping[str, Any]], key: str, title: str) -> Figure:
    """A per-session line per configuration (memory on: solid, off: dashed)."""
    figure, axis = plt.subplots(figsize=(7, 3.6))
    for summary in summaries:
        by_session = summary["metrics"]["by_session"]
        sessions = sorted(int(s) for s in by_session)
        values = [by_session[s if s in by_session else str(s)][key] for s in sessions]
        axis.plot(
            sessions,
            [v if v is not None else float("nan") for v in values],
            marker="o",
            linestyle="-" if summary["memory"] else "--",
            color=_colour(summary, summaries),
            label=_label(summary),
        )
        axis.set_xticks(sessions)
    axis.set_xlabel("session")
    axis.set_title(title)
    if key == "adherence":
        axis.set_ylim(0, 1.05)
    axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    return figure


def figure_effort(summaries: Sequence[Mapping[str, Any]]) -> Figure:
    figure, axis = plt.subplots(figsize=(7, 3.4))
    labels = [_label(s) for s in summaries]
    axis.barh(
        labels,
        [s["metrics"].get("user_words") or 0.0 for s in summaries],
        color=[_colour(s, summaries) for s in summaries],
        hatch=["" if s["memory"] else "///" for s in summaries],
        edgecolor="white",
    )
    axis.set_xlabel("words the person typed per episode (after the request)")
    axis.set_title("User effort")
    axis.invert_yaxis()
    figure.tight_layout()
    return figure


def figures(report: Mapping[str, Any]) -> dict[str, Figure]:
    summaries = report["summaries"]
    return {
        "policies": figure_policies(summaries),
        "adherence": figure_sessions(
            summaries, "adherence", "Preference adherence at the first attempt, by session"
        ),
        "enforcements": figure_sessions(
            summaries, "enforcements", "Enforcements per episode, by session"
        ),
        "effort": figure_effort(summaries),
    }


def metrics_table(summaries: Sequence[Mapping[str, Any]], *, label_head: str = "policy") -> str:
    """The main metrics as an HTML table (one row per configuration)."""
    esc = html.escape
    head = "".join(f"<th>{esc(label)}</th>" for _, label, _ in MAIN_METRICS)
    rows = []
    for summary in summaries:
        cells = "".join(
            f"<td>{_fmt(summary['metrics'].get(key))}</td>" for key, _, _ in MAIN_METRICS
        )
        rows.append(f"<tr><th>{esc(_label(summary))}</th>{cells}</tr>")
    return (
        f'<div class="table-scroll" style="overflow-x:auto"><table class="metrics"><thead><tr>'
        f"<th>{esc(label_head)}</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def report_fragment(report: Mapping[str, Any]) -> str:
    """Tables and inline SVG plots of a report (no page around them)."""
    esc = html.escape
    passk = []
    for summary in report["summaries"]:
        values = ", ".join(
            f"pass^{k} = {_fmt(v)}" for k, v in summary["metrics"]["pass_hat_k"].items()
        )
        passk.append(f"<li>{esc(_label(summary))}: {esc(values)}</li>")
    feedback = []
    for summary in report["summaries"]:
        m = summary["metrics"]
        counts = (
            f"{m.get('feedback_given', 0)} given: {m.get('thumbs_up', 0)} thumbs up, "
            f"{m.get('thumbs_down', 0)} thumbs down, "
            f"{m.get('unnecessary_questions', 0)} questions marked unnecessary"
        )
        feedback.append(f"<li>{esc(_label(summary))}: {esc(counts)}</li>")
    plots = "".join(
        f'<figure class="plot" id="plot-{name}">{_svg(figure)}</figure>'
        for name, figure in figures(report).items()
    )
    return (
        f"<h2>Main metrics</h2>{metrics_table(report['summaries'])}"
        f"<h2>pass^k over seeds</h2><ul>{''.join(passk)}</ul>"
        f"<h2>Feedback from the simulated people</h2><ul>{''.join(feedback)}</ul>"
        f"<h2>Plots</h2>{plots}"
    )


def mode_banner(config: Mapping[str, Any]) -> str:
    esc = html.escape
    return (
        f'<p class="mode"><strong>Mode: {esc(config["mode"])}</strong> '
        f"({esc(config['mode_text'])}). Engine: {esc(config['engine'])}; simulated users: "
        f"{esc(config['user'])}; model: {esc(config['model'] or 'none')}; seeds: "
        f"{config['seeds']}; sessions: {esc(str(config['sessions'] or 'all'))}.</p>"
    )


def render_html(report: Mapping[str, Any]) -> str:
    esc = html.escape
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Collab evaluation: {esc(report["scenarios"]["name"])}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; color: #1d2430; }}
table {{ border-collapse: collapse; font-size: 0.85rem; }}
th, td {{ border: 1px solid #ccd; padding: 0.3rem 0.5rem; text-align: right; }}
thead th {{ background: #eef; }} tbody th {{ text-align: left; }}
.mode {{ background: #fff6d6; padding: 0.5rem 0.8rem; border-left: 4px solid #d9a400; }}
figure.plot svg {{ max-width: 100%; height: auto; }}
</style></head><body>
<h1>Evaluation: {esc(report["scenarios"]["name"])}</h1>
{mode_banner(report["config"])}
<p>Created {esc(report["created"])}.</p>
{report_fragment(report)}
<p>Definitions: docs/evaluation.md. Every episode and the full event log are in report.json and
events.jsonl beside this file.</p>
</body></html>
"""


def comparison_fragment(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Several stored reports side by side: one table and the session plots, every
    configuration labelled with its run."""
    summaries = [
        {**summary, "policy": f"{name} {summary['policy']}"}
        for name, report in reports
        for summary in report["summaries"]
    ]
    plots = "".join(
        f'<figure class="plot">{_svg(figure)}</figure>'
        for figure in (
            figure_policies(summaries),
            figure_sessions(summaries, "adherence", "Preference adherence by session"),
        )
    )
    return metrics_table(summaries, label_head="run, policy") + plots


def write_report(
    run: RunOutput, out_dir: Path, *, scenarios_name: str, scenarios_origin: str = ""
) -> dict[str, Any]:
    out_dir.mkdir(parents=True, exist_ok=True)
    report = build_report(run, scenarios_name=scenarios_name, scenarios_origin=scenarios_origin)
    (out_dir / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    with (out_dir / "events.jsonl").open("w", encoding="utf-8") as stream:
        for event in run.events:
            stream.write(json.dumps(event, ensure_ascii=False) + "\n")
    (out_dir / "report.html").write_text(render_html(report), encoding="utf-8")
    return report


def save_png(report: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """The report's plots as PNG files (for a quick look or a README)."""
    paths = []
    for name, figure in figures(report).items():
        path = out_dir / f"plot-{name}.png"
        figure.savefig(path, format="png", dpi=110, bbox_inches="tight")
        plt.close(figure)
        paths.append(path)
    return paths
