"""Build objects from configs by reading their constructors' type annotations.

Each constructor parameter is looked up in the config by name and converted by its annotation,
recursively: a :class:`FromParams` class is built from a nested object, ``list[T]``,
``dict[str, T]``, ``tuple``, ``set``, ``Optional``, ``Union`` and ``Literal`` are followed,
``int``/``float``/``str``/``bool`` are checked. Parameters absent from the config come from the
*extras* (run-time objects such as the vocabulary, matched by name or else by type) or from
their defaults. Every error names the key path::

    >>> class Encoder(FromParams):
    ...     def __init__(self, num_layers: int, dropout: float = 0.0):
    ...         self.num_layers, self.dropout = num_layers, dropout
    >>> Encoder.from_params({"num_layers": 2}).num_layers
    2
"""

from __future__ import annotations

import collections.abc
import difflib
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar, Union, get_args, get_origin

from toolkit.errors import ConfigurationError
from toolkit.params import Params, copy_tree

T = TypeVar("T")
F = TypeVar("F", bound="FromParams")

_SCALARS = (int, float, str, bool)
_EMPTY = inspect.Parameter.empty


class FromParams:
    """Mixin for classes built from a config through their annotated ``__init__``."""

    @classmethod
    def from_params(cls: type[F], params: Params | Mapping[str, Any], **extras: Any) -> F:
        """Build *cls* from *params*; *extras* are run-time objects offered to the constructor."""
        return build(cls, as_params(params), extras)


class Lazy(Generic[T]):
    """A ``Lazy[T]`` parameter gets the config now and builds ``T`` later with run-time arguments.

    An optimizer needs the model's parameters, which do not exist when the config is read:
    ``optimizer: Lazy[Optimizer]`` then ``optimizer.construct(model_parameters=...)``.
    """

    def __init__(
        self,
        target: Any,
        params: Params | Mapping[str, Any] | None = None,
        extras: Mapping[str, Any] | None = None,
    ):
        self._target = target
        self._params = as_params(params).duplicate()
        self._extras = dict(extras or {})

    def construct(self, **kwargs: Any) -> T:
        """Build ``T`` from the stored config, the stored extras and *kwargs* (which win)."""
        path = self._params.history.rstrip(".")
        return convert(self._params.duplicate(), self._target, path, {**self._extras, **kwargs})

    def __repr__(self) -> str:
        return f"Lazy({_type_name(self._target)}, {self._params.as_dict()!r})"


def as_params(params: Params | Mapping[str, Any] | None) -> Params:
    """*params* as Params; a plain mapping is copied so the caller's dict is never consumed."""
    if isinstance(params, Params):
        return params
    return Params(params or {})


def construct(callable_: Callable[..., T], params: Params | Mapping[str, Any], **extras: Any) -> T:
    """Build anything with an annotated signature (a class or a function) from *params*.

    A FromParams class goes through its own ``from_params`` (so a registrable base dispatches
    on ``"type"``); anything else is called directly.
    """
    if isinstance(callable_, type) and issubclass(callable_, FromParams):
        return call_from_params(callable_, as_params(params), extras)
    return build(callable_, as_params(params), extras)


def call_from_params(cls: type[F], params: Params, extras: Mapping[str, Any]) -> F:
    """Call ``cls.from_params``, passing only the extras an overriding signature accepts."""
    return cls.from_params(params, **_accepted(cls.from_params, extras))


def build(target: Callable[..., T], params: Params, extras: Mapping[str, Any]) -> T:
    """Call *target* with arguments taken from *params*, then *extras*, then defaults.

    No ``"type"`` dispatch happens here; leftover keys are reported (all at once, with a
    did-you-mean) before anything is built, so a typo never costs a slow construction.
    """
    parameters = _parameters(target)
    _check_leftovers(params, sorted(parameters))
    kwargs: dict[str, Any] = {}
    for name, (parameter, annotation) in parameters.items():
        path = params.path(name)
        if name in params:
            value = params.pop(name)
            if value is None and parameter.default is None:
                kwargs[name] = None  # `x: int = None`: a sloppy annotation, but None is meant
            else:
                kwargs[name] = convert(value, annotation, path, extras)
        elif name in extras:
            kwargs[name] = extras[name]
        else:
            matches = [value for value in extras.values() if _is_instance_of(value, annotation)]
            if len(matches) == 1:
                kwargs[name] = matches[0]
            elif parameter.default is _EMPTY:
                raise ConfigurationError(f"missing key '{path}'")
    try:
        return target(**kwargs)
    except ConfigurationError as error:
        if error.complete:
            raise
        raise error.at(params.history.rstrip(".")) from None
    except CONSTRUCTION_ERRORS as error:  # a constructor refusing a value of the config (a width num_heads does not divide)
        raise ConfigurationError(f"{params.history.rstrip('.') or 'the config'}: {error}") from error


# What a constructor raises on a value of the config that it cannot use: a ValueError of its own
# checks, or what torch and arithmetic raise on a negative size or a zero divisor.
CONSTRUCTION_ERRORS = (ValueError, ZeroDivisionError, RuntimeError)


@dataclass(frozen=True)
class Range:
    """Bounds on a number of the config, checked where it is read: ``Annotated[int, Range(1)]``.

    Values a constructor stores for later (a beam size, a warmup, a smoothing epsilon) would
    otherwise fail mid-run with a traceback; here they fail at once, naming the key.
    """

    low: float | None = None
    high: float | None = None
    above: bool = False  # the value must exceed *low*, not merely reach it

    def check(self, value: Any, path: str) -> None:
        if value is None:
            return
        too_low = self.low is not None and (value <= self.low if self.above else value < self.low)
        if too_low or (self.high is not None and value > self.high):
            raise ConfigurationError(f"{path}: must be {self.describe()}, got {value!r}")

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"more than {self.low} and at most {self.high}" if self.above else f"from {self.low} to {self.high}"
        if self.low is not None:
            return f"more than {self.low}" if self.above else f"at least {self.low}"
        return f"at most {self.high}"


PositiveInt = Annotated[int, Range(1)]
NonNegativeInt = Annotated[int, Range(0)]
PositiveFloat = Annotated[float, Range(0, above=True)]
NonNegativeFloat = Annotated[float, Range(0)]
Probability = Annotated[float, Range(0, 1)]


def convert(value: Any, annotation: Any, path: str, extras: Mapping[str, Any]) -> Any:
    """Convert a config *value* at key *path* to what *annotation* asks for."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        converted = convert(value, args[0], path, extras)
        for bound in args[1:]:
            if isinstance(bound, Range):
                bound.check(converted, path)
        return converted
    if annotation is Any or annotation is _EMPTY or isinstance(annotation, TypeVar):
        return copy_tree(value)
    if origin is Union or origin is types.UnionType:
        return _convert_union(value, annotation, path, extras)
    if origin is typing.Literal:
        if value in args:
            return value
        raise _mismatch(path, "one of " + ", ".join(repr(arg) for arg in args), value)
    if origin is Lazy or annotation is Lazy:
        if isinstance(value, Lazy):
            return value
        target = args[0] if args else Any
        return Lazy(target, _as_object(value, target, path), extras)
    if annotation in (list, tuple, set, dict) or origin in _CONTAINERS:
        return _convert_container(value, origin or annotation, args, annotation, path, extras)
    if annotation is type(None) or annotation is None:
        if value is None:
            return None
        raise _mismatch(path, "null", value)
    if annotation in _SCALARS:
        return _convert_scalar(value, annotation, path)
    if not isinstance(annotation, type):
        return copy_tree(value)  # Callable[...], a Protocol, ...: nothing to check against
    if isinstance(value, annotation):
        return value  # already built, e.g. passed programmatically
    if annotation is Path and isinstance(value, str):
        return Path(value)
    params = _as_object(value, annotation, path)
    if issubclass(annotation, FromParams):
        return call_from_params(annotation, params, extras)
    return build(annotation, params, extras)


_CONTAINERS = {
    list: list,
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    tuple: tuple,
    set: set,
    frozenset: frozenset,
    collections.abc.Set: frozenset,
    collections.abc.MutableSet: set,
    dict: dict,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def _convert_container(value: Any, origin: Any, args: tuple, annotation: Any, path: str, extras: Mapping[str, Any]) -> Any:
    kind = _CONTAINERS[origin]
    if kind is dict:
        if not isinstance(value, Mapping):
            raise _mismatch(path, _type_name(annotation), value)
        item_type = args[1] if len(args) == 2 else Any
        return {key: convert(item, item_type, f"{path}.{key}", extras) for key, item in value.items()}
    if not isinstance(value, list):
        raise _mismatch(path, _type_name(annotation), value)
    if kind is tuple and args and args[-1] is not Ellipsis:
        if len(value) != len(args):
            raise _mismatch(path, f"{_type_name(annotation)} ({len(args)} items)", value)
        item_types: list[Any] = list(args)
    else:
        item_types = [args[0] if args else Any] * len(value)
    items = [convert(item, item_type, f"{path}.{index}", extras) for index, (item, item_type) in enumerate(zip(value, item_types))]
    return kind(items)


def _convert_union(value: Any, annotation: Any, path: str, extras: Mapping[str, Any]) -> Any:
    """Try the members in order; each try gets its own copy, since building consumes params."""
    members = [member for member in get_args(annotation) if member is not type(None)]
    if value is None and len(members) < len(get_args(annotation)):
        return None
    errors = []
    for member in members:
        try:
            return convert(copy_tree(value), member, path, extras)
        except ConfigurationError as error:
            errors.append(error)
    if len(errors) == 1:
        raise errors[0]  # Optional[T]: the member's own error is the precise one
    deeper = [str(error) for error in errors if not str(error).startswith(f"{path}: expected")]
    detail = f" ({'; '.join(deeper)})" if deeper else ""
    raise ConfigurationError(str(_mismatch(path, _type_name(annotation), value)) + detail)


def _convert_scalar(value: Any, annotation: type, path: str) -> Any:
    if isinstance(value, bool) != (annotation is bool):
        raise _mismatch(path, annotation.__name__, value)  # bool is not a number here
    if annotation is float and isinstance(value, int):
        return float(value)
    if not isinstance(value, annotation):
        raise _mismatch(path, annotation.__name__, value)
    return value


def _as_object(value: Any, annotation: Any, path: str) -> Params:
    """A config value that must be an object, as Params with its key path."""
    if isinstance(value, Params):
        return value
    if not isinstance(value, Mapping):
        raise _mismatch(path, f"{_type_name(annotation)} (an object)", value)
    return Params(value, f"{path}." if path else "")


def _mismatch(path: str, expected: str, value: Any) -> ConfigurationError:
    shown = copy_tree(value)
    return ConfigurationError(f"{path or '<config>'}: expected {expected}, got {shown!r}")


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if isinstance(annotation, type) and not get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "").replace("collections.abc.", "")


def _check_leftovers(params: Params, valid: list[str]) -> None:
    leftovers = [key for key in params if key not in valid]
    if not leftovers:
        return
    described = []
    for key in leftovers:
        close = difflib.get_close_matches(key, valid, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        described.append(f"'{params.path(key)}'{hint}")
    plural = "s" if len(leftovers) > 1 else ""
    takes = f"valid keys: {', '.join(valid)}" if valid else "no keys are valid here"
    raise ConfigurationError(f"unknown key{plural} {', '.join(described)}; {takes}")


def _is_instance_of(value: Any, annotation: Any) -> bool:
    """Whether an extra can fill a parameter by its type alone.

    Scalars never match by type: an extra ``batch_size=32`` must not fill ``num_layers: int``.
    """
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    is_union = get_origin(annotation) in (Union, types.UnionType)
    members = get_args(annotation) if is_union else (annotation,)
    classes = [member for member in members if isinstance(member, type) and member not in (*_SCALARS, object, type(None))]
    return any(isinstance(value, member) for member in classes)


def config_keys(target: Callable[..., Any]) -> set[str]:
    """The config keys *target* (a class or a function) reads."""
    return set(_parameters(target))


def _parameters(target: Callable[..., Any]) -> dict[str, tuple[inspect.Parameter, Any]]:
    """Named parameters of *target* with resolved annotations.

    For a class whose ``__init__`` takes ``**kwargs``, the parents' ``__init__`` parameters are
    added (as AllenNLP does), since such a constructor forwards them.
    """
    if not isinstance(target, type):
        return _own_parameters(target, skip_first=False)[0]
    found: dict[str, tuple[inspect.Parameter, Any]] = {}
    for klass in target.__mro__:
        if klass is object:
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        own, forwards_kwargs = _own_parameters(init, skip_first=True)
        for name, entry in own.items():
            found.setdefault(name, entry)
        if not forwards_kwargs:
            break
    return found


def _own_parameters(function: Callable[..., Any], skip_first: bool) -> tuple[dict[str, tuple[inspect.Parameter, Any]], bool]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature
        return {}, False
    hints = _type_hints(function)
    listed = list(signature.parameters.values())[1 if skip_first else 0 :]
    parameters = {
        parameter.name: (parameter, hints.get(parameter.name, parameter.annotation))
        for parameter in listed
        if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    }
    forwards_kwargs = any(parameter.kind is parameter.VAR_KEYWORD for parameter in listed)
    return parameters, forwards_kwargs


def _type_hints(function: Callable[..., Any]) -> dict[str, Any]:
    """Resolved annotations (string ones too); an unresolvable one is left out, i.e. ``Any``."""
    function = inspect.unwrap(getattr(function, "__func__", function))
    try:
        return typing.get_type_hints(function, include_extras=True)
    except Exception:  # noqa: BLE001 - a name only imported under TYPE_CHECKING, say: resolve one by one
        namespace = getattr(function, "__globals__", {})
        hints = {}
        for name, annotation in getattr(function, "__annotations__", {}).items():
            try:
                is_text = isinstance(annotation, str)
                hints[name] = eval(annotation, namespace) if is_text else annotation
            except Exception:  # noqa: BLE001 - an annotation that does not evaluate is Any
                hints[name] = Any
        return hints


def _accepted(function: Callable[..., Any], extras: Mapping[str, Any]) -> dict[str, Any]:
    """The extras *function* can take: all of them if it has ``**kwargs``, else those it names."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return dict(extras)
    if any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters.values()):
        return dict(extras)
    return {name: value for name, value in extras.items() if name in parameters}
