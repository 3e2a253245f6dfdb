"""Display names that cannot impersonate each other.

A name is checked, then reduced to two keys:

- ``normalised``: NFKC then casefold, so "Ada", "ADA" and full-width "Ada" (U+FF21 ...) are the same name;
- ``skeleton``: each character of the normalised name replaced by one fixed representative of the
  characters that look like it (Unicode's confusables data, as shipped by the maintained
  ``confusable_homoglyphs`` package), so Latin "a" and Cyrillic "a" (U+0430), "l" and "1", "rn" and "m"
  share a skeleton.

Refused outright: control, format (invisible: zero-width joiners, bidi marks), private-use and
unassigned characters, line or paragraph separators, runs of spaces, and letters of more than one
script (Latin with Greek, Latin with Cyrillic, ...) except the combinations Unicode's "highly
restrictive" profile allows for Japanese, Chinese and Korean writing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

from confusable_homoglyphs import categories, confusables  # type: ignore[import-untyped]

from services.errors import InvalidError

MIN_LENGTH = 2
MAX_LENGTH = 24
RESERVED = frozenset({"me", "login", "logout"})  # path words of /accounts/... (account_routes)

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"})
_IGNORED_SCRIPTS = frozenset({"COMMON", "INHERITED"})
_ALLOWED_MIXES = (
    frozenset({"HAN", "HIRAGANA", "KATAKANA"}),  # Japanese
    frozenset({"HAN", "BOPOMOFO"}),  # Chinese
    frozenset({"HAN", "HANGUL"}),  # Korean
)
_BIDI_MARKS = "\u200e\u200f"  # the confusables data wraps right-to-left glyphs in these


_ACCOUNT_ID_LIKE = re.compile(r"[0-9a-f]{16}")  # /accounts/<name or id> and player pages take either


@dataclass(frozen=True)
class Name:
    display: str
    normalised: str
    skeleton: str


def checked_name(raw: str) -> Name:
    """The name as stored, or ``InvalidError`` (``invalid_name``) saying what is wrong with it
    (the script mix is checked separately: ``check_single_script``)."""
    display = unicodedata.normalize("NFKC", raw).strip()
    if not MIN_LENGTH <= len(display) <= MAX_LENGTH:
        raise _invalid(f"A name has {MIN_LENGTH} to {MAX_LENGTH} characters.")
    for char in display:
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            raise _invalid(f"A name may not contain the invisible or control character U+{ord(char):04X}.")
        if char.isspace() and char != " ":
            raise _invalid("The only space a name may contain is the ordinary one.")
    if "  " in display:
        raise _invalid("A name may not contain two spaces in a row.")
    normalised = normalise(display)
    if normalised in RESERVED:
        raise _invalid(f"{display!r} is reserved.")
    if _ACCOUNT_ID_LIKE.fullmatch(normalised):
        raise _invalid("A name may not be 16 hexadecimal digits: that is what an account id looks like.")
    return Name(display=display, normalised=normalised, skeleton=skeleton(normalised))


def check_single_script(name: Name) -> None:
    """``name_mixed_script`` for letters of several scripts. Checked after the lookalike lookup, so
    that a name imitating a registered one is told so rather than about its scripts."""
    scripts = frozenset(categories.unique_aliases(name.display)) - _IGNORED_SCRIPTS
    if len(scripts) > 1 and not any(scripts <= allowed for allowed in _ALLOWED_MIXES):
        raise InvalidError(
            "name_mixed_script",
            f"A name may not mix letters of {', '.join(sorted(s.title() for s in scripts))} scripts.",
        )


def normalise(name: str) -> str:
    """NFKC then casefold (and NFKC again: casefolding can leave non-normalised text)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).strip().casefold())


def skeleton(normalised: str) -> str:
    """Two names with the same skeleton look alike; applied until nothing changes."""
    current = normalised
    for _ in range(4):
        following = "".join(_representative(char) for char in current)
        if following == current:
            break
        current = following
    return current


@cache
def _representative(char: str) -> str:
    """The one spelling that stands for every glyph confusable with ``char``: an ASCII one when
    there is one (the longest, so that "m" becomes "rn" like "rn" itself), else the smallest."""
    candidates = {char}
    for homoglyph in confusables.confusables_data.get(char, ()):
        candidates.add(homoglyph["c"].strip(_BIDI_MARKS))
    candidates = {normalise(c) or c for c in candidates if c}
    ascii_ones = [c for c in candidates if c.isascii()]
    if ascii_ones:
        return min(ascii_ones, key=lambda c: (-len(c), c))
    return min(candidates, key=lambda c: (len(c), c))


def _invalid(message: str) -> InvalidError:
    return InvalidError("invalid_name", message)
