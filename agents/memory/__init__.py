"""Preference memory: what agents remember about people, under each person's control."""
