"""The contract is the routes' own: every route the app serves (but the web client's pages) has
exactly one declaration (``services.api.contract.Operation``) and appears in ``/openapi.json``, and no
declaration lacks its route."""

from __future__ import annotations

import re
from collections import Counter

from starlette.routing import Route

from services.api import operator_routes
from services.api.operations import OPERATIONS
from services.api.web import web_routes
from tests.api.conftest import Api

PAGES = {route.path for route in [*web_routes(), *operator_routes.pages] if isinstance(route, Route)}
"""The web client's pages and assets (HTML and files, not the API)."""


def template(path: str) -> str:
    """A route's path as the document writes it: ``{name:convertor}`` is ``{name}``."""
    return re.sub(r"{(\w+):\w+}", r"{\1}", path)


def test_every_route_has_exactly_one_declaration_and_every_declaration_its_route(fake_api: Api) -> None:
    served = Counter(
        (template(route.path), method)
        for route in fake_api.client.app.routes  # type: ignore[attr-defined]
        if isinstance(route, Route) and route.path not in PAGES
        for method in route.methods or ()
        if method != "HEAD"  # Starlette's own, with every GET
    )
    declared = Counter((operation.path, operation.method) for operation in OPERATIONS)
    assert max(declared.values()) == 1, [key for key, count in declared.items() if count > 1]
    assert served == declared


def test_the_document_has_every_declared_operation_and_no_other(fake_api: Api) -> None:
    document = fake_api.client.get("/openapi.json").json()
    documented = {
        (path, method.upper())
        for path, item in document["paths"].items()
        for method in item
        if method != "parameters"
    }
    assert documented == {(operation.path, operation.method) for operation in OPERATIONS}


def test_every_declared_answer_and_error_is_documented(fake_api: Api) -> None:
    paths = fake_api.client.get("/openapi.json").json()["paths"]
    for operation in OPERATIONS:
        responses = paths[operation.path][operation.method.lower()]["responses"]
        assert {str(status) for status in [*operation.answers, *operation.errors]} <= set(responses)
