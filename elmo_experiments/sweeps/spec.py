"""A sweep spec (jsonnet) and its cells.

    {
      name: 'ner_layers',
      config: '../ner.jsonnet',                  // relative to the spec file
      overrides: ['trainer.num_epochs=10'],       // every cell
      ext_vars: { ELMO_SIZE: 'cpu' },             // every cell
      variants: {                                // name -> what differs
        baseline: { config: '../ner_baseline.jsonnet' },
        last: { overrides: ['model.token_embedders.elmo.mixes=[{"mode":"last"}]'] },
      },
      seeds: [1, 2, 3],
      fractions: [1.0],                          // train_data_fraction
      metrics: ['test_f1'],                      // summarised (default: every test_ and best_)
    }

A cell is one run directory, ``SWEEP_DIR/<variant>-frac<f>-seed<s>``, trained with
``random_seed`` set to its seed and ``train_data_fraction`` to its fraction.

A variant may share another sweep's runs: ``input: { same_as: 'ner_main.jsonnet:elmo' }`` (that
spec, relative to this one, and its variant). Each of its cells that the other sweep also has
(same seed and fraction) must be the very same run there (config, overrides and ext vars), which
loading checks; those are not run here, and the summary points to that sweep's results instead
(Table 3's "input only" is Table 1's ELMo row; Figure 1's 100% points are Table 1's runs).
Cells the other sweep lacks (Figure 1's 1% and 10%) run here.
"""

from __future__ import annotations

import contextlib
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from elmo_experiments.config.loader import evaluate_jsonnet
from elmo_experiments.config.registry import AT_LEAST_ONE, Param
from elmo_experiments.config.validate import Validator
from elmo_experiments.errors import ConfigError

VARIANT_PARAMS = (
    Param("config", str, None, doc="this variant's config instead of the spec's"),
    Param("overrides", list, [], doc="-o overrides after the spec's"),
    Param("ext_vars", dict, {}),
    Param("same_as", str, None, doc="SPEC:VARIANT, another sweep's identical variant: shown "
          "from its results, not run here"),
)
SPEC_PARAMS = (
    Param("name", str),
    Param("config", str, doc="the base experiment config, relative to the spec file"),
    Param("overrides", list, []),
    Param("ext_vars", dict, {}),
    Param("variants", dict, {"default": {}}, doc="name -> {config, overrides, ext_vars}"),
    Param("seeds", list, [13370]),
    Param("fractions", list, [1.0], bounds=(1e-9, 1.0)),
    Param("metrics", list, [], doc="metrics.json keys to summarise (default: test_ and best_)"),
    Param("workers", int, 1, bounds=AT_LEAST_ONE, doc="cells run at once on one machine"),
)


def cell_name(variant: str, fraction: float, seed: int) -> str:
    """A cell's run directory name (and its name in a summary)."""
    return f"{variant}-frac{fraction:g}-seed{seed}"


@dataclass(frozen=True)
class Cell:
    """One run of the grid."""

    variant: str
    seed: int
    fraction: float
    config: str
    overrides: tuple[str, ...]
    ext_vars: tuple[tuple[str, str], ...] = field(default=())
    same_as: str | None = None  # "<sweep>/<variant>": that sweep runs this cell

    @property
    def name(self) -> str:
        return cell_name(self.variant, self.fraction, self.seed)

    def command(self, run_dir: Path, force: bool = False) -> str:
        """The equivalent ``elmo-exp train`` command line (for any other scheduler): it
        resumes the run, or with ``force`` trains it afresh."""
        parts = ["elmo-exp", "train", shown_path(self.config), "-s", str(run_dir),
                 "--force" if force else "--recover"]
        for override in self.overrides:
            parts += ["-o", override]
        for key, value in self.ext_vars:
            parts += ["--ext-var", f"{key}={value}"]
        return shlex.join(parts)


@dataclass
class Sweep:
    name: str
    cells: list[Cell]
    metrics: list[str]
    workers: int

    def own(self) -> Sweep:
        """The grid without the cells that another sweep runs (``same_as``)."""
        return replace(self, cells=[cell for cell in self.cells if cell.same_as is None])

    def only(self, variants: list[str], seeds: list[int] | None = None,
             fractions: list[float] | None = None) -> Sweep:
        """The grid restricted to some variants, seeds and fractions (an empty or missing
        list keeps them all); one the spec lacks is a ``ConfigError`` saying what it has."""
        problems, keep = [], []
        for flag, chosen, key in (("--only", variants, "variant"), ("--seed", seeds, "seed"),
                                  ("--fraction", fractions, "fraction")):
            known = list(dict.fromkeys(getattr(cell, key) for cell in self.cells))
            listed = ", ".join(map(_shown, known))
            problems += [f"{flag} {_shown(v)}: the sweep {self.name!r} has no such {key} "
                         f"(it has {listed})" for v in chosen or [] if v not in known]
            keep.append((key, set(chosen or known)))
        if problems:
            raise ConfigError(problems)
        return replace(self, cells=[c for c in self.cells
                                    if all(getattr(c, key) in values for key, values in keep)])


def _shown(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def load_sweep(path: str | Path, shared: bool = True) -> Sweep:
    """The spec's cells, in a stable order (variant, fraction, seed); every problem at once.
    ``shared``: check ``same_as`` variants against their sweep (off inside that check)."""
    path = Path(path)
    raw = evaluate_jsonnet(path)
    validator = Validator()
    values = validator.fields(raw, SPEC_PARAMS, "")
    variants = {}
    for name, variant in (values.get("variants") or {}).items():
        variants[name] = validator.fields(variant, VARIANT_PARAMS, f"variants.{name}")
    for key in ("seeds", "fractions"):
        if not values.get(key):
            validator.problems.append(f"{key}: at least one is needed")
    if any(not isinstance(s, int) or isinstance(s, bool) for s in values.get("seeds") or []):
        validator.problems.append("seeds: expected whole numbers")
    if validator.problems:
        raise ConfigError(validator.problems, source=str(path))
    cells = []
    for variant, settings in variants.items():
        config = (path.parent / (settings["config"] or values["config"])).resolve()
        if not config.is_file():
            raise ConfigError([f"variants.{variant}: config {config} does not exist"],
                              source=str(path))
        ext_vars = {**values["ext_vars"], **settings["ext_vars"]}
        for fraction in values["fractions"]:
            for seed in values["seeds"]:
                overrides = (*values["overrides"], *settings["overrides"],
                             f"random_seed={seed}", f"train_data_fraction={float(fraction)}")
                cells.append(Cell(variant, seed, float(fraction), str(config),
                                  tuple(str(o) for o in overrides),
                                  tuple(sorted((str(k), str(v)) for k, v in ext_vars.items()))))
    if shared:
        cells = _shared_cells(path, variants, cells)
    return Sweep(values["name"], cells, list(values["metrics"]), values["workers"])


def _shared_cells(path: Path, variants: dict[str, dict[str, Any]], cells: list[Cell]
                  ) -> list[Cell]:
    """Mark the cells of ``same_as`` variants, after checking that the other sweep has the
    very same runs; every mismatch is reported."""
    problems = []
    loaded: dict[Path, Sweep] = {}  # each other spec evaluated once
    for variant, settings in variants.items():
        if not settings["same_as"]:
            continue
        where = f"variants.{variant}.same_as"
        spec, _, other = settings["same_as"].rpartition(":")
        if not spec or not other:
            problems.append(f"{where}: expected SPEC:VARIANT, got {settings['same_as']!r}")
            continue
        other_path = path.parent / spec
        if other_path not in loaded:
            loaded[other_path] = load_sweep(other_path, shared=False)
        theirs = loaded[other_path]
        found = {(c.seed, c.fraction): c for c in theirs.cells if c.variant == other}
        if not found:
            problems.append(f"{where}: {spec} has no variant {other!r}")
            continue
        for i, cell in enumerate(cells):
            if cell.variant != variant:
                continue
            twin = found.get((cell.seed, cell.fraction))
            if twin is None:
                continue  # a cell the other sweep lacks: run here
            if (twin.config, twin.overrides, twin.ext_vars) != (
                    cell.config, cell.overrides, cell.ext_vars):
                problems.append(f"{where}: {cell.name} is not the same run as {spec}'s "
                                f"{twin.name} (config, overrides or ext vars differ)")
            else:
                cells[i] = replace(cell, same_as=f"{theirs.name}/{other}")
    if problems:
        raise ConfigError(problems, source=str(path))
    return cells


def shown_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it, so that printed
    commands and committed summaries name no machine's folders."""
    with contextlib.suppress(ValueError):
        return str(Path(path).relative_to(Path.cwd()))
    return path


def cell_settings(cell: Cell) -> dict[str, Any]:
    """What ``summary.json`` records of a cell (its config as ``shown_path`` gives it)."""
    settings = {"variant": cell.variant, "seed": cell.seed, "fraction": cell.fraction,
                "config": shown_path(cell.config), "overrides": list(cell.overrides),
                "ext_vars": dict(cell.ext_vars)}
    return {**settings, "same_as": cell.same_as} if cell.same_as else settings
