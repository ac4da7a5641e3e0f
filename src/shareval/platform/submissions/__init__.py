"""Uploads, validation, the scoring queue and results."""
