"""The public log over HTTP (docs/fairness.md "Transparency log", docs/api.md "Public log of game heads").

``GET /log/checkpoint``: the latest signed checkpoint (text/plain, a C2SP signed note, with the
cosignatures of the configured witnesses); ``GET /log/consistency?from=&to=``: an RFC 9162
consistency proof; ``GET /games/{game_id}/log``: the game's leaves with their inclusion proofs
against the latest checkpoint (or the one published at ``size``); ``GET /log/cosignatures``: those
received for a checkpoint; ``POST /log/cosignatures``: a witness sends one; ``GET /log/witnesses``:
the witnesses the log is configured with. Public: the log holds
only chain hashes (each salted: docs/fairness.md "Hiding"), nothing the rules hide.
"""

from __future__ import annotations

import base64
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request
from starlette.responses import Response

from services.api.answers_people import (
    MAX_TREE_SIZE,
    ConsistencyProof,
    CosignatureAdded,
    Cosignatures,
    GameLogProofs,
    WitnessList,
)
from services.api.context import app_context
from services.api.contract import Answer, Operation, errors
from services.api.http import JSONResponse, client_address, game_id_of, network_of, read_body
from services.errors import ConflictError, InvalidError, NotFoundError
from services.fairness.transparency import log as tlog
from services.fairness.transparency.checkpoint import CheckpointError

MAX_NOTE = 4096  # a checkpoint with its signatures
MAX_LINE = 512  # one cosignature line or witness key

_CONFLICTS = {"checkpoint_unknown", "cosignatures_full", "cosignature_from_network_taken"}


class CosignaturePost(msgspec.Struct, forbid_unknown_fields=True):
    """A witness's C2SP tlog-cosignature of a checkpoint this log published"""

    checkpoint: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=MAX_NOTE,
            description="The checkpoint cosigned: its text, or the signed note",
        ),
    ]
    cosignature: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=MAX_LINE,
            description="The signature line: — <witness name> base64(key ID || timestamp || sig)",
        ),
    ]
    vkey: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=MAX_LINE,
                description="The witness's key (<name>+<key ID>+base64(0x04 || key)); required unless the "
                "service is configured with it (log_witnesses)",
            ),
        ]
        | None
    ) = None


def _size_param(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not raw.isdigit() or len(raw) > len(str(MAX_TREE_SIZE)) or int(raw) > MAX_TREE_SIZE:
        raise InvalidError(
            "log_size_invalid",
            f"The query parameter '{name}' must be a tree size (0 to {MAX_TREE_SIZE}).",
        )
    return int(raw)


def _b64(proof: list[bytes]) -> list[str]:
    return [base64.b64encode(p).decode() for p in proof]


async def _note(request: Request, size: int | None) -> str:
    store = app_context(request).store
    op = tlog.latest_checkpoint_op() if size is None else tlog.checkpoint_at_op(size)
    note = await store.run(op)
    if note is None:
        which = "yet" if size is None else f"at size {size}"
        raise NotFoundError("checkpoint_not_found", f"The log has published no checkpoint {which}.")
    return note


async def get_checkpoint(request: Request) -> Response:
    note = await _note(request, None)
    cosigned = await app_context(request).store.run(tlog.cosigned_op(note))
    return Response(cosigned, media_type="text/plain; charset=utf-8", headers={"Cache-Control": "no-cache"})


async def get_consistency(request: Request) -> JSONResponse:
    old, new = _size_param(request, "from"), _size_param(request, "to")
    store = app_context(request).store
    size = await store.run(tlog.size_op())
    new = size if new is None else new
    if old is None or not old <= new <= size:
        raise InvalidError(
            "log_size_invalid", f"Give 'from' and 'to' with from <= to <= {size} (the log's size)."
        )
    proof = await store.run(tlog.consistency_op(old, new))
    return JSONResponse({"from": old, "to": new, "proof": _b64(proof)})


async def get_game_log(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    size = _size_param(request, "size")
    if size is not None:
        await _note(request, size)  # 404 when no checkpoint was published at that size
    context = app_context(request)
    proofs = await context.store.run(tlog.proofs_for_game_op(game_id, size))
    if size is not None:
        return JSONResponse(proofs)
    # against the latest checkpoint: also when the next one is due, for a head not in this one yet
    settings = context.settings
    due = tlog.next_checkpoint_due(
        context.queries.clock(), settings.log_checkpoint_seconds, settings.log_append_seconds
    )
    return JSONResponse(tlog.with_next_checkpoint(proofs, due))


async def get_witnesses(request: Request) -> JSONResponse:
    keys = app_context(request).settings.witness_keys
    return JSONResponse({"witnesses": [{"name": key.name, "vkey": key.vkey} for key in keys]})


async def get_cosignatures(request: Request) -> JSONResponse:
    note = await _note(request, _size_param(request, "size"))
    docs = await app_context(request).store.run(tlog.cosignatures_op(note))
    return JSONResponse({"checkpoint": note, "cosignatures": docs})


async def post_cosignature(request: Request) -> JSONResponse:
    context = app_context(request)
    address = client_address(request)
    await context.rate_limits.hit("cosignature", address)
    body = await read_body(request, CosignaturePost)
    op = tlog.add_cosignature_op(
        body.checkpoint, body.cosignature, context.settings.witness_keys, body.vkey, network_of(address)
    )
    try:
        doc: dict[str, Any] = await context.store.run(op)
    except CheckpointError as error:
        kind = ConflictError if error.code in _CONFLICTS else InvalidError
        raise kind(error.code, error.message) from None
    return JSONResponse({"cosignature": doc}, status_code=201)


class GetGameLogQuery(msgspec.Struct):
    size: (
        Annotated[int, Meta(ge=0, le=MAX_TREE_SIZE, description="A published checkpoint's size")] | UnsetType
    ) = UNSET


class GetConsistencyQuery(msgspec.Struct, rename={"from_": "from"}):
    from_: Annotated[int, Meta(ge=0, le=MAX_TREE_SIZE, description="The older size")]
    to: (
        Annotated[int, Meta(ge=0, le=MAX_TREE_SIZE, description="The newer size (default: the log's size)")]
        | UnsetType
    ) = UNSET


class GetCosignaturesQuery(msgspec.Struct):
    size: (
        Annotated[
            int,
            Meta(
                ge=0,
                le=MAX_TREE_SIZE,
                description="The checkpoint published at this size (default: the latest)",
            ),
        ]
        | UnsetType
    ) = UNSET


operations = [
    Operation(
        "GET",
        "/log/checkpoint",
        get_checkpoint,
        answers={200: Answer("The signed note", str, media_type="text/plain")},
        summary=(
            "The latest signed checkpoint of the log of game heads (C2SP tlog-checkpoint as a signed note, "
            "with the configured witnesses' cosignatures)"
        ),
        errors=errors(404, s404="checkpoint_not_found: none published yet"),
    ),
    Operation(
        "GET",
        "/log/consistency",
        get_consistency,
        answers={200: Answer("{from, to, proof: [base64 hashes]}", ConsistencyProof)},
        summary="An RFC 9162 consistency proof between two tree sizes",
        query=GetConsistencyQuery,
        errors=errors(422, s422="log_size_invalid: not from <= to <= the log's size"),
    ),
    Operation(
        "GET",
        "/log/witnesses",
        get_witnesses,
        answers={200: Answer("{witnesses: [{name, vkey}]}", WitnessList)},
        summary=(
            "The witnesses this log is configured with, whose cosignatures its checkpoints carry (a "
            "verifier may take them as its own: tablestream verify --witnesses URL)"
        ),
    ),
    Operation(
        "GET",
        "/log/cosignatures",
        get_cosignatures,
        answers={
            200: Answer("{checkpoint, cosignatures: [{witness, line, known, vkey, timestamp}]}", Cosignatures)
        },
        summary="The witnesses' cosignatures received for a checkpoint",
        query=GetCosignaturesQuery,
        errors=errors(404, 422, s404="checkpoint_not_found", s422="log_size_invalid"),
    ),
    Operation(
        "POST",
        "/log/cosignatures",
        post_cosignature,
        answers={201: Answer("{cosignature: {witness, line, known, vkey, timestamp}}", CosignatureAdded)},
        summary="A witness sends its cosignature of a checkpoint this log published",
        body=CosignaturePost,
        errors=errors(
            409,
            422,
            s409=(
                "checkpoint_unknown (never published here), cosignatures_full (too many unknown witnesses on "
                "this checkpoint), cosignature_from_network_taken (this client network already added an "
                "unknown witness to it)"
            ),
            s422=(
                "checkpoint_malformed, cosignature_malformed, witness_key_malformed, cosignature_invalid (it "
                "does not verify, or an unknown witness sent no vkey)"
            ),
        ),
        rate_limited=True,
    ),
    Operation(
        "GET",
        "/games/{game_id}/log",
        get_game_log,
        answers={200: Answer("The proofs (also in exports and dispute bundles)", GameLogProofs)},
        summary=(
            "The game's leaves in the log (its creation, round ends and final head) with their inclusion "
            "proofs against the latest checkpoint or the one published at 'size'"
        ),
        query=GetGameLogQuery,
        errors=errors(404, 422, s404="checkpoint_not_found (at that size)", s422="log_size_invalid"),
    ),
]
