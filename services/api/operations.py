"""Every operation of the API in the order the router tries them (the hot paths, commands and views,
first; no two overlap): each module's declarations (``services.api.contract``). ``services.api.app``
serves these routes and ``services.api.openapi`` documents exactly these."""

from __future__ import annotations

from services.api import (
    account_routes,
    chat_routes,
    dispute_routes,
    hint_routes,
    history_routes,
    invite_routes,
    live,
    lobby_live,
    log_routes,
    operator_routes,
    quickplay_routes,
    rematch_routes,
    review_routes,
    routes,
    service_routes,
    web,
    your_tables_routes,
)
from services.api.contract import Operation

OPERATIONS: tuple[Operation, ...] = (
    *routes.operations,
    *live.operations,
    *lobby_live.operations,
    *your_tables_routes.operations,
    *history_routes.operations,
    *log_routes.operations,
    *hint_routes.operations,
    *review_routes.operations,
    *chat_routes.operations,
    *invite_routes.operations,
    *rematch_routes.operations,
    *account_routes.operations,
    *quickplay_routes.operations,
    *dispute_routes.operations,
    *operator_routes.operations,
    *web.operations,
    *service_routes.operations,
)
