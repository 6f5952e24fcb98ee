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
    "detectors": "detectors: the product's own reading of the request, the document and memory "
    "(agents.policies.adapter.decide_from_context), no model and no ground truth",
    "oracle": "ORACLE UPPER BOUND: a perfect reader of the text gives the model signals (it "
    "never sees blockers, categories, conflicts or checks); no real agent gets these signals",
    "real": "real signals: the configured model's extraction, rating and interpretations, only "
    "the calls each policy makes in the app",
}
MODE_LABEL = {"detectors": "detectors", "oracle": "oracle (upper bound)", "real": "real model"}


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
            "endpoint": config.endpoint,
            "user": config.user,
            "signal_noise": config.signal_noise,
            "split": config.split or "all",
            "limit": config.limit,
            "mode_label": MODE_LABEL.get(config.mode, config.mode)
            + (f", noise {config.signal_noise:g}" if config.signal_noise else ""),
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
    return (
        f"{summary['policy']}"
        + (" + memory" if summary["memory"] else "")
        + (" (counter-example)" if summary.get("trivial") else "")
    )


def _ci(metrics: Mapping[str, Any], key: str) -> str:
    value = metrics.get(key)
    band = (metrics.get("intervals", {}).get(key) or {}).get("ci95")
    if value is None:
        return "\u2013"
    return f"{value:.2f} [{band[0]:.2f}, {band[1]:.2f}]" if band else f"{value:.2f}"


HEADLINE = (
    ("first_time_right", "first time right"),
    ("corrections_per_episode", "corrections / ep."),
    ("ask_mcc", "MCC"),
    ("blocker_f1", "blocker F1 (no TN)"),
    ("over_asking", "over-ask (clear)"),
    ("silent_wrong_episodes", "silent wrong"),
    ("contradictions_noticed", "contradictions noticed"),
)
EXTRA = (
    ("first_document_correctness", "first doc correct, any questions (secondary)"),
    ("task_success", "success after corrections (secondary)"),
    ("ask_f1", "ask F1, any question (no TN)"),
    ("blocker_recall", "blocker recall"),
    ("redundant_questions", "redundant q."),
    ("silent_wrong_guesses", "silent wrong / ep."),
    ("assumption_precision", "assumption precision"),
    ("asking_budget_adherence", "asking budget kept"),
    ("values_right", "values right (final)"),
    ("question_grounding", "grounding"),
    ("cross_user_leakage", "leakage"),
)
# Figures of the writer, not the agent, in the modes whose documents the harness writes.
WRITER_MODES = ("detectors", "oracle")
WRITER = (
    ("final_preference_adherence", "pref. adherence (final)"),
    ("adherence_from_second_session", "pref. adherence from session 2 (1st attempt)"),
    ("document_preservation", "doc kept"),
)


def writer_label(label: str, mode: str) -> str:
    """A figure of the document's writing: in detectors and oracle modes the harness's writer
    and the product's style pass write every document, so the figure is theirs, not the
    agent's, and is labelled so."""
    return f"{label} [harness writer]" if mode in WRITER_MODES else label


def _row_name(summary: Mapping[str, Any]) -> str:
    return summary["policy"] + (" (counter-example)" if summary.get("trivial") else "")


def headline_table(report: Mapping[str, Any]) -> str:
    """The headline as markdown: one row per configuration with 95 % intervals over episodes,
    then ask rate and F1 per request category. Every row names its mode (an oracle row says it
    is an upper bound) and the split it was played on."""
    config = report["config"]
    where = f"{report['scenarios']['name']}, split {config.get('split', 'all')}"
    mode = config.get("mode_label", config["mode"])
    head = [
        "mode",
        "policy",
        "memory",
        "episodes",
        *(h for _, h in HEADLINE),
        *(h for _, h in EXTRA),
        *(writer_label(h, config["mode"]) for _, h in WRITER),
    ]
    limit = f"; first {config['limit']} episodes" if config.get("limit") else ""
    model = (
        f"; model {config['model']} ({config.get('endpoint', '')})" if config.get("model") else ""
    )
    lines = [f"Scenarios: {where}; seeds: {config['seeds']}{limit}{model}.", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for summary in report["summaries"]:
        m = summary["metrics"]
        cells = [mode, _row_name(summary), "on" if summary["memory"] else "off"]
        cells += [str(m["episodes"])]
        cells += [_ci(m, k) for k, _ in HEADLINE]
        cells += [_fmt(m.get(k)) for k, _ in EXTRA]
        cells += [_fmt(m.get(k)) for k, _ in WRITER]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Headline: the first document right before any correction and without a needless "
        "question before it (first time right), and asking scored with true negatives (MCC) "
        "and on blockers only; an F1 has no true negatives. Rows marked "
        "(counter-example) do no work a figure should reward (docs/evaluation.md).",
    ]
    if config["mode"] in WRITER_MODES:
        lines.append(
            "[harness writer]: in this mode the harness's writer and the product's style pass "
            "write every document, so these figures are the writer's, not the agent's."
        )
    categories = ("clear", "missing", "ambiguous", "contradictory")
    lines += ["", "Per category: ask rate / ask F1 / success (episodes)", ""]
    head = ["mode", "policy", "memory", *categories]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for summary in report["summaries"]:
        table = summary["metrics"].get("by_category", {})
        cells = [mode, _row_name(summary), "on" if summary["memory"] else "off"]
        for category in categories:
            row = table.get(category)
            cells.append(
                "\u2013"
                if row is None
                else f"{_fmt(row['ask_rate'])} / {_fmt(row['ask_f1'])} / "
                f"{_fmt(row['task_success'])} ({row['episodes']})"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def category_table(summaries: Sequence[Mapping[str, Any]]) -> str:
    esc = html.escape
    categories = ("clear", "missing", "ambiguous", "contradictory")
    head = "".join(f"<th>{c}: ask rate</th><th>{c}: ask F1</th>" for c in categories)
    rows = []
    for summary in summaries:
        table = summary["metrics"].get("by_category", {})
        cells = "".join(
            f"<td>{_fmt((table.get(c) or {}).get('ask_rate'))}</td>"
            f"<td>{_fmt((table.get(c) or {}).get('ask_f1'))}</td>"
            for c in categories
        )
        rows.append(f"<tr><th>{esc(_label(summary))}</th>{cells}</tr>")
    return (
        f'<div class="table-scroll" style="overflow-x:auto"><table class="metrics"><thead><tr>'
        f"<th>policy</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def interval_table(summaries: Sequence[Mapping[str, Any]]) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(label)}</th>" for _, label in HEADLINE)
    rows = []
    for summary in summaries:
        cells = "".join(f"<td>{esc(_ci(summary['metrics'], k))}</td>" for k, _ in HEADLINE)
        rows.append(f"<tr><th>{esc(_label(summary))}</th>{cells}</tr>")
    return (
        f'<div class="table-scroll" style="overflow-x:auto"><table class="metrics"><thead><tr>'
        f"<th>policy</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


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


def figure_categories(summaries: Sequence[Mapping[str, Any]]) -> Figure:
    """Ask rate per request category, one bar per configuration (the clear bars should be low,
    the others high)."""
    categories = ("clear", "missing", "ambiguous", "contradictory")
    figure, axis = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / max(1, len(summaries))
    for index, summary in enumerate(summaries):
        table = summary["metrics"].get("by_category", {})
        values = [(table.get(c) or {}).get("ask_rate") or 0.0 for c in categories]
        axis.bar(
            [i + index * width for i in range(len(categories))],
            values,
            width=width,
            label=_label(summary),
            color=_colour(summary, summaries),
            hatch="" if summary["memory"] else "///",
            edgecolor="white",
        )
    axis.set_xticks([i + 0.4 - width / 2 for i in range(len(categories))])
    axis.set_xticklabels(categories)
    axis.set_ylim(0, 1.05)
    axis.set_title("Ask rate per request category")
    axis.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    return figure


def figures(report: Mapping[str, Any]) -> dict[str, Figure]:
    summaries = report["summaries"]
    return {
        "policies": figure_policies(summaries),
        "categories": figure_categories(summaries),
        "adherence": figure_sessions(
            summaries, "adherence", "Preference adherence at the first attempt, by session"
        ),
        "enforcements": figure_sessions(
            summaries, "enforcements", "Enforcements per episode, by session"
        ),
        "effort": figure_effort(summaries),
    }


WRITER_KEYS = frozenset(
    {
        "preference_adherence",
        "final_preference_adherence",
        "adherence_from_second_session",
        "document_preservation",
    }
)


def metrics_table(
    summaries: Sequence[Mapping[str, Any]], *, label_head: str = "policy", mode: str = ""
) -> str:
    """The main metrics as an HTML table (one row per configuration); the writer's figures
    labelled as such in the modes where the harness writes the documents."""
    esc = html.escape
    head = "".join(
        f"<th>{esc(writer_label(label, mode) if key in WRITER_KEYS else label)}</th>"
        for key, label, _ in MAIN_METRICS
    )
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
        f"<h2>Headline, with 95 % intervals over episodes</h2>"
        f"{interval_table(report['summaries'])}"
        f"<h2>Per request category</h2>{category_table(report['summaries'])}"
        f"<h2>Main metrics</h2>"
        f"{metrics_table(report['summaries'], mode=report['config']['mode'])}"
        f"<h2>pass^k over seeds</h2><ul>{''.join(passk)}</ul>"
        f"<h2>Feedback from the simulated people</h2><ul>{''.join(feedback)}</ul>"
        f"<h2>Plots</h2>{plots}"
    )


def mode_banner(config: Mapping[str, Any]) -> str:
    esc = html.escape
    return (
        f'<p class="mode"><strong>Mode: {esc(config.get("mode_label", config["mode"]))}'
        f"</strong> ({esc(config['mode_text'])}). Split: {esc(config.get('split', 'all'))}. "
        f"Engine: {esc(config['engine'])}; simulated users: "
        f"{esc(config['user'])}; model: {esc(config['model'] or 'none')}; seeds: "
        f"{config['seeds']}; sessions: {esc(str(config['sessions'] or 'all'))}."
        + (
            " Documents are written by the harness's writer and the product's style pass: "
            "figures marked [harness writer] are theirs, not the agent's."
            if config["mode"] in WRITER_MODES
            else ""
        )
        + "</p>"
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
