"""The values a server's images, audio and links become (moved to `meowgent_nb.tools.media`, which
the agent and every tool share; imported here by their old place)."""

from ...tools.media import McpAudio, McpImage, McpLink, McpText

__all__ = ["McpAudio", "McpImage", "McpLink", "McpText"]
