"""Showing runs in the running cell: the transcript and its cards, the live view, the context window and eval tables."""
