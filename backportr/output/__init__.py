"""Renderers of results: text for people, JSON for machines (schemas in docs/)."""
