"""The special symbols every vocabulary reserves, apart from the vocabulary so that grammars can name them."""

PAD = "@@PADDING@@"
UNK = "@@UNKNOWN@@"
BOS = "@start@"
EOS = "@end@"
