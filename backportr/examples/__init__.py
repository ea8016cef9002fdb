"""Bundled example scenarios (the IMA/overlayfs case) for the demo, fixtures and tests."""
