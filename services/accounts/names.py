"""Display names that cannot impersonate each other: one rule for accounts and for seats.

A name is checked, then reduced to two keys:

- ``normalised``: NFKC then casefold, so "Ada", "ADA" and full-width "Ada" (U+FF21 ...) are the same name;
- ``skeleton``: each character of the normalised name replaced by one fixed representative of the
  characters that look like it (Unicode's confusables data, as shipped by the maintained
  ``confusable_homoglyphs`` package), so Latin "a" and Cyrillic "a" (U+0430), "l" and "1", "rn" and "m"
  share a skeleton.

Refused outright: control, format (invisible: zero-width joiners, bidi marks and overrides),
private-use and unassigned characters, line or paragraph separators, every default-ignorable code
point (U+034F COMBINING GRAPHEME JOINER, the variation selectors U+FE00-U+FE0F and U+E0100-U+E01EF,
the Hangul fillers, ...: they draw nothing, so "Ada" plus one of them would look exactly like
"Ada"), more than ``MAX_MARKS_IN_A_ROW`` combining marks on one letter, runs of spaces, and letters
of more than one script (Latin with Greek, Latin with Cyrillic, ...) except the combinations
Unicode's "highly restrictive" profile allows for Japanese, Chinese and Korean writing.

Accounts (``services.accounts.registry``) and seats (``seat_name``: the join route) obey the same rule; only
the lengths differ (a seat name keeps the 1 to ``domain.table.MAX_NAME`` characters it always had,
an account name has ``MIN_LENGTH`` to ``MAX_LENGTH``), and an account name may not be a path word
or look like an account id. A seat name that is, or looks like, a registered account's name is
refused unless that account takes the seat; an account always sits under its own name.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

from confusable_homoglyphs import categories, confusables  # type: ignore[import-untyped]

from domain.table import MAX_NAME as MAX_SEAT_LENGTH
from services.errors import InvalidError

MIN_LENGTH = 2
MAX_LENGTH = 24
MIN_SEAT_LENGTH = 1
MAX_MARKS_IN_A_ROW = 3  # Thai, Hindi and Vietnamese stack two or three; more is decoration (or a disguise)
RESERVED = frozenset({"me", "login", "logout"})  # path words of /accounts/... (account_routes)

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"})
_IGNORED_SCRIPTS = frozenset({"COMMON", "INHERITED"})
_ALLOWED_MIXES = (
    frozenset({"HAN", "HIRAGANA", "KATAKANA"}),  # Japanese
    frozenset({"HAN", "BOPOMOFO"}),  # Chinese
    frozenset({"HAN", "HANGUL"}),  # Korean
)
_BIDI_MARKS = "\u200e\u200f"  # the confusables data wraps right-to-left glyphs in these
_DEFAULT_IGNORABLE = (  # Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, 15.1)
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


_ACCOUNT_ID_LIKE = re.compile(r"[0-9a-f]{16}")  # /accounts/<name or id> and player pages take either


@dataclass(frozen=True)
class Name:
    display: str
    normalised: str
    skeleton: str


def checked_name(raw: str) -> Name:
    """An account's name as stored, or ``InvalidError`` (``invalid_name``) saying what is wrong with
    it (the script mix is checked separately: ``check_single_script``)."""
    display = checked_characters(raw, MIN_LENGTH, MAX_LENGTH)
    normalised = normalise(display)
    if normalised in RESERVED:
        raise _invalid(f"{display!r} is reserved.")
    if _ACCOUNT_ID_LIKE.fullmatch(normalised):
        raise _invalid("A name may not be 16 hexadecimal digits: that is what an account id looks like.")
    return Name(display=display, normalised=normalised, skeleton=skeleton(normalised))


def checked_seat_name(raw: str) -> Name:
    """A seat's name as stored: the characters of an account's name (``checked_characters``), 1 to
    ``MAX_SEAT_LENGTH`` of them; its script mix and its likeness to registered names are checked
    by ``services.accounts.seat_names``."""
    display = checked_characters(raw, MIN_SEAT_LENGTH, MAX_SEAT_LENGTH)
    normalised = normalise(display)
    return Name(display=display, normalised=normalised, skeleton=skeleton(normalised))


def checked_characters(raw: str, low: int, high: int) -> str:
    """``raw`` in NFKC without its outer spaces, or ``invalid_name`` with the reason: its length
    (``low`` to ``high``), an invisible, control or formatting character (named by its code point),
    a stack of combining marks, a space other than the ordinary one, or two spaces in a row."""
    display = unicodedata.normalize("NFKC", raw).strip()
    if not low <= len(display) <= high:
        raise _invalid(f"A name has {low} to {high} characters.")
    marks = 0
    for char in display:
        if unicodedata.category(char) in _REFUSED_CATEGORIES or _ignorable(char):
            raise _invalid(f"A name may not contain the invisible or control character U+{ord(char):04X}.")
        if char.isspace() and char != " ":
            raise _invalid("The only space a name may contain is the ordinary one.")
        marks = marks + 1 if unicodedata.combining(char) or unicodedata.category(char) == "Mn" else 0
        if marks > MAX_MARKS_IN_A_ROW:
            raise _invalid(f"A letter of a name may carry at most {MAX_MARKS_IN_A_ROW} combining marks.")
    if unicodedata.category(display[0]) in ("Mn", "Me"):
        raise _invalid("A name may not begin with a combining mark.")
    if "  " in display:
        raise _invalid("A name may not contain two spaces in a row.")
    return display


def _ignorable(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _DEFAULT_IGNORABLE)


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
