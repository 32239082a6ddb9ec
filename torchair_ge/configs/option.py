"""A validated option tree: unknown names and bad values raise ValueError naming what is allowed."""


class Option:
    """One leaf option. Subclasses define `check`, which returns the normalized value or raises."""

    def __init__(self, default, doc=""):
        self.default = default
        self.doc = doc
        self.name = None

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return obj._values.get(self.name, self.default)

    def __set__(self, obj, value):
        obj._values[self.name] = self.check(obj._path(self.name), value)

    def check(self, path, value):
        raise NotImplementedError


class Choice(Option):
    def __init__(self, default, choices, doc=""):
        super().__init__(default, doc)
        self.choices = tuple(choices)

    def check(self, path, value):
        if value not in self.choices:
            raise ValueError(f"invalid value {value!r} for option '{path}'; allowed: {', '.join(map(repr, self.choices))}")
        return value


class Bool(Option):
    def check(self, path, value):
        if not isinstance(value, bool):
            raise ValueError(f"option '{path}' takes True or False, got {value!r}")
        return value


class Text(Option):
    def check(self, path, value):
        if not isinstance(value, str) or not value:
            raise ValueError(f"option '{path}' takes a non-empty string, got {value!r}")
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
        for name, kind in self._children().items():
            value = getattr(self, name)
            if isinstance(value, OptionGroup):
                out.update(value.as_dict())
            else:
                out[self._path(name)] = value
        return out

    def __repr__(self):
        return f"{type(self).__name__}({self.as_dict()})"
