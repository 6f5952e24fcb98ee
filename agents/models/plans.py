"""A task's shared plan (issue 30, ADR 0024): the steps a coordinator agent proposed, as
checklist lines of the document (``agents.chains.plan`` reads and writes them), each with an
assignee (an agent of the task or a person) and a status. "Done" is a decision: who decided it
(the assignee agent's own check, or a person) is recorded with it."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from agents.chains import plan as plan_format
from agents.models.agents import Agent
from agents.models.turns import Turn
from agents.models.work import Suggestion
from collab.tasks.models import Task


class Plan(models.Model):
    class Status(models.TextChoices):
        PROPOSED = "proposed", "Proposed (waiting for a person)"
        APPROVED = "approved", "Approved"

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="agent_plan")
    coordinator = models.ForeignKey(
        Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PROPOSED)
    suggestion = models.ForeignKey(
        Suggestion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    problems = models.JSONField(
        default=list, blank=True, help_text="Lines of the plan section that are not steps."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Plan of task {self.task_id} ({self.status})"


class PlanStep(models.Model):
    class Status(models.TextChoices):
        TODO = plan_format.TODO, "To do"
        DOING = plan_format.DOING, "Doing"
        BLOCKED = plan_format.BLOCKED, "Blocked"
        DONE = plan_format.DONE, "Done"

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveSmallIntegerField(help_text="Its place in the plan, from 0.")
    text = models.CharField(max_length=plan_format.STEP_TEXT_MAX)
    assignee_name = models.CharField(max_length=150, blank=True, help_text="As written (@name).")
    agent = models.ForeignKey(
        Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="plan_steps"
    )
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.TODO)
    note = models.CharField(max_length=300, blank=True)
    line = models.CharField(max_length=600, blank=True, help_text="Its line in the document.")
    turn = models.ForeignKey(
        Turn, on_delete=models.SET_NULL, null=True, blank=True, related_name="plan_steps"
    )
    done_by_agent = models.ForeignKey(
        Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    done_by_person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    done_at = models.DateTimeField(null=True, blank=True)
    verification = models.CharField(
        max_length=300, blank=True, help_text="The check that passed, or why it did not."
    )

    class Meta:
        ordering = ["plan", "index"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "index"], name="one_plan_step_per_index"),
        ]

    def __str__(self) -> str:
        return f"Step {self.index + 1} of plan {self.plan_id} ({self.status})"

    @property
    def decided_by(self) -> str:
        if self.done_by_agent_id:
            return self.done_by_agent.name if self.done_by_agent else ""
        return self.done_by_person.get_username() if self.done_by_person else ""
