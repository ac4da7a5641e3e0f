"""Competitions, their tasks, phases, datasets (hidden references), quotas and teams."""
