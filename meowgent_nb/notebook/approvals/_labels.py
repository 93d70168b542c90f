"""The words on every button a person clicks in a running cell, in one place.

The course notebooks and the README name these buttons; `tests/test_button_names.py` checks each
name they mention against `BUTTONS`, so a renamed button cannot leave a lesson pointing at nothing.
"""

from __future__ import annotations

__all__ = [
    "ACCEPT", "ALWAYS_ALLOW", "APPROVE", "APPROVE_EDITED", "BUTTONS", "CANCEL", "CHECK", "DECLINE", "DENY",
    "EDIT", "LET_MODEL_ANSWER", "SEND_ANSWER", "STOP",
]

# A call waiting for approval (`_approval_row`).
APPROVE = "Approve"
EDIT = "Edit arguments"
DENY = "Deny"
ALWAYS_ALLOW = "Always allow"
CHECK = "Check"
APPROVE_EDITED = "Approve these arguments"
# The running cell (`live_view`).
STOP = "Stop"
# A form a server asks a person to fill in (`_elicit_form`).
ACCEPT = "Accept"
DECLINE = "Decline"
CANCEL = "Cancel"
# A server asking to use the model, and the model's answer before it goes back (`server_asks`).
LET_MODEL_ANSWER = "Let the model answer"
SEND_ANSWER = "Send the answer"

BUTTONS = frozenset({APPROVE, EDIT, DENY, ALWAYS_ALLOW, CHECK, APPROVE_EDITED, STOP, ACCEPT, DECLINE, CANCEL,
                     LET_MODEL_ANSWER, SEND_ANSWER})
"""Every button label there is."""
