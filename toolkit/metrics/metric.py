"""The base class of metrics: accumulate raw counts batch by batch, report fractions on demand."""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolkit.errors import DataError
from toolkit.registrable import Registrable

if TYPE_CHECKING:
    from toolkit.data.example import Example
    from toolkit.params import Params


class Metric(Registrable, ABC):
    """Accumulates counts over calls and reports fractions in ``[0, 1]``.

    The state is a flat dict of raw counts (not fractions) so that states from several processes
    can be summed key by key and loaded back before :meth:`get_metric`. Subclasses list their
    counts in ``count_names`` and implement :meth:`__call__` and :meth:`get_metric`.
    """

    count_names: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._counts: dict[str, float] = {}
        self.reset()

    @abstractmethod
    def __call__(self, predictions: Sequence, golds: Sequence) -> None:
        """Add one batch of *predictions* and their *golds* to the counts."""

    @abstractmethod
    def get_metric(self, reset: bool = False) -> dict[str, float]:
        """The metric values so far; with *reset*, start counting afresh afterwards."""

    def check_gold(self, gold: Any) -> None:
        """Raise ``DataError`` if this metric cannot score golds like *gold* (a dependency tree given to Smatch).

        Asked of the first gold before anything is decoded, so that a metric that does not fit the
        data fails at once, in one line, instead of with a traceback or a meaningless score.
        """

    def notes(self) -> list[tuple[int, str]]:
        """What the last call scored otherwise than it asked (a query stopped by a limit), one line each, with the
        position of its pair in that call: the caller, who knows the inputs, names each by file and line.
        """
        return []

    def names(self) -> list[str] | None:
        """The scores :meth:`get_metric` reports, known before any prediction (``None`` if a metric cannot say)."""
        try:
            return list(self.get_metric())
        except Exception:  # noqa: BLE001 - a plugin metric that cannot report on nothing
            return None

    def reset(self) -> None:
        """Zero every count."""
        self._counts = {name: 0.0 for name in self.count_names}

    def state(self) -> dict[str, float]:
        """A copy of the raw counts."""
        return dict(self._counts)

    def load_state(self, state: dict[str, float]) -> None:
        """Replace the counts with *state* (e.g. counts summed over processes)."""
        if set(state) != set(self.count_names):
            raise ValueError(f"{type(self).__name__} state must have the keys {sorted(self.count_names)}, got {sorted(state)}")
        self._counts = {name: float(state[name]) for name in self.count_names}

    @staticmethod
    def _check_lengths(predictions: Sequence, golds: Sequence) -> None:
        """Fail loudly on a batch whose predictions and golds do not pair up."""
        if len(predictions) != len(golds):
            raise ValueError(f"got {len(predictions)} predictions but {len(golds)} golds")


def metrics_from_params(params: "Params") -> list[Metric]:
    """Pop the config's ``metrics`` list and build it; an error names the item (``metrics.1.exclude_punctuation``)."""
    from toolkit.from_params import convert

    return convert(params.pop("metrics", []), list[Metric], params.path("metrics"), {})


def check_golds(metrics: Sequence[Metric], examples: Sequence["Example"]) -> None:
    """Every metric's :meth:`~Metric.check_gold` of the first example's target (a data set's targets
    are all of one kind), before any decoding, so a metric that cannot score them says so at once.
    """
    for metric in metrics:
        if examples:
            metric.check_gold(examples[0].target)


def require_text(name: str, gold: Any) -> None:
    """The :meth:`~Metric.check_gold` of a metric that compares text."""
    if not is_text(gold):
        raise DataError(f"the {name} metric compares text (a string or a list of tokens); the golds here are of type {kind_of(gold)}")


def is_text(value: Any) -> bool:
    """A string or a list of string tokens: what the text metrics (exact match, BLEU, ...) compare."""
    return isinstance(value, str) or (isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value))


def kind_of(value: Any) -> str:
    """How a message names a gold's kind: its class (``DependencyTree``, ``Graph``, ``str``)."""
    return type(value).__name__
