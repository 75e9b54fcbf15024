"""Word vectors from a pretrained Hugging Face transformer, pooled from its subwords."""

import contextlib
import hashlib
import os
import time
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from toolkit.data.batching import length_groups
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.from_params import PositiveFloat, PositiveInt, Probability
from toolkit.modules.dropout import Dropout
from toolkit.modules.token_embedders.scalar_mix import ScalarMix
from toolkit.modules.token_embedders.subword_vocabulary import first_id, special_tokens, unstemmed_words
from toolkit.modules.token_embedders.token_embedder import TokenEmbedder, pad_lists
from toolkit.modules.token_embedders.transformer_loading import (  # noqa: F401  (archived_copies re-exported: toolkit.archive imports it from here)
    ARCHIVED_COPIES,
    TOKENIZER_PATTERNS,
    WEIGHT_PATTERNS,
    archived_copies,
    keep_first_layers,
    load_transformer,
)
from toolkit.modules.token_embedders.word_vector_cache import WordVectorCache

HALF_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}  # what a frozen transformer's cache may keep its vectors in


@TokenEmbedder.register("pretrained_transformer")
class PretrainedTransformerEmbedder(TokenEmbedder):
    """Any ``transformers`` encoder (BERT, RoBERTa, XLM-R, MiniLM, ...), one vector per word.

    # Parameters
    model_name : a hub name (``"bert-base-cased"``) or a local directory holding the model and its
        tokenizer (loaded with ``local_files_only``, so it never reaches the network).
    pooling : how a word's subwords become its vector: its ``"first"`` subword, its ``"last"``, or
        the ``"mean"`` of all of them.
    layers : which hidden states to mix with a learned :class:`ScalarMix`: ``"all"`` (the
        embedding output and every layer), ``"last"`` (the last layer alone, no mix), or a list of
        indices into ``hidden_states`` (0 is the embedding output, -1 the last layer).
    num_layers : run only the transformer's first *num_layers* layers (the rest are dropped when
        it loads, and from the archive): a 6-layer MiniLM cut to 3 reads about twice as fast.
        ``layers`` then indexes the kept ones' hidden states.
    freeze : keep the transformer's weights fixed: no gradients, no optimizer state, always in eval
        mode (no dropout) and run under ``torch.no_grad()``; the scalar mix and projection still
        train. Otherwise the transformer is fine-tuned with its own *learning_rate* (and
        *warmup_steps*, for the trainer's scheduler) through :meth:`parameter_groups`.
    max_length : the most subwords one window holds, special tokens excluded; defaults to what the
        model has positions for (``max_position_embeddings`` or the tokenizer's
        ``model_max_length``, whichever is smaller, less the special tokens).
    window_stride : how far consecutive windows of a longer input start apart (default half of
        *max_length*); each subword takes its vector from the window in which it is most
        central (see :meth:`forward`).
    projection_dim : a linear projection of the word vectors to this width (None: the model's width).
    dropout : dropout on the word vectors.
    tokenizer_kwargs : extra arguments of ``AutoTokenizer.from_pretrained`` (``{"add_prefix_space": true}``).
    cache : frozen only: keep each training and validation sentence's word vectors (every chosen
        layer, before the mix) from its first epoch, keyed by its subwords, so later epochs skip
        the transformer; the mix, projection and dropout still run every time. It holds words ×
        layers × width floats (EWT with MiniLM: 229,000 × 7 × 384, 2.5 GB). The trainer marks
        validation with :attr:`cache_in_eval`; other sentences seen in eval mode (prediction,
        ``toolkit evaluate``) are read through the transformer and never kept, so serving does not grow.
    cache_dtype : ``"float16"`` or ``"bfloat16"``: the cache keeps its vectors in half precision,
        half the memory, and widens them to float32 before the mix; ``null`` (the default): as the
        transformer computed them.
    cache_dir : keep the cache in memory-mapped files in this folder (unlinked as they are made,
        so nothing is left behind) instead of in memory: the kernel pages the vectors in and out,
        and a cache larger than memory still trains. Either way the vectors are kept in large
        blocks (:class:`~toolkit.modules.token_embedders.word_vector_cache.WordVectorCache`).
    archive : what a model archive keeps of the transformer. ``"copy"`` (the default): its weights,
        config and tokenizer, so the archive loads on a machine without *model_name* (MiniLM adds
        87 MB). ``"reference"`` (frozen only): its name and its weight files' SHA-256; loading reads
        the weights from *model_name* again, and refuses them in one line if they are missing or differ.

    unstem : the words are Porter stems (GEO, ATIS and JOBS come stemmed with NLTK's stemmer:
        ``arriv``, ``citi``, ``airlin``), which WordPiece splits into pieces it learned in other
        words. The transformer then reads each word that is not a whole word of its vocabulary as the
        most frequent vocabulary word with that stem (``arrived``, ``city``, ``airlines``; the lowest
        id, since subword vocabularies are listed about by frequency). Words the vocabulary has stay
        as they are (``depart``, not ``department``), as do words that are no stem of any (``ci0``).
        Only the transformer's input changes; the word embedding and the grammar read the words.

    A word the tokenizer gives no subword at all (an empty string, a control character, a lone
    combining mark that normalisation strips) is read as the tokenizer's unknown token (its
    end-of-sequence or separator token if it has none), so it still gets a vector of its own.
    """

    def __init__(
        self,
        model_name: str,
        pooling: Literal["first", "last", "mean"] = "mean",
        layers: Literal["all", "last"] | list[int] = "all",
        num_layers: PositiveInt | None = None,
        freeze: bool = True,
        learning_rate: PositiveFloat = 2e-5,
        warmup_steps: PositiveInt | None = None,
        max_length: PositiveInt | None = None,
        window_stride: PositiveInt | None = None,
        projection_dim: PositiveInt | None = None,
        dropout: Probability = 0.0,
        tokenizer_kwargs: dict[str, Any] | None = None,
        cache: bool = True,
        cache_dtype: Literal["float16", "bfloat16"] | None = None,
        cache_dir: str | None = None,
        archive: Literal["copy", "reference"] = "copy",
        unstem: bool = False,
    ):
        super().__init__()
        if pooling not in ("first", "last", "mean"):
            raise ConfigurationError(f"must be 'first', 'last' or 'mean', got {pooling!r}", key="pooling")
        if archive not in ("copy", "reference") or (archive == "reference" and not freeze):
            raise ConfigurationError(f"must be 'copy' or 'reference' (a frozen transformer's only), got {archive!r} with freeze: {freeze}", key="archive")
        self.model_name, self.pooling, self.freeze, self.archive = model_name, pooling, freeze, archive
        self.learning_rate, self.warmup_steps = learning_rate, warmup_steps
        self.local = Path(model_name).expanduser().is_dir()
        copy = ARCHIVED_COPIES.get().get(model_name)
        self.tokenizer, self.transformer = load_transformer(str(copy or model_name), bool(copy) or self.local, tokenizer_kwargs or {}, weights=not copy)
        if num_layers is not None:
            keep_first_layers(self.transformer, num_layers)
        config = self.transformer.config
        hidden_size = int(config.hidden_size)
        num_states = int(config.num_hidden_layers) + 1

        prefix, suffix = special_tokens(self.tokenizer)
        self.register_buffer("prefix", torch.tensor(prefix, dtype=torch.long), persistent=False)
        self.register_buffer("suffix", torch.tensor(suffix, dtype=torch.long), persistent=False)
        self.pad_id = first_id(self.tokenizer, "pad_token_id", "eos_token_id", "unk_token_id")
        self.empty_word_id = first_id(self.tokenizer, "unk_token_id", "eos_token_id", "sep_token_id", "pad_token_id")

        positions = [int(n) for n in (getattr(config, "max_position_embeddings", None), self.tokenizer.model_max_length) if n and n < 1_000_000]
        self.window_length = max_length if max_length is not None else min(positions, default=512) - len(prefix) - len(suffix)
        self.window_stride = window_stride if window_stride is not None else max(self.window_length // 2, 1)
        if self.window_length < 1:
            raise ConfigurationError(f"must be at least 1, got {self.window_length}", key="max_length")
        if not 1 <= self.window_stride <= self.window_length:
            raise ConfigurationError(f"must be between 1 and max_length ({self.window_length}), got {self.window_stride}", key="window_stride")

        if layers == "last":
            self.layer_indices: list[int] | None = None
            self.scalar_mix: ScalarMix | None = None
        else:
            indices = list(range(num_states)) if layers == "all" else list(layers)
            if not indices or any(not -num_states <= i < num_states for i in indices):
                raise ConfigurationError(f"indices must lie in [{-num_states}, {num_states - 1}] (0 is the embedding output), got {layers!r}", key="layers")
            self.layer_indices = indices
            self.scalar_mix = ScalarMix(len(indices))
        self.projection = nn.Linear(hidden_size, projection_dim) if projection_dim else None
        self.dropout = Dropout(dropout)
        self.output_dim = projection_dim or hidden_size
        self.unstemmed = unstemmed_words(self.tokenizer.get_vocab()) if unstem else None
        if cache_dtype is not None and cache_dtype not in HALF_DTYPES:
            raise ConfigurationError(f"must be 'float16', 'bfloat16' or null, got {cache_dtype!r}", key="cache_dtype")
        self.cache_dtype = HALF_DTYPES.get(cache_dtype)
        self.cache = WordVectorCache(self.cache_dtype, cache_dir) if freeze and cache else None
        self.cache_in_eval = False  # set by the trainer while it validates: the validation set recurs every epoch
        self.cache_fill_seconds = 0.0  # spent computing what the cache keeps: the trainer's time budget leaves it out of an epoch's pace
        if freeze:
            self.transformer.requires_grad_(False)
            self.transformer.eval()
        # Indexing runs the tokenizer before data-loader workers fork; its thread pool would then warn and deadlock-guard.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    # ---------------------------------------------------------------- data

    def example_inputs(self, example: Example) -> dict[str, Any]:
        """``piece_ids``: the words' subword ids, flat, no special tokens; ``piece_counts``: how many each word has (>= 1)."""
        pieces = self.word_pieces(list(example.tokens))
        return {"piece_ids": [piece for word in pieces for piece in word], "piece_counts": [len(word) for word in pieces]}

    def word_pieces(self, words: list[str]) -> list[list[int]]:
        """Each word's subword ids; a word the tokenizer drops becomes the unknown token."""
        if not words:
            return []
        if self.unstemmed is not None:
            words = [self.unstemmed.get(word, word) for word in words]
        if self.tokenizer.is_fast:  # in context (a BPE tokenizer marks a word's leading space), then split by word_ids
            encoding = self.tokenizer(words, is_split_into_words=True, add_special_tokens=False, verbose=False)
            pieces: list[list[int]] = [[] for _ in words]
            for piece, word in zip(encoding["input_ids"], encoding.word_ids()):
                if word is not None:
                    pieces[word].append(piece)
        else:
            pieces = [list(ids) for ids in self.tokenizer(words, add_special_tokens=False, verbose=False)["input_ids"]]
        return [word or [self.empty_word_id] for word in pieces]

    def batch_inputs(self, inputs, num_tokens):
        """``piece_ids`` (B, P) padded with the tokenizer's pad id; ``piece_counts`` (B, S) padded with 0."""
        return {
            "piece_ids": pad_lists([item["piece_ids"] for item in inputs], value=self.pad_id),
            "piece_counts": pad_lists([item["piece_counts"] for item in inputs], num_tokens),
        }

    # ---------------------------------------------------------------- encoding

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor, piece_ids: torch.Tensor, piece_counts: torch.Tensor) -> torch.Tensor:
        """(B, S, D) word vectors: each chosen layer pooled per word, then mixed, projected and dropped out.

        Pooling and the mix are both linear, so pooling each layer first gives the same vectors
        as mixing first, and lets a frozen transformer's per-layer word vectors be cached.
        """
        layers = self.cached_word_layers(piece_ids, piece_counts) if self.cache is not None and (self.training or self.cache_in_eval) else None
        if layers is None:
            layers = self.word_layers(piece_ids, piece_counts)
        words = layers[:, :, 0] if self.scalar_mix is None else self.scalar_mix(layers.movedim(2, 0))
        if self.projection is not None:
            words = self.projection(words)
        return self.dropout(words) * mask.unsqueeze(-1).to(words.dtype)

    def cached_word_layers(self, piece_ids: torch.Tensor, piece_counts: torch.Tensor) -> torch.Tensor:
        """:meth:`word_layers` with each sentence's rows computed once (frozen; training or validation) and kept."""
        assert self.cache is not None
        num_pieces, num_words = piece_counts.sum(1).tolist(), (piece_counts > 0).sum(1).tolist()
        keys = [(tuple(ids[:n]), tuple(counts[:w])) for ids, counts, n, w in zip(piece_ids.tolist(), piece_counts.tolist(), num_pieces, num_words)]
        missing = [row for row, key in enumerate(keys) if key not in self.cache]
        if missing:
            start = time.perf_counter()
            index = torch.tensor(missing, device=piece_ids.device)
            width, length = max(num_pieces[row] for row in missing), max(num_words[row] for row in missing)
            computed = self.word_layers(piece_ids[index, :width], piece_counts[index, :length])
            for i, row in enumerate(missing):
                self.cache[keys[row]] = computed[i, : num_words[row]]  # copied into the cache's blocks
            self.cache_fill_seconds += time.perf_counter() - start
        layers = nn.utils.rnn.pad_sequence([self.cache[key] for key in keys], batch_first=True)  # (B, longest, K, H)
        layers = layers.to(piece_ids.device)  # from memory-mapped blocks, which live on the CPU
        if self.cache_dtype is not None:
            layers = layers.float()
        return nn.functional.pad(layers, (0, 0, 0, 0, 0, piece_counts.size(1) - layers.size(1)))  # to the batch's S

    def word_layers(self, piece_ids: torch.Tensor, piece_counts: torch.Tensor) -> torch.Tensor:
        """(B, S, K, H): each of the K chosen layers pooled into one vector per word."""
        pieces = self.encode_pieces(piece_ids, piece_counts.sum(1))  # (B, P, K, H)
        batch_size, num_pieces, num_layers, hidden = pieces.shape
        pieces = pieces.view(batch_size, num_pieces, num_layers * hidden)
        ends = piece_counts.cumsum(1)  # (B, S): one past each word's last subword
        starts = ends - piece_counts
        if self.pooling == "mean":
            position = torch.arange(num_pieces, device=pieces.device)
            inside = (position >= starts.unsqueeze(-1)) & (position < ends.unsqueeze(-1))  # (B, S, P)
            average = inside.to(pieces.dtype) / piece_counts.clamp(min=1).unsqueeze(-1).to(pieces.dtype)
            words = torch.bmm(average, pieces)
        else:
            chosen = starts if self.pooling == "first" else ends - 1
            chosen = chosen.clamp(0, num_pieces - 1)
            words = pieces.gather(1, chosen.unsqueeze(-1).expand(-1, -1, pieces.size(-1)))
        return words.view(batch_size, -1, num_layers, hidden)

    def encode_pieces(self, piece_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """(B, P, K, H) contextual vectors, per chosen layer, of the (B, P) subwords, whose rows hold *lengths* real ones.

        An input of at most ``max_length`` subwords is one window, exactly as the transformer reads
        it unwindowed. A longer one is cut into windows of ``max_length`` subwords starting every
        ``window_stride``, the last one ending at the input's end. A subword's vector comes from
        the window where it is most central: where ``min(left, right)``, its distance to the
        nearer window edge, is largest; ties go to the earlier window. (Near the input's own
        edges this is also the window with the most context: the first window gives the first
        subwords all the left context there is.)
        """
        batch_size, num_pieces = piece_ids.shape
        device = piece_ids.device
        width = min(self.window_length, num_pieces)
        stride = min(self.window_stride, width)
        overflow = (lengths - width).clamp(min=0)  # (B,)
        num_windows = 1 + torch.div(overflow + stride - 1, stride, rounding_mode="floor")  # (B,)
        k = torch.arange(int(num_windows.max()), device=device)
        window_starts = torch.minimum(k * stride, overflow.unsqueeze(1))  # (B, K): the last one ends at the input's end
        window_lengths = torch.minimum(lengths.unsqueeze(1) - window_starts, torch.full_like(window_starts, width))
        valid = k < num_windows.unsqueeze(1)  # (B, K)

        offsets = torch.arange(width, device=device)
        positions = (window_starts.unsqueeze(-1) + offsets).clamp(max=num_pieces - 1)  # (B, K, L)
        windows = piece_ids.gather(1, positions.flatten(1)).view(batch_size, -1, width)[valid]  # (W, L)
        lengths_w = window_lengths[valid]  # (W,)
        hidden = self.run_transformer(windows, lengths_w)  # (W, L, H)

        # Each subword's window: the one where its distance to the nearer edge, min(left, right), is largest.
        piece = torch.arange(num_pieces, device=device)
        offset = piece.view(1, 1, -1) - window_starts.unsqueeze(-1)  # (B, K, P)
        inside = (offset >= 0) & (offset < window_lengths.unsqueeze(-1)) & valid.unsqueeze(-1)
        score = torch.where(inside, torch.minimum(offset, window_lengths.unsqueeze(-1) - 1 - offset), -1)
        best = score.argmax(1, keepdim=True)  # (B, 1, P); the first window on ties
        window_number = valid.flatten().cumsum(0).view(batch_size, -1) - 1  # (B, K): row in `hidden`
        row = window_number.gather(1, best.squeeze(1))  # (B, P)
        column = offset.gather(1, best).squeeze(1)
        flat = (row * width + column).clamp(0, hidden.size(0) * width - 1)  # padding subwords: any row, masked later
        return hidden.flatten(0, 1)[flat]

    def run_transformer(self, windows: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """(W, L, K, H): the chosen layers over each window wrapped in its special tokens, special positions dropped.

        In inference the windows run in groups of similar length, each cut to its longest: a batch
        of sentences of 1 to 40 words pads most of them to the longest, and the transformer's cost
        is per position, padding included. (Training keeps one call, as it always ran.)
        """
        if self.training or len(windows) < 2:
            return self.run_windows(windows, lengths)
        hidden = None
        for rows in length_groups(lengths.tolist()):
            group = torch.tensor(rows, device=windows.device)
            longest = int(lengths[rows[0]])
            part = self.run_windows(windows[group, :longest], lengths[group])
            if hidden is None:
                hidden = part.new_zeros(len(windows), windows.size(1), *part.shape[2:])
            hidden[group, :longest] = part
        return hidden

    def run_windows(self, windows: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """:meth:`run_transformer` in one call."""
        count, width = windows.shape
        device = windows.device
        n_prefix, n_suffix = self.prefix.numel(), self.suffix.numel()
        column = torch.arange(width, device=device)
        body = torch.where(column < lengths.unsqueeze(1), windows, self.pad_id)
        input_ids = torch.cat([self.prefix.expand(count, -1), body, torch.full((count, n_suffix), self.pad_id, device=device)], 1)
        if n_suffix:  # right after each window's last subword, not after its padding
            where = (n_prefix + lengths).unsqueeze(1) + torch.arange(n_suffix, device=device)
            input_ids.scatter_(1, where, self.suffix.expand(count, -1))
        attention_mask = torch.arange(input_ids.size(1), device=device) < (n_prefix + lengths + n_suffix).unsqueeze(1)
        with torch.no_grad() if self.freeze else contextlib.nullcontext():
            output = self.transformer(input_ids=input_ids, attention_mask=attention_mask.long(), output_hidden_states=self.layer_indices is not None)
        if self.layer_indices is None:
            hidden = output.last_hidden_state.unsqueeze(2)
        else:
            hidden = torch.stack([output.hidden_states[i] for i in self.layer_indices], dim=2)
        return hidden[:, n_prefix : n_prefix + width]

    # ---------------------------------------------------------------- training and archives

    def train(self, mode: bool = True) -> "PretrainedTransformerEmbedder":
        """As ``nn.Module.train``, except that a frozen transformer always stays in eval mode (no dropout)."""
        super().train(mode)
        if self.freeze:
            self.transformer.eval()
        return self

    def parameter_groups(self) -> list[dict[str, Any]]:
        """Fine-tuned: the transformer's parameters with *learning_rate* (and *warmup_steps*); frozen: none."""
        if self.freeze:
            return []
        group: dict[str, Any] = {"params": list(self.transformer.parameters()), "lr": self.learning_rate}
        if self.warmup_steps is not None:
            group["warmup_steps"] = self.warmup_steps
        return [group]

    def pretrained_source(self) -> dict[str, Any]:
        """The hub name, or a local directory and its weight files' SHA-256 (a hub model's files are the hub's to keep)."""
        return self.source("sha256", WEIGHT_PATTERNS)

    def inputs_source(self) -> dict[str, Any]:
        """A local directory's tokenizer files' SHA-256 (the subword ids come from them); a hub name alone."""
        return self.source("tokenizer_sha256", TOKENIZER_PATTERNS)

    def source(self, key: str, patterns: tuple[str, ...]) -> dict[str, Any]:
        """The model name, and for a local directory the SHA-256 of its files matching *patterns* under *key*."""
        if not self.local:
            return {"model_name": self.model_name}
        directory = Path(self.model_name).expanduser()
        files = sorted({path for pattern in patterns for path in directory.glob(pattern) if path.is_file()})
        return {"model_name": self.model_name, key: {path.name: sha256(path) for path in files}}

    def archive_copy(self, directory: Path) -> bool:
        """With ``archive: "copy"``, the transformer's config and tokenizer (its weights are in the model's)."""
        if self.archive != "copy":
            return False
        self.transformer.config.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)
        return True

    def unarchived_state(self) -> list[str]:
        return ["transformer."] if self.archive == "reference" else []

    def get_output_dim(self) -> int:
        return self.output_dim


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
