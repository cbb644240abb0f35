"""User-facing errors: each carries a one-line message naming the file, line, key or shape."""


class ElmoError(Exception):
    """Base class of every error a user can cause; the CLI prints it without a traceback."""


class ConfigError(ElmoError):
    """One or more problems in an experiment config, each with its dotted path."""

    def __init__(self, problems: list[str], source: str = "config") -> None:
        self.problems = list(problems)
        self.source = source
        if len(self.problems) == 1:
            message = f"{source}: {self.problems[0]}"
        else:
            lines = "\n".join(f"  {p}" for p in self.problems)
            message = f"{source}: {len(self.problems)} problems\n{lines}"
        super().__init__(message)


class DataError(ElmoError):
    """Malformed or missing data; the message names the file and line."""


class RegistryNotFilled(ElmoError):
    """A component was looked up before ``elmo_experiments.components.load()`` ran."""


class PluginError(ElmoError):
    """A user's module (``--include-package``, an installed plugin) that cannot be imported."""


class RunDirError(ElmoError):
    """A run directory that cannot be used as asked (exists, missing, incompatible)."""


class RunDirLocked(RunDirError):
    """Another live process writes the run directory; the message names its PID and host."""


class WriteError(ElmoError):
    """A file could not be written (disk full, permissions); the message names the file and
    what it holds, and the previous version of the file is intact."""


class TrainingStopped(ElmoError):
    """Training stopped on purpose (a non-finite loss, a signal); the last checkpoint is kept
    and the message says how to go on. ``exit_code``: 1, or 128 + the signal's number."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class ConfigValueError(ValueError):
    """A value the config schema admits but the component refuses (e.g. a mix layer out of
    range). Builders raise it; ``Spec.build`` turns it into a one-line ``ConfigError`` with the
    component's dotted path. Any other ``ValueError`` is a bug and keeps its traceback."""
