"""A text's language, by its ISO 639 code: what lower-casing and tokenization depend on.

Parsers are language-free but for a few operations on strings. Lower-casing is the one that bites:
Turkish and Azerbaijani write dotted and dotless i as two letters in both cases (``I``/``ı`` and
``İ``/``i``), so Python's ``"IŞIK".lower()`` gives ``"işik"`` (a different word) and
``"İSTANBUL".lower()`` gives ``"i̇stanbul"`` with a combining dot that no lower-case spelling has.

A reader records the language of its data (the ``conllu`` reader's ``language``, filled in from a UD
treebank's name); training and archives hand it to every component that asks for a ``language``
(the ``hashed_features`` embedder, the dependency predictor's tokenizer), so a model reads its words
the same way in training and after loading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from toolkit.errors import ConfigurationError

CODE = re.compile(r"[a-z]{2,3}")  # ISO 639-1 or -3, as UD names its treebanks
DOTTED_I = frozenset({"tr", "az", "crh", "gag", "tur", "aze"})  # Latin alphabets with I/ı and İ/i
DOTTED_I_LOWER = str.maketrans({"I": "ı", "İ": "i"})


@dataclass(frozen=True)
class Language:
    """A language by its ISO 639 code; ``None`` when the data does not say (read as English where it matters)."""

    code: str | None = None

    def __post_init__(self) -> None:
        if self.code is not None and not (isinstance(self.code, str) and CODE.fullmatch(self.code)):
            raise ConfigurationError(f"expected an ISO 639 language code such as 'fr' or 'tr', got {self.code!r}", key="language")

    @classmethod
    def of(cls, reader: Any) -> Language:
        """The language a dataset reader records (``language``), or an unknown one."""
        return cls(getattr(reader, "language", None))

    def lower(self, text: str) -> str:
        """*text* lower-cased by the language's rules.

        >>> Language("tr").lower("IŞIK İSTANBUL"), Language("en").lower("IŞIK")
        ('ışık istanbul', 'işik')
        """
        return text.translate(DOTTED_I_LOWER).lower() if self.code in DOTTED_I else text.lower()
