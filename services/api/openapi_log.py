"""The public log of game heads' part of ``/openapi.json`` (``services.api.log_routes``)."""

from __future__ import annotations

from typing import Any

from services.api.log_routes import MAX_LINE, MAX_NOTE, MAX_TREE_SIZE

SIZE = {"type": "integer", "minimum": 0, "maximum": MAX_TREE_SIZE}


def log_schemas() -> dict[str, Any]:
    return {
        "CosignaturePost": {
            "title": "CosignaturePost",
            "description": "A witness's C2SP tlog-cosignature of a checkpoint this log published",
            "type": "object",
            "required": ["checkpoint", "cosignature"],
            "properties": {
                "checkpoint": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_NOTE,
                    "description": "The checkpoint cosigned: its text, or the signed note",
                },
                "cosignature": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_LINE,
                    "description": "The signature line: — <witness name> base64(key ID || timestamp || sig)",
                },
                "vkey": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_LINE,
                    "description": "The witness's key (<name>+<key ID>+base64(0x04 || key)); required "
                    "unless the service is configured with it (log_witnesses)",
                },
            },
            "additionalProperties": False,
        },
        "GameLogProofs": {
            "title": "GameLogProofs",
            "type": "object",
            "required": ["format", "checkpoint", "size", "leaves", "pending"],
            "properties": {
                "format": {"const": "tablestream-log-proofs/1"},
                "checkpoint": {"type": ["string", "null"], "description": "The signed checkpoint"},
                "size": SIZE,
                "leaves": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["index", "version", "hash", "leaf", "proof"],
                        "properties": {
                            "index": SIZE,
                            "version": {"type": "integer", "minimum": 1},
                            "hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                            "leaf": {"type": "string", "description": "The leaf's bytes, base64"},
                            "proof": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                },
                "pending": {"type": "array", "items": {"type": "integer"}},
                "next_checkpoint": {
                    "type": "integer",
                    "description": "Unix seconds by which the log's next checkpoint is due: a head not "
                    "in this checkpoint yet is provable after it (against the latest checkpoint only; in "
                    "an export, only while its newest head is not proven)",
                },
            },
        },
    }


def log_paths(
    game: dict[str, Any], body: Any, ok: Any, errors: Any, body_errors: tuple[int, ...]
) -> dict[str, Any]:
    def size_query(name: str, description: str) -> dict[str, Any]:
        return {"name": name, "in": "query", "required": False, "schema": SIZE, "description": description}

    plain = {"text/plain": {"schema": {"type": "string"}}}
    return {
        "/log/checkpoint": {
            "get": {
                "summary": "The latest signed checkpoint of the log of game heads (C2SP tlog-checkpoint "
                "as a signed note, with the configured witnesses' cosignatures)",
                "responses": {
                    "200": {"description": "The signed note", "content": plain},
                    **errors(404, s404="checkpoint_not_found: none published yet"),
                },
            }
        },
        "/log/consistency": {
            "get": {
                "summary": "An RFC 9162 consistency proof between two tree sizes",
                "parameters": [
                    {**size_query("from", "The older size"), "required": True},
                    size_query("to", "The newer size (default: the log's size)"),
                ],
                "responses": {
                    "200": ok("{from, to, proof: [base64 hashes]}"),
                    **errors(422, s422="log_size_invalid: not from <= to <= the log's size"),
                },
            }
        },
        "/log/cosignatures": {
            "get": {
                "summary": "The witnesses' cosignatures received for a checkpoint",
                "parameters": [
                    size_query("size", "The checkpoint published at this size (default: the latest)")
                ],
                "responses": {
                    "200": ok("{checkpoint, cosignatures: [{witness, line, known, vkey, timestamp}]}"),
                    **errors(404, 422, s404="checkpoint_not_found", s422="log_size_invalid"),
                },
            },
            "post": {
                "summary": "A witness sends its cosignature of a checkpoint this log published",
                "requestBody": body("CosignaturePost"),
                "responses": {
                    "201": ok("{cosignature: {witness, line, known, vkey, timestamp}}"),
                    **errors(
                        *body_errors,
                        409,
                        s409="checkpoint_unknown (never published here), cosignatures_full (too many "
                        "unknown witnesses on this checkpoint), cosignature_from_network_taken (this "
                        "client network already added an unknown witness to it)",
                        s422="checkpoint_malformed, cosignature_malformed, witness_key_malformed, "
                        "cosignature_invalid (it does not verify, or an unknown witness sent no vkey)",
                    ),
                },
            },
        },
        "/games/{game_id}/log": {
            **game,
            "get": {
                "summary": "The game's leaves in the log (its creation, round ends and final head) with "
                "their inclusion proofs against the latest checkpoint or the one published at 'size'",
                "parameters": [size_query("size", "A published checkpoint's size")],
                "responses": {
                    "200": ok(
                        "The proofs (also in exports and dispute bundles)",
                        {"$ref": "#/components/schemas/GameLogProofs"},
                    ),
                    **errors(404, 422, s404="checkpoint_not_found (at that size)", s422="log_size_invalid"),
                },
            },
        },
    }
