"""MCP content as notebook values: a tool result's text, images, audio and links, and how a cassette keeps them."""
