"""OAuth for an `McpToolbox` on streamable HTTP: the mcp SDK's client providers, with tokens kept per server.

`OAuth` (options.py) says how a box authorizes; `provider` (providers.py) makes the SDK's provider
from it, which does the protocol: discovery of the server's protected-resource and
authorization-server metadata, dynamic client registration (or the client id given), the
authorization code with PKCE, and token refresh. What this room adds is the ends the SDK leaves open:

- Where the person authorizes (browser.py): the link is shown (`OAuth.show`, a button in a
  notebook cell) and a server on 127.0.0.1 receives the answer, or a program's ``authorize``
  handler is given the link and returns the address the browser was sent back to.
- Where tokens live (tokens.py): a file per server under the user's config directory
  (``platformdirs.user_config_dir("meowgent_nb")/oauth``), readable by its owner only (0600),
  never in a notebook or a cassette. Every token and client secret read or written is added to
  the box's secrets, which are masked in every error, listing and result.
- What a refusal says (refusal.py): one line, with the fix.
"""

from __future__ import annotations

from .browser import OAuthWaitError
from .options import OAuth, oauth_options, token_dir
from .providers import provider
from .refusal import refusal
from .tokens import TokenFile

__all__ = ["OAuth", "OAuthWaitError", "TokenFile", "oauth_options", "provider", "refusal", "token_dir"]
