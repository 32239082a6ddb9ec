"""A validated option tree: unknown names and bad values raise ValueError naming what is allowed."""


import os


class Option:
    """One leaf option. Subclasses define `check`, which returns the normalized value or raises.
    With `env`, the environment variable of that name (when set) replaces the default, checked
    like any value; a value set on the config wins over both."""

    def __init__(self, default, doc="", env=None):
        self.default = default
        self.doc = doc
        self.env = env
        self.name = None

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if self.name in obj._values:
            return obj._values[self.name]
        if self.env and os.environ.get(self.env):
            return self.check(f"{obj._path(self.name)} (from ${self.env})", self.from_env(os.environ[self.env]))
        return self.default

    def from_env(self, text):
        """The Python value an environment string stands for."""
        return text

    def __set__(self, obj, value):
        obj._values[self.name] = self.check(obj._path(self.name), value)

    def check(self, path, value):
        raise NotImplementedError


class Choice(Option):
    def __init__(self, default, choices, doc="", env=None):
        super().__init__(default, doc, env)
        self.choices = tuple(choices)

    def check(self, path, value):
        if value not in self.choices:
            raise ValueError(f"invalid value {value!r} for option '{path}'; allowed: {', '.join(map(repr, self.choices))}")
        return value


class Bool(Option):
    def from_env(self, text):
        lowered = text.strip().lower()
        return {"1": True, "true": True, "on": True, "0": False, "false": False, "off": False}.get(lowered, text)

    def check(self, path, value):
        if not isinstance(value, bool):
            raise ValueError(f"option '{path}' takes True or False, got {value!r}")
        return value


class Text(Option):
    def check(self, path, value):
        if not isinstance(value, str) or not value:
            raise ValueError(f"option '{path}' takes a non-empty string, got {value!r}")
        return value


class OptionalText(Option):
    def check(self, path, value):
        if value is not None and (not isinstance(value, str) or not value):
            raise ValueError(f"option '{path}' takes None or a non-empty string, got {value!r}")
        return value


class Regex(OptionalText):
    def check(self, path, value):
        import re

        value = super().check(path, value)
        if value is not None:
            try:
                re.compile(value)
            except re.error as e:
                raise ValueError(f"option '{path}': {value!r} is not a regular expression: {e}") from None
        return value


class ChoiceList(Choice):
    """None, one choice, or several (a list/tuple, or a comma-separated string); kept as a tuple."""

    def check(self, path, value):
        if value is None:
            return None
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items:
            raise ValueError(f"option '{path}' takes None, a name or a list of names from {', '.join(self.choices)}")
        items = tuple(item.strip() if isinstance(item, str) else item for item in items)
        for item in items:
            if item not in self.choices:
                raise ValueError(f"invalid value {item!r} for option '{path}'; allowed: None or any of "
                                 f"{', '.join(map(repr, self.choices))}")
        if len(set(items)) != len(items):
            raise ValueError(f"option '{path}' lists a value twice: {value!r}")
        return items


class IntRange(Option):
    """None (the default: decided by the engine) or an integer in [low, high]."""

    def __init__(self, default, low, high, doc="", env=None):
        super().__init__(default, doc, env)
        self.low, self.high = low, high

    def from_env(self, text):
        try:
            return int(text)
        except ValueError:
            return text

    def check(self, path, value):
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"option '{path}' takes an integer, got {type(value).__name__} {value!r}")
        if not self.low <= value <= self.high:
            raise ValueError(f"option '{path}' takes an integer from {self.low} to {self.high}, got {value}")
        return value


class OptionGroup:
    """A node of the tree. Attributes are Options or nested OptionGroup classes (made per instance)."""

    def __init__(self, path=""):
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_prefix", path)
        for name, kind in self._children().items():
            if isinstance(kind, type):
                object.__setattr__(self, name, kind(self._path(name)))

    @classmethod
    def _children(cls):
        found = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Option) or (isinstance(value, type) and issubclass(value, OptionGroup)):
                    found[name] = value
        return found

    def _path(self, name):
        return f"{self._prefix}.{name}" if self._prefix else name

    def __setattr__(self, name, value):
        children = self._children()
        if name not in children:
            allowed = ", ".join(sorted(children))
            raise ValueError(f"unknown option '{self._path(name)}'; allowed: {allowed}")
        if not isinstance(children[name], Option):
            raise ValueError(f"'{self._path(name)}' is a group of options; set its members instead")
        object.__setattr__(self, name, value)

    def as_dict(self):
        """Every option's current value, by dotted path."""
        out = {}
        for name in self._children():
            value = getattr(self, name)
            if isinstance(value, OptionGroup):
                out.update(value.as_dict())
            else:
                out[self._path(name)] = value
        return out

    def __repr__(self):
        return f"{type(self).__name__}({self.as_dict()})"
