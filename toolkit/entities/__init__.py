"""Entity mentions in raw questions: a lexicon, a mention finder, and an anonymizer that restores predictions.

Built from a config, the lexicon file named there::

    anonymizer: {
      type: "geo_prolog",
      finder: {type: "lexicon", lexicon: {path: std.extVar("DATA_ROOT") + "/geo-raw/geo_entities.json"}},
    }
"""

from toolkit.entities.anonymizer import Anonymized, Anonymizer, GeoPrologAnonymizer, Restored, RestoreError
from toolkit.entities.lexicon import CONSTRUCTOR_TYPES, Constant, Entity, EntityLexicon, find_constants, normalize, normalize_words
from toolkit.entities.mentions import LexiconMentionFinder, Mention, MentionFinder

__all__ = [
    "CONSTRUCTOR_TYPES",
    "Anonymized",
    "Anonymizer",
    "Constant",
    "Entity",
    "EntityLexicon",
    "GeoPrologAnonymizer",
    "LexiconMentionFinder",
    "Mention",
    "MentionFinder",
    "RestoreError",
    "Restored",
    "find_constants",
    "normalize",
    "normalize_words",
]
