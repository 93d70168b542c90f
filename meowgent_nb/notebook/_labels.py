"""The words on every button a person clicks in a running cell (`BUTTONS`), in one place.

tests/test_button_names.py checks the names the course and README mention against them.
"""

from __future__ import annotations

__all__ = [
    "ACCEPT",
    "ADD_RULE",
    "ADD_RULE_ONLY",
    "ALLOW_EXACT",
    "ALLOW_LIKE",
    "ALWAYS_ALLOW",
    "APPROVE",
    "APPROVE_EDITED",
    "BUTTONS",
    "CANCEL",
    "CHECK",
    "DECLINE",
    "DENY",
    "DENY_REASON",
    "EDIT",
    "EDIT_CODE",
    "INSERT_BELOW",
    "LET_MODEL_ANSWER",
    "NOT_NOW",
    "SEND_ANSWER",
    "SEND_DENIAL",
    "STOP",
    "TRUST_RULES",
]

# A call waiting for approval (`_approval_row`).
APPROVE = "Approve"
EDIT = "Edit arguments"
EDIT_CODE = "Edit code"  # a call of a tool with a code_argument
DENY = "Deny"
ALWAYS_ALLOW = "Always allow"
ALLOW_EXACT = "Allow this exact call"
ALLOW_LIKE = "Allow calls like this\u2026"
DENY_REASON = "Deny with a reason"
ADD_RULE = "Add rule and approve"
ADD_RULE_ONLY = "Add rule only"
SEND_DENIAL = "Deny with this reason"
CHECK = "Check"
APPROVE_EDITED = "Approve these arguments"
# A rules file whose allow rules wait for the person's trust (`trust_panel`).
TRUST_RULES = "Trust these rules"
# The running cell (`live_view`).
STOP = "Stop"
# A form a server asks a person to fill in (`notebook.mcp._elicit_form`).
ACCEPT = "Accept"
DECLINE = "Decline"
CANCEL = "Cancel"
# A server asking to use the model, and the model's answer before it goes back (`notebook.mcp.server_asks`).
LET_MODEL_ANSWER = "Let the model answer"
SEND_ANSWER = "Send the answer"
# A cell the agent proposes (`notebook.approvals.proposal_card`).
INSERT_BELOW = "Insert below"
NOT_NOW = "Not now"

BUTTONS = frozenset(
    {
        APPROVE,
        EDIT,
        EDIT_CODE,
        DENY,
        ALWAYS_ALLOW,
        ALLOW_EXACT,
        ALLOW_LIKE,
        DENY_REASON,
        ADD_RULE,
        ADD_RULE_ONLY,
        SEND_DENIAL,
        CHECK,
        APPROVE_EDITED,
        STOP,
        ACCEPT,
        DECLINE,
        CANCEL,
        LET_MODEL_ANSWER,
        SEND_ANSWER,
        TRUST_RULES,
        INSERT_BELOW,
        NOT_NOW,
    }
)
"""Every button label there is."""
