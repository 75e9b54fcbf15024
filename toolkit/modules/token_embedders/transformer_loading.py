"""Loading a Hugging Face transformer and its tokenizer: by hub name, from a local directory, or from an archive's copy."""

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import Any

import torch
from torch import nn

from toolkit.errors import ConfigurationError
from toolkit.extras import install_hint

WEIGHT_PATTERNS = ("*.safetensors", "*.bin")
TOKENIZER_PATTERNS = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "*.model")
# model_name -> an archive's copy of its config and tokenizer, while an archive is being loaded
ARCHIVED_COPIES: ContextVar[Mapping[str, Path]] = ContextVar("archived_copies", default=MappingProxyType({}))


@contextlib.contextmanager
def archived_copies(copies: Mapping[str, Path]) -> Iterator[None]:
    """Build the transformers named in *copies* from those directories (config and tokenizer, no weights)."""
    token = ARCHIVED_COPIES.set(copies)
    try:
        yield
    finally:
        ARCHIVED_COPIES.reset(token)


def load_transformer(model_name: str, local: bool, tokenizer_kwargs: dict[str, Any], weights: bool = True) -> tuple[Any, nn.Module]:
    """The tokenizer and the encoder of *model_name* (an encoder-decoder gives its encoder), in float32.

    Without *weights*, the encoder is built from the directory's config alone (an archive's copy,
    whose weights the archive loads afterwards).
    """
    try:
        import transformers
    except ImportError:
        raise ConfigurationError(f"the 'pretrained_transformer' token embedder needs transformers: {install_hint('transformers')}") from None
    from packaging.version import Version

    transformers.utils.logging.disable_progress_bar()  # one "Loading weights" bar per load would flood the training log
    dtype_key = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"
    if local:  # transformers 5 quietly builds a 5-token tokenizer for a directory without tokenizer files
        directory = Path(model_name).expanduser()
        needed = (("config.json", ["config.json"]), ("tokenizer files", TOKENIZER_PATTERNS), ("weights", WEIGHT_PATTERNS))
        missing = [what for what, patterns in needed[: 3 if weights else 2] if not any(any(directory.glob(pattern)) for pattern in patterns)]
        if missing:
            raise ConfigurationError(
                f"cannot load the pretrained transformer directory {model_name!r}: it has no {' and no '.join(missing)} "
                "(save the model and its tokenizer there with save_pretrained)"
            )
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model_name, local_files_only=local, **tokenizer_kwargs)
        if tokenizer.is_fast and "add_prefix_space" not in tokenizer_kwargs:
            try:
                tokenizer(["a"], is_split_into_words=True, add_special_tokens=False)
            except Exception:  # noqa: BLE001 - byte-level BPE (RoBERTa, GPT-2) on transformers 4 reads pre-split words only with a prefix space
                tokenizer = transformers.AutoTokenizer.from_pretrained(model_name, local_files_only=local, add_prefix_space=True, **tokenizer_kwargs)
        if weights:
            model = transformers.AutoModel.from_pretrained(model_name, local_files_only=local, **{dtype_key: torch.float32})
        else:
            model = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(model_name, local_files_only=True))
    except Exception as error:  # OSError, ValueError, KeyError, ...: transformers has no one error for "cannot load"
        reason = " ".join(str(error).split())[:300] or type(error).__name__  # one line
        where = "directory" if local else "model"
        raise ConfigurationError(f"cannot load the pretrained transformer {where} {model_name!r}: {reason}") from error
    if getattr(model.config, "is_encoder_decoder", False) and hasattr(model, "get_encoder"):
        model = model.get_encoder()
    return tokenizer, model


def keep_first_layers(model: nn.Module, count: int) -> None:
    """Cut *model*'s stack of layers to its first *count* (BERT, RoBERTa, MPNet, XLM-R: ``encoder.layer``; others: ``layers``)."""
    stack = getattr(getattr(model, "encoder", None), "layer", None)
    if not isinstance(stack, nn.ModuleList):
        stack = getattr(model, "layers", None)
    if not isinstance(stack, nn.ModuleList):
        raise ConfigurationError(f"cannot cut a {type(model).__name__}'s layers: it has no encoder.layer or layers list", key="num_layers")
    if count > len(stack):
        raise ConfigurationError(f"the transformer has {len(stack)} layers, cannot keep {count}", key="num_layers")
    del stack[count:]
    model.config.num_hidden_layers = count  # the archive's copy of the config rebuilds the cut model
