"""Named implementations, so a config can say ``"type": "transformer"``.

A base class subclasses :class:`Registrable`; implementations register under a snake_case
name with the base's decorator, and ``from_params`` picks one by the config's ``"type"``::

    class Seq2SeqEncoder(torch.nn.Module, Registrable): ...

    @Seq2SeqEncoder.register("transformer")
    class TransformerEncoder(Seq2SeqEncoder): ...

Each class on which ``register`` is called owns a registry; any other class uses the registry
of its nearest ancestor that owns one. A ``"type"`` may also be a dotted path
(``my_plugin.encoders.MyEncoder``), which is imported on demand. A name nothing registered
makes the installed plugins load (:mod:`toolkit.plugins`) before it counts as unknown.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar

from toolkit.errors import ConfigurationError, RegistryError
from toolkit.from_params import F, FromParams, as_params, build, call_from_params, config_keys
from toolkit.params import Params

R = TypeVar("R", bound="Registrable")
_Entry = tuple[type, str | None]  # (implementation, name of a constructor classmethod or None)
_recorders: list[set[type]] = []  # open record_built() blocks


@contextmanager
def record_built() -> Iterator[set[type]]:
    """Collect every class ``from_params`` picks by ``"type"`` inside the block (what an archive's plugins are)."""
    built: set[type] = set()
    _recorders.append(built)
    try:
        yield built
    finally:
        _recorders.remove(built)


class Registrable(FromParams):
    """A base class whose implementations are registered by name and chosen by ``"type"``."""

    _registry: ClassVar[dict[type, dict[str, _Entry]]] = {}
    default_implementation: ClassVar[str | None] = None

    @classmethod
    def register(cls, name: str, constructor: str | None = None, exist_ok: bool = False) -> Callable[[type[R]], type[R]]:
        """Decorator registering a subclass under *name* in *cls*'s registry.

        *constructor* names a classmethod to build with instead of ``__init__``. Re-registering
        a name for another class is an error unless *exist_ok*; the same class (even re-imported
        under the same module and qualified name) may register again.
        """
        registry = Registrable._registry.setdefault(cls, {})

        def add(subclass: type[R]) -> type[R]:
            if not (isinstance(subclass, type) and issubclass(subclass, cls)):
                raise ConfigurationError(f"cannot register {_full_name(subclass)} as '{name}': it is not a subclass of {_full_name(cls)}")
            if constructor is not None and not callable(getattr(subclass, constructor, None)):
                raise ConfigurationError(f"cannot register {_full_name(subclass)} as '{name}': it has no constructor '{constructor}'")
            if name in registry and not exist_ok:
                existing = registry[name][0]
                if _full_name(existing) != _full_name(subclass):
                    raise ConfigurationError(f"cannot register {_full_name(subclass)} as {cls.__name__} '{name}': the name is taken by {_full_name(existing)}")
            registry[name] = (subclass, constructor)
            return subclass

        return add

    @classmethod
    def by_name(cls: type[R], name: str) -> Callable[..., R]:
        """The class registered as *name*, or its bound constructor classmethod if it has one."""
        subclass, constructor = cls.resolve_class_name(name)
        return getattr(subclass, constructor) if constructor else subclass

    @classmethod
    def resolve_class_name(cls, name: str) -> tuple[type, str | None]:
        """Look *name* up (or import a dotted ``package.module.Class``); raise a helpful error."""
        if name in _registry_of(cls):
            return _registry_of(cls)[name]
        if "." in name:
            return _import_class(cls, name), None
        from toolkit.plugins import import_builtin_components, load_entry_point_plugins

        import_builtin_components()  # on the first miss: the shipped packages (a script may have imported only toolkit.archive)
        load_entry_point_plugins()  # and the installed plugins
        if name in _registry_of(cls):
            return _registry_of(cls)[name]
        available = cls.list_available()
        close = difflib.get_close_matches(name, available, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else "."
        raise RegistryError(
            f"'{name}' is not a registered {cls.__name__}{hint} "
            f"Available: {', '.join(available) or '(none)'}. "
            "Other packages are loaded with --include-package PACKAGE."
        )

    @classmethod
    def list_available(cls) -> list[str]:
        """Registered names, sorted, the default implementation first."""
        names = sorted(_registry_of(cls))
        default = cls.default_implementation
        if default in names:
            names.remove(default)
            names.insert(0, default)
        return names

    @classmethod
    def registered_name(cls) -> str:
        """The name *cls* is registered under (the first, if several), else its class name."""
        entries = _registry_of(cls)
        return next((name for name, (subclass, _) in entries.items() if subclass is cls), cls.__name__)

    @classmethod
    def is_registered(cls, name: str) -> bool:
        """Whether *name* is in the registry *cls* uses."""
        return name in _registry_of(cls)

    @classmethod
    def from_params(cls: type[F], params: Params | Mapping[str, Any], **extras: Any) -> F:
        """Build the implementation named by ``"type"`` (or the default), or *cls* itself.

        Without ``"type"``, a concrete class that is not the owner of the registry (or is
        registered) is built directly; the owner falls back to ``default_implementation``.
        """
        params = as_params(params)
        name = params.pop("type", None)
        if name is None:
            owner = _owner_of(cls)
            if not inspect.isabstract(cls) and (cls is not owner or _is_registered_class(cls)):
                return build(cls, params, extras)
            name = cls.default_implementation
            if name is None:
                raise ConfigurationError(f"missing key '{params.path('type')}'")
        if not isinstance(name, str):
            raise ConfigurationError(f"{params.path('type')}: expected str, got {name!r}")
        try:
            subclass, constructor = cls.resolve_class_name(name)
        except RegistryError as error:
            raise RegistryError(f"{params.path('type')}: {error}") from None
        if not issubclass(subclass, cls):
            raise RegistryError(f"{params.path('type')}: '{name}' is a {_full_name(subclass)}, which is not a {cls.__name__}")
        for recorder in _recorders:
            recorder.add(subclass)
        if constructor:
            return build(getattr(subclass, constructor), params, extras)
        if subclass is not cls and _overrides_from_params(subclass):
            return call_from_params(subclass, params, extras)
        return build(subclass, params, extras)


def registered_bases() -> dict[type, dict[str, type]]:
    """Every class owning a registry -> its names -> classes (what ``toolkit list`` shows)."""
    return {base: {name: subclass for name, (subclass, _) in sorted(entries.items())} for base, entries in Registrable._registry.items()}


def keys_taken(old_type: str, new_type: str) -> set[str] | None:
    """The config keys that *new_type* takes, in the registry holding both names (``None``: no such registry).

    What an override that changes a component's type carries over from the old one (:func:`toolkit.params.merge`).
    """
    for entries in Registrable._registry.values():
        if old_type in entries and new_type in entries:
            subclass, constructor = entries[new_type]
            return config_keys(getattr(subclass, constructor) if constructor else subclass)
    return None


def _owner_of(cls: type) -> type | None:
    """The nearest class in *cls*'s MRO that owns a registry."""
    return next((klass for klass in cls.__mro__ if klass in Registrable._registry), None)


def _registry_of(cls: type) -> dict[str, _Entry]:
    owner = _owner_of(cls)
    return Registrable._registry[owner] if owner is not None else {}


def _is_registered_class(cls: type) -> bool:
    return any(entry[0] is cls for entries in Registrable._registry.values() for entry in entries.values())


def _overrides_from_params(cls: type) -> bool:
    """Whether *cls* (below Registrable) defines its own ``from_params``."""
    own = getattr(cls.from_params, "__func__", None)
    return own is not getattr(Registrable.from_params, "__func__", None)


def _import_class(base: type, dotted: str) -> type:
    """Import ``package.module.Class``; it must be a subclass of *base*."""
    module_name, _, class_name = dotted.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and not (module_name + ".").startswith(error.name + "."):
            raise  # the module exists but one of its own imports is missing: a real bug
        raise RegistryError(f"cannot import module '{module_name}' for '{dotted}'") from None
    found = getattr(module, class_name, None)
    if not isinstance(found, type):
        raise RegistryError(f"'{dotted}': module '{module_name}' has no class '{class_name}'")
    if not issubclass(found, base):
        raise RegistryError(f"'{dotted}' is not a subclass of {_full_name(base)}")
    return found


def _full_name(cls: Any) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', repr(cls))}"
