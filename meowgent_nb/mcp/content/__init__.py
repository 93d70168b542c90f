"""MCP content blocks both ways: a tool result's text, images, audio and links as notebook values, how a cassette
keeps them, and a served value written as blocks (`served`)."""
