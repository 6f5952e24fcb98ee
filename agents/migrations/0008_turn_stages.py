"""A turn's trace: each stage a delivery ran, with its duration and summary."""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agents", "0007_default_agents")]

    operations = [
        migrations.AddField(
            model_name="turn",
            name="stages",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text=(
                    "Each stage a delivery ran: its duration and summary (agents/engine/trace.py)."
                ),
            ),
        ),
    ]
