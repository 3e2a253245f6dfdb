"""The name a seat is taken under: the name rule of accounts (``services.accounts.names``), no lookalike of a
registered account's name, and an account's own name for an account.

- An account takes its seat under its own display name; a join naming anyone else is refused
  (``name_not_yours``), since a seat's name is what the other players read.
- Anyone else's name obeys the account rule (NFKC, no invisible, control, bidi or combining-stack
  characters, one script) and may not be a registered account's name (``name_taken``, 409) or look
  like one (``name_confusable``, 422, the error's ``like`` naming it): one skeleton lookup and, on
  a hit, one account read.
"""

from __future__ import annotations

from domain.accounts import AccountState
from services.accounts.names import check_single_script, checked_seat_name, normalise
from services.accounts.registry import Accounts
from services.errors import ConflictError, InvalidError
from services.store import accounts as store_accounts


async def seat_name(accounts: Accounts, raw: str | None, account: AccountState | None) -> str:
    """The name to seat under, or the error saying why ``raw`` may not be it."""
    if account is not None:
        if raw is not None and normalise(raw) != account.normalised:
            raise InvalidError(
                "name_not_yours",
                f"An account sits under its own name: join without a name, or as {account.display_name!r}.",
            )
        return account.display_name
    if raw is None:
        raise InvalidError("invalid_name", "A player name is required (or join with an account token).")
    name = checked_seat_name(raw)
    holder = await accounts.store.run(store_accounts.name_holder(name.skeleton))
    registered = None if holder is None else await accounts.load(holder)
    if registered is not None:
        if registered.normalised == name.normalised:
            raise ConflictError(
                "name_taken",
                f"The name {name.display!r} is a registered player's: log in to sit under it, "
                "or choose another.",
            )
        raise InvalidError(
            "name_confusable",
            f"The name {name.display!r} looks like the registered name {registered.display_name!r}.",
            like=registered.display_name,
        )
    check_single_script(name)
    return name.display
