"""80 tools of the kind business services publish over MCP: 16 resources, 5 operations each.

They make the 100-tool set of `_toolsets.py` (with the 20 seed and notebook tools): what an agent
sees when a person connects a CRM, a shop, a help desk and a few more servers. Each resource has
its own fields (types, enums, descriptions) and its own operations (not every resource is
deleted: orders are cancelled, tickets closed, contracts archived), so no two tools are copies.
The tools are `Tool.from_schema` tools whose handler is never run by the benchmarks.
"""

from __future__ import annotations

from typing import Any

from meowgent_nb import Tool

__all__ = ["SERVICE_TOOLS"]

# resource, plural, what it is, its fields: name -> (JSON type, description, enum or None), operations
_S, _I, _N, _B = "string", "integer", "number", "boolean"

RESOURCES: list[tuple[str, str, str, dict[str, tuple[str, str, list[str] | None]], list[str]]] = [
    (
        "customer",
        "customers",
        "a customer record in the CRM",
        {
            "name": (_S, "Full name or company name", None),
            "email": (_S, "Primary contact email", None),
            "segment": (_S, "Customer segment", ["enterprise", "smb", "consumer"]),
            "country": (_S, "ISO 3166-1 alpha-2 country code", None),
        },
        ["get", "list", "create", "update", "delete"],
    ),
    (
        "order",
        "orders",
        "a web-shop order",
        {
            "customer_id": (_S, "The customer who placed the order", None),
            "status": (_S, "Fulfilment status", ["pending", "paid", "shipped", "delivered", "cancelled"]),
            "total": (_N, "Order total in the shop currency", None),
            "placed_after": (_S, "Only orders placed after this date, YYYY-MM-DD", None),
        },
        ["get", "list", "create", "cancel", "refund"],
    ),
    (
        "product",
        "products",
        "a product in the catalog",
        {
            "title": (_S, "Product title as shown in the shop", None),
            "sku": (_S, "Stock keeping unit", None),
            "price": (_N, "Price before tax", None),
            "category": (_S, "Catalog category, e.g. Garden", None),
        },
        ["get", "list", "create", "update", "archive"],
    ),
    (
        "ticket",
        "tickets",
        "a help-desk support ticket",
        {
            "subject": (_S, "One-line summary of the problem", None),
            "priority": (_S, "How urgent it is", ["low", "normal", "high", "urgent"]),
            "requester_email": (_S, "Who reported it", None),
            "assignee": (_S, "The agent working on it", None),
        },
        ["get", "list", "create", "assign", "close"],
    ),
    (
        "employee",
        "employees",
        "an employee in the HR system",
        {
            "full_name": (_S, "First and last name", None),
            "department": (_S, "Department, e.g. Finance", None),
            "start_date": (_S, "First working day, YYYY-MM-DD", None),
            "manager_id": (_S, "The employee's manager", None),
        },
        ["get", "list", "create", "update", "offboard"],
    ),
    (
        "shipment",
        "shipments",
        "a parcel shipment with a carrier",
        {
            "order_id": (_S, "The order being shipped", None),
            "carrier": (_S, "Shipping carrier", ["dhl", "ups", "fedex", "usps"]),
            "weight_kg": (_N, "Parcel weight in kilograms", None),
            "express": (_B, "Next-day delivery", None),
        },
        ["get", "list", "create", "track", "cancel"],
    ),
    (
        "pull_request",
        "pull_requests",
        "a pull request on the code host",
        {
            "repository": (_S, "owner/name of the repository", None),
            "title": (_S, "Title of the change", None),
            "base_branch": (_S, "Branch to merge into, e.g. main", None),
            "draft": (_B, "Open as a draft", None),
        },
        ["get", "list", "create", "merge", "close"],
    ),
    (
        "contract",
        "contracts",
        "a signed customer contract",
        {
            "customer_id": (_S, "The customer who signed", None),
            "value": (_N, "Annual contract value", None),
            "renewal_date": (_S, "Next renewal, YYYY-MM-DD", None),
            "term_months": (_I, "Length of the term in months", None),
        },
        ["get", "list", "create", "renew", "archive"],
    ),
    (
        "campaign",
        "campaigns",
        "an email marketing campaign",
        {
            "name": (_S, "Internal campaign name", None),
            "audience": (_S, "Mailing list to send to", None),
            "send_at": (_S, "When to send, ISO 8601", None),
            "channel": (_S, "Delivery channel", ["email", "sms", "push"]),
        },
        ["get", "list", "create", "schedule", "pause"],
    ),
    (
        "expense",
        "expenses",
        "an expense claim",
        {
            "amount": (_N, "Amount spent", None),
            "currency": (_S, "Currency code", ["EUR", "USD", "GBP", "CHF"]),
            "category": (_S, "Expense category", ["travel", "meals", "software", "hardware", "other"]),
            "receipt_url": (_S, "Link to the scanned receipt", None),
        },
        ["get", "list", "submit", "approve", "reject"],
    ),
    (
        "room_booking",
        "room_bookings",
        "a meeting-room booking",
        {
            "room": (_S, "Room name, e.g. Atlas", None),
            "starts_at": (_S, "Start time, ISO 8601", None),
            "duration_minutes": (_I, "How long the room is needed", None),
            "attendees": (_I, "Number of people", None),
        },
        ["get", "list", "create", "update", "cancel"],
    ),
    (
        "dataset",
        "datasets",
        "a dataset in the data catalog",
        {
            "name": (_S, "Dataset name", None),
            "owner": (_S, "Team that owns it", None),
            "format": (_S, "Storage format", ["parquet", "csv", "json", "delta"]),
            "row_count": (_I, "Number of rows", None),
        },
        ["get", "list", "register", "update", "deprecate"],
    ),
    (
        "training_run",
        "training_runs",
        "a machine-learning training run",
        {
            "model_name": (_S, "The model being trained", None),
            "learning_rate": (_N, "Optimizer learning rate", None),
            "epochs": (_I, "Passes over the training data", None),
            "gpu_type": (_S, "Accelerator to use", ["a100", "h100", "l4", "cpu"]),
        },
        ["get", "list", "start", "stop", "compare"],
    ),
    (
        "dns_record",
        "dns_records",
        "a DNS record of a domain",
        {
            "domain": (_S, "The zone, e.g. example.com", None),
            "record_type": (_S, "Record type", ["A", "AAAA", "CNAME", "MX", "TXT"]),
            "value": (_S, "What the record points to", None),
            "ttl": (_I, "Time to live in seconds", None),
        },
        ["get", "list", "create", "update", "delete"],
    ),
    (
        "subscription",
        "subscriptions",
        "a customer's billing subscription",
        {
            "customer_id": (_S, "The subscribed customer", None),
            "plan": (_S, "Billing plan", ["free", "pro", "team", "enterprise"]),
            "seats": (_I, "Number of paid seats", None),
            "billing_period": (_S, "How often it is billed", ["monthly", "yearly"]),
        },
        ["get", "list", "create", "upgrade", "cancel"],
    ),
    (
        "inventory_item",
        "inventory_items",
        "stock of a product in a warehouse",
        {
            "sku": (_S, "Stock keeping unit", None),
            "warehouse": (_S, "Warehouse code, e.g. BER-1", None),
            "quantity": (_I, "Units on hand", None),
            "reorder_level": (_I, "Reorder when stock falls below this", None),
        },
        ["get", "list", "adjust", "transfer", "count"],
    ),
]

# operation -> (description template, which fields it takes: "id", "filters", "all", "some")
OPERATIONS: dict[str, tuple[str, str]] = {
    "get": ("Get one {what} by its id, with all its fields.", "id"),
    "list": ("List {plural}, newest first, optionally filtered.", "filters"),
    "create": ("Create {a} and return its id.", "all"),
    "update": ("Change fields of {a}; fields left out keep their value.", "id+some"),
    "delete": ("Delete {a} for good. This cannot be undone.", "id"),
    "cancel": ("Cancel {a}; it stays on record as cancelled.", "id+reason"),
    "refund": ("Refund {a}, fully or partly, to the original payment method.", "id+amount"),
    "archive": ("Archive {a} so it no longer shows in lists; it can be restored.", "id"),
    "assign": ("Assign {a} to a person.", "id+assignee"),
    "close": ("Close {a} with a resolution note.", "id+reason"),
    "offboard": ("Start offboarding for {a}: revoke access and schedule the last day.", "id+date"),
    "track": ("Get the live tracking events of {a}.", "id"),
    "merge": ("Merge {a} into its base branch.", "id+method"),
    "renew": ("Renew {a} for another term.", "id+some"),
    "schedule": ("Schedule {a} to be sent at a time.", "id+when"),
    "pause": ("Pause {a}; nothing more is sent until it is resumed.", "id"),
    "submit": ("Submit {a} for approval.", "all"),
    "approve": ("Approve {a} so it is paid out.", "id"),
    "reject": ("Reject {a}, telling the submitter why.", "id+reason"),
    "register": ("Register {a} so others can find it.", "all"),
    "deprecate": ("Mark {a} as deprecated, pointing to its replacement.", "id+replacement"),
    "start": ("Start {a} on the cluster and return its id.", "all"),
    "stop": ("Stop {a} that is running; its checkpoints are kept.", "id"),
    "compare": ("Compare the metrics of two or more {plural}.", "ids"),
    "upgrade": ("Move {a} to another plan, prorated.", "id+plan"),
    "adjust": ("Add or remove units of {a} after a delivery or a loss.", "id+delta"),
    "transfer": ("Move units of {a} to another warehouse.", "id+target"),
    "count": ("Record a physical stock count of {a}.", "id+counted"),
}

_EXTRA: dict[str, tuple[str, str, list[str] | None]] = {
    "reason": (_S, "Why, in a sentence; kept with the record", None),
    "amount": (_N, "Amount to refund; the whole total when omitted", None),
    "assignee": (_S, "Email of the person", None),
    "date": (_S, "The last working day, YYYY-MM-DD", None),
    "method": (_S, "How to merge", ["merge", "squash", "rebase"]),
    "when": (_S, "Send time, ISO 8601", None),
    "replacement": (_S, "Name of what to use instead", None),
    "plan": (_S, "The new plan", ["free", "pro", "team", "enterprise"]),
    "delta": (_I, "Units to add (positive) or remove (negative)", None),
    "target": (_S, "Warehouse code to move the units to", None),
    "counted": (_I, "Units found in the count", None),
}


def _property(kind: str, description: str, enum: list[str] | None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind, "description": description}
    if enum:
        schema["enum"] = enum
    return schema


def _schema(
    resource: str, fields: dict[str, tuple[str, str, list[str] | None]], takes: str
) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    id_name = f"{resource}_id"
    if takes == "ids":
        ids = {"type": "array", "items": {"type": "string"}, "description": "The ids to compare"}
        properties[f"{resource}_ids"] = ids
        required.append(f"{resource}_ids")
    if takes.startswith("id"):
        properties[id_name] = {"type": "string", "description": f"The {resource.replace('_', ' ')}'s id"}
        required.append(id_name)
    if takes == "filters":
        for name, (kind, description, enum) in list(fields.items())[:3]:
            properties[name] = _property(kind, f"Only these: {description[0].lower()}{description[1:]}", enum)
        properties["limit"] = {"type": "integer", "description": "At most this many", "default": 20}
    if takes in ("all", "id+some"):
        for name, (kind, description, enum) in fields.items():
            properties[name] = _property(kind, description, enum)
            if takes == "all":
                required.append(name)
    extra = takes.split("+", 1)[1] if "+" in takes and takes != "id+some" else None
    if extra:
        properties[extra] = _property(*_EXTRA[extra])
        if extra not in ("amount",):
            required.append(extra)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _never_run(**arguments: Any) -> str:
    raise AssertionError("benchmark tools are not run")


def _tools() -> list[Tool]:
    made = []
    for resource, plural, what, fields, operations in RESOURCES:
        bare = what.split(" ", 1)[1]  # "a customer record in the CRM" -> "customer record in the CRM"
        for operation in operations:
            template, takes = OPERATIONS[operation]
            name = f"list_{plural}" if operation == "list" else f"{operation}_{resource}"
            if operation == "compare":
                name = f"compare_{plural}"
            description = template.format(what=bare, plural=plural.replace("_", " "), a=what)
            made.append(Tool.from_schema(name, description, _schema(resource, fields, takes), _never_run))
    return made


SERVICE_TOOLS: list[Tool] = _tools()
