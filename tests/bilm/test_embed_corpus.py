"""``elmo-exp embed`` at corpus scale: recovery after a kill, sorted batches, pooling, float16,
the ragged layout, raw-text tokenisation, the umask, and the refusals."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import torch

from elmo_experiments.bilm import embed as embed_module
from elmo_experiments.bilm.embed import EmbedOptions, Staging, embed_file, schedule
from elmo_experiments.errors import DataError

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "looked", "at", "dog", "house", "river",
         "quickly", "slowly", ",", "."]


def write_text(path: Path, lines: int, seed: int = 0) -> Path:
    """Sentences of 0 to 30 words, in no order of length."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(lines):
            count = rng.choice([0, 1, 3, 5, 8, 12, 20, 30])
            handle.write(" ".join(rng.choice(WORDS) for _ in range(count)) + "\n")
    return path


def command(text: Path, output: Path, weights: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "elmo_experiments", "embed", str(text), str(output),
            "--weights", str(weights), *options]


def run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1", **env})


def contents(path: Path) -> dict[str, np.ndarray]:
    with h5py.File(path, "r") as handle:
        return {name: handle[name][...] for name in handle}


def batches_done(staging: Staging) -> int:
    try:
        return int(torch.load(staging.progress, weights_only=True)["batches"])
    except (OSError, RuntimeError, EOFError):  # not written yet
        return 0


@pytest.mark.parametrize("options, kill", [
    pytest.param(("--batch-size", "4", "--dtype", "float16", "--pool", "mean"), signal.SIGKILL,
                 id="stateless-float16-mean-SIGKILL"),
    pytest.param(("--batch-size", "4", "--state", "stateful", "--layout", "ragged"),
                 signal.SIGTERM, id="stateful-ragged-SIGTERM",
                 marks=pytest.mark.slow),  # the second kill of the campaign: make test-all
])
def test_a_killed_embed_recovers_to_the_uninterrupted_file_bit_for_bit(
        tiny_bilm_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        options: tuple[str, ...], kill: signal.Signals) -> None:
    text = write_text(tmp_path / "text.txt", 1000)
    whole, recovered = tmp_path / "whole.hdf5", tmp_path / "recovered.hdf5"
    result = run(command(text, whole, tiny_bilm_dir, *options))
    assert result.returncode == 0, result.stderr[-3000:]
    staging = Staging(recovered)
    process = subprocess.Popen(command(text, recovered, tiny_bilm_dir, "--recover", *options),
                               cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while batches_done(staging) < 20 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(kill)
    process.wait()
    done = batches_done(staging)
    assert process.returncode == -kill and done >= 20 and not recovered.exists()
    lengths = np.array([len(line.split()) for line in text.read_text("utf-8").splitlines()])
    total = len(lengths)
    parsed = EmbedOptions(batch_size=4, state="stateful" if "stateful" in options else
                          "stateless")
    remaining = sum(len(batch) for batch in list(schedule(lengths, parsed))[done:])
    assert 0 < remaining < total
    # the recovery, in this process, counting the sentences it embeds
    embedded = []
    original = embed_module.BilmRunner.forward

    def counting(self, char_ids):  # type: ignore[no-untyped-def]
        embedded.append(char_ids.shape[0])
        return original(self, char_ids)

    monkeypatch.setattr(embed_module.BilmRunner, "forward", counting)
    pool = options[options.index("--pool") + 1] if "--pool" in options else "none"
    assert embed_file(text, recovered, str(tiny_bilm_dir), batch_size=4, state=parsed.state,
                      progress=False, pool=pool,
                      dtype="float16" if "float16" in options else "float32",
                      layout="ragged" if "ragged" in options else "sentences",
                      recover=True) == total
    assert sum(embedded) == remaining  # nothing recomputed
    assert recovered.read_bytes() == whole.read_bytes()
    assert not staging.exists()


def test_a_kill_between_the_vectors_and_the_record_recomputes_that_batch_once(
        tiny_bilm_dir: Path, tmp_path: Path) -> None:
    text = write_text(tmp_path / "text.txt", 40)
    whole, recovered = tmp_path / "whole.hdf5", tmp_path / "recovered.hdf5"
    assert run(command(text, whole, tiny_bilm_dir, "--batch-size", "8")).returncode == 0
    killed = run(command(text, recovered, tiny_bilm_dir, "--batch-size", "8"),
                 ELMO_FAULT_AT="embed:batch")
    assert killed.returncode == -signal.SIGKILL
    staging = Staging(recovered)
    assert staging.vectors.stat().st_size > 0 and batches_done(staging) == 0
    again = run(command(text, recovered, tiny_bilm_dir, "--batch-size", "8"))
    assert again.returncode == 1 and again.stderr.strip().splitlines() == [
        f"error: {recovered}: an interrupted embed left {staging.folder}; --recover finishes "
        "it, --force starts over"]
    finished = run(command(text, recovered, tiny_bilm_dir, "--batch-size", "8", "--recover"))
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert recovered.read_bytes() == whole.read_bytes()


def test_recovery_refuses_other_settings_and_an_existing_output_needs_force(
        tiny_bilm_dir: Path, tmp_path: Path) -> None:
    text = write_text(tmp_path / "text.txt", 10)
    output, other = tmp_path / "out.hdf5", tmp_path / "other.hdf5"
    embed_file(text, other, str(tiny_bilm_dir), batch_size=8, progress=False)
    with h5py.File(other, "r") as handle:  # an interrupted run with other settings
        Staging(output).start(json.loads(handle.attrs["embed_settings"]))
    with pytest.raises(DataError, match=r"made with batch_size 8, not 4; run it as it was"):
        embed_file(text, output, str(tiny_bilm_dir), batch_size=4, progress=False, recover=True)
    assert embed_file(text, output, str(tiny_bilm_dir), batch_size=4, progress=False,
                      force=True) == 10
    assert not Staging(output).exists()
    result = run(command(text, output, tiny_bilm_dir, "--batch-size", "4"))
    assert result.returncode == 1 and result.stderr.strip().splitlines() == [
        f"error: {output} exists; --force replaces it"]
    before = output.read_bytes()  # a finished output: --recover has nothing to do
    assert embed_file(text, output, str(tiny_bilm_dir), batch_size=4, progress=False,
                      recover=True) == 10
    assert output.read_bytes() == before
    with pytest.raises(DataError) as info:  # the finished output's settings, named
        embed_file(text, output, str(tiny_bilm_dir), batch_size=2, progress=False, recover=True)
    assert str(info.value) == (f"{output}: a finished embed made with batch_size 4, not 2; "
                               f"write to another file, or --force replaces it")


def test_a_run_killed_before_its_first_record_recovers(tiny_bilm_dir: Path,
                                                        tmp_path: Path) -> None:
    text = write_text(tmp_path / "text.txt", 10)
    output = tmp_path / "out.hdf5"
    staging = Staging(output)
    staging.folder.mkdir()
    (staging.folder / "settings.json").write_text("{}", encoding="utf-8")
    assert embed_file(text, output, str(tiny_bilm_dir), progress=False, recover=True) == 10
    embed_file(text, tmp_path / "whole.hdf5", str(tiny_bilm_dir), progress=False)
    assert output.read_bytes() == (tmp_path / "whole.hdf5").read_bytes()


def test_schedule_sorts_windows_by_length_only_in_the_deterministic_modes() -> None:
    lengths = np.array([3, 9, 0, 5, 9, 1, 7])
    assert [list(b) for b in schedule(lengths, EmbedOptions(batch_size=3))] == [
        [1, 4, 6], [3, 0, 5], [2]]
    assert [list(b) for b in schedule(lengths, EmbedOptions(batch_size=3, state="stateful"))
            ] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [list(b) for b in schedule(lengths, EmbedOptions(batch_size=3, sort=False))] == [
        [0, 1, 2], [3, 4, 5], [6]]


@pytest.fixture(scope="module")
def outputs(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, dict[str, np.ndarray]]:
    """One text embedded in several ways, keyed by a name."""
    folder = tmp_path_factory.mktemp("embed_corpus")
    text = write_text(folder / "text.txt", 300, seed=1)
    ways = {"sorted": {}, "unsorted": {"sort": False}, "top": {"layers": "top"},
            "float16": {"dtype": "float16"}, "ragged": {"layout": "ragged"},
            "ragged-top": {"layout": "ragged", "layers": "top"},
            **{f"pool-{pool}": {"pool": pool} for pool in ("mean", "max", "first")},
            **{f"pool-{pool}-float16": {"pool": pool, "dtype": "float16"}
               for pool in ("mean", "max", "first")},
            "ragged-mean": {"layout": "ragged", "pool": "mean"}}
    result = {}
    for name, options in ways.items():
        embed_file(text, folder / f"{name}.hdf5", str(tiny_bilm_dir), batch_size=16,
                   progress=False, **options)
        result[name] = contents(folder / f"{name}.hdf5")
    return result


def sentences(output: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [output[str(i)] for i in range(len(output) - 1)]


def test_sorted_batches_give_the_unsorted_vectors_in_input_order(outputs) -> None:
    sorted_, unsorted = outputs["sorted"], outputs["unsorted"]
    assert set(sorted_) == set(unsorted)
    assert sorted_["sentence_to_index"] == unsorted["sentence_to_index"]
    for a, b in zip(sentences(sorted_), sentences(unsorted), strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


@pytest.mark.parametrize("pool", ["mean", "max", "first"])
def test_pooling_matches_numpy_on_the_token_vectors(outputs, pool: str) -> None:
    reduce = {"mean": lambda x: x.mean(axis=-2), "max": lambda x: x.max(axis=-2),
              "first": lambda x: x[..., 0, :]}[pool]
    pooled = sentences(outputs[f"pool-{pool}"])
    for tokens, vector in zip(sentences(outputs["sorted"]), pooled, strict=True):
        expected = reduce(tokens) if tokens.shape[1] else np.zeros((3, 8), np.float32)
        np.testing.assert_allclose(vector, expected, rtol=1e-6, atol=1e-6)
    assert any(s.shape[1] == 0 for s in sentences(outputs["sorted"]))  # blank lines pooled


@pytest.mark.parametrize("name", ["sorted", "pool-mean", "pool-max", "pool-first"])
def test_float16_is_the_float32_output_cast(outputs, name: str) -> None:
    half = sentences(outputs["float16" if name == "sorted" else f"{name}-float16"])
    for full, got in zip(sentences(outputs[name]), half, strict=True):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, full.astype(np.float16))


def test_the_ragged_layout_holds_the_per_sentence_layout(outputs) -> None:
    for ragged, per_sentence, axis in (("ragged", "sorted", 1), ("ragged-top", "top", 0)):
        embeddings, offsets = outputs[ragged]["embeddings"], outputs[ragged]["offsets"]
        parts = sentences(outputs[per_sentence])
        assert set(outputs[ragged]) == {"embeddings", "offsets"} and len(offsets) == 301
        for i, part in enumerate(parts):
            np.testing.assert_array_equal(
                np.take(embeddings, range(offsets[i], offsets[i + 1]), axis=axis), part)
    pooled = outputs["ragged-mean"]["embeddings"]
    assert set(outputs["ragged-mean"]) == {"embeddings"} and pooled.shape == (3, 300, 8)
    for i, vector in enumerate(sentences(outputs["pool-mean"])):
        np.testing.assert_array_equal(pooled[:, i], vector)


def test_tokenize_splits_raw_text_as_pretraining_does(tiny_bilm_dir: Path,
                                                      tmp_path: Path) -> None:
    raw = tmp_path / "raw.txt"
    raw.write_text("Hello, world! It's 5pm.\n", encoding="utf-8")
    split = tmp_path / "split.txt"
    from elmo_experiments.data.tokenizers import tokenize

    tokens = tokenize("Hello, world! It's 5pm.")
    assert len(tokens) > 4
    split.write_text(" ".join(tokens) + "\n", encoding="utf-8")
    embed_file(raw, tmp_path / "raw.hdf5", str(tiny_bilm_dir), progress=False, tokenize=True)
    embed_file(split, tmp_path / "split.hdf5", str(tiny_bilm_dir), progress=False)
    got, expected = contents(tmp_path / "raw.hdf5"), contents(tmp_path / "split.hdf5")
    assert got["0"].shape == (3, len(tokens), 8)
    np.testing.assert_array_equal(got["0"], expected["0"])


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_the_output_gets_the_umask(tiny_bilm_dir: Path, tmp_path: Path, umask: int,
                                   mode: int) -> None:
    text = write_text(tmp_path / "text.txt", 5)
    previous = os.umask(umask)
    try:
        embed_file(text, tmp_path / "out.hdf5", str(tiny_bilm_dir), progress=False,
                   layout="ragged", dtype="float16")
    finally:
        os.umask(previous)
    assert (tmp_path / "out.hdf5").stat().st_mode & 0o777 == mode
    with h5py.File(tmp_path / "out.hdf5", "r") as handle:
        settings = json.loads(handle.attrs["embed_settings"])
    assert settings["layout"] == "ragged" and settings["sentences"] == 5


@pytest.fixture(scope="module")
def interrupted(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with text.txt and the staging of an embed killed in its first batch."""
    folder = tmp_path_factory.mktemp("interrupted")
    text = write_text(folder / "text.txt", 40)
    killed = run(command(text, folder / "out.hdf5", tiny_bilm_dir, "--batch-size", "8"),
                 ELMO_FAULT_AT="embed:batch")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert Staging(folder / "out.hdf5").progress.is_file()
    return folder


@pytest.mark.parametrize(("name", "damage"), [
    ("progress.pt", b"\x80\x04garbage, not a pickle"),
    ("progress.pt", b""),
    ("progress.pt", "a dict of other keys"),
    ("progress.pt", "negative bytes"),
    ("settings.json", b"{not json"),
    ("settings.json", b"[1, 2]"),
])
def test_damaged_staging_is_one_line_and_changes_nothing(interrupted: Path, tmp_path: Path,
                                                         tiny_bilm_dir: Path, name: str,
                                                         damage: bytes | str) -> None:
    """Whatever state --recover reads may be damaged: one line naming the file and --force,
    never a traceback, and the output is not written."""
    shutil.copytree(interrupted, tmp_path / "copy")
    output = tmp_path / "copy" / "out.hdf5"
    target = Staging(output).folder / name
    if damage == "a dict of other keys":
        torch.save({"x": 1}, target)
    elif damage == "negative bytes":
        torch.save({"batches": 1, "bytes": -5, "crc32": 0, "carried": None}, target)
    else:
        target.write_bytes(damage)
    with pytest.raises(DataError) as info:
        embed_file(tmp_path / "copy" / "text.txt", output, str(tiny_bilm_dir), batch_size=8,
                   progress=False, recover=True)
    message = str(info.value)
    assert message.startswith(f"{target}: damaged (") and "\n" not in message
    assert message.endswith("), so the interrupted embed cannot resume; --force starts over")
    assert not output.exists()


def test_damaged_staging_from_the_command_line(interrupted: Path, tmp_path: Path,
                                               tiny_bilm_dir: Path) -> None:
    """The command says it in one line (no traceback, no torch warning), and --force works."""
    shutil.copytree(interrupted, tmp_path / "copy")
    output = tmp_path / "copy" / "out.hdf5"
    target = Staging(output).progress
    target.write_bytes(b"\x80\x04garbage, not a pickle")
    args = command(tmp_path / "copy" / "text.txt", output, tiny_bilm_dir, "--batch-size", "8")
    result = run([*args, "--recover"])
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: {target}: damaged (UnpicklingError: Weights only load failed), so the "
        f"interrupted embed cannot resume; --force starts over"], result.stderr[-2000:]
    assert not output.exists()
    assert run([*args, "--force"]).returncode == 0 and output.is_file()


class Interrupted(Exception):
    """Stands for a kill between a batch's vectors and its record."""


def interrupt(text: Path, output: Path, weights: Path, after: int, **options: Any) -> Staging:
    """Run ``embed_file`` in this process until ``after`` batches are recorded and the next
    one's vectors written, then stop it as a kill there would: the staging folder stays."""
    calls = 0

    def fault(name: str) -> None:
        nonlocal calls
        calls += 1
        if calls > after:
            raise Interrupted

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embed_module, "fault_point", fault)
        with pytest.raises(Interrupted):
            embed_file(text, output, str(weights), progress=False, **options)
    return Staging(output)


TOKEN_BYTES = 3 * 8 * 4  # a token's vectors: 3 layers of 8 float32


@pytest.fixture(scope="module")
def stopped(tiny_bilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """text.txt (10 lines), whole-STATE.hdf5, and STATE/out.hdf5's staging after 2 of 5
    batches of 2 (plus the third's unrecorded vectors), for STATE stateless and stateful."""
    folder = tmp_path_factory.mktemp("stopped")
    text = write_text(folder / "text.txt", 10, seed=3)
    for state in ("stateless", "stateful"):
        embed_file(text, folder / f"whole-{state}.hdf5", str(tiny_bilm_dir), batch_size=2,
                   state=state, progress=False)
        (folder / state).mkdir()
        staging = interrupt(text, folder / state / "out.hdf5", tiny_bilm_dir, 2, batch_size=2,
                            state=state)
        assert torch.load(staging.progress, weights_only=True)["batches"] == 2
    return folder


def stopped_copy(stopped: Path, tmp_path: Path, state: str = "stateless"
                 ) -> tuple[Path, Staging, dict[str, bytes]]:
    """A copy of ``stopped``'s STATE run: its output path, staging and staging files' bytes."""
    shutil.copytree(stopped / state, tmp_path / state)
    staging = Staging(tmp_path / state / "out.hdf5")
    return staging.output, staging, {p.name: p.read_bytes() for p in staging.folder.iterdir()}


def recover(stopped: Path, output: Path, weights: Path, state: str = "stateless") -> int:
    return embed_file(stopped / "text.txt", output, str(weights), batch_size=2, state=state,
                      progress=False, recover=True)


def refusal(stopped: Path, output: Path, weights: Path, state: str = "stateless") -> str:
    """The one-line message of a recovery that must refuse, having written no output."""
    with pytest.raises(DataError) as info:
        recover(stopped, output, weights, state)
    assert not output.exists()
    return str(info.value)


def damaged(path: Path, why: str) -> str:
    return f"{path}: damaged ({why}), so the interrupted embed cannot resume; --force starts over"


def ends(stopped: Path) -> list[int]:
    """The bytes of the stateless run's vectors after each batch, from the token counts."""
    lengths = np.array([len(line.split()) for line in
                        (stopped / "text.txt").read_text("utf-8").splitlines()])
    batches = schedule(lengths, EmbedOptions(batch_size=2))
    return [0, *np.cumsum([lengths[b].sum() * TOKEN_BYTES for b in batches]).tolist()]


@pytest.mark.parametrize("state", ["stateless", "stateful"])
def test_a_run_stopped_in_process_recovers_to_the_whole_file(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, state: str) -> None:
    output, staging, _ = stopped_copy(stopped, tmp_path, state)
    assert recover(stopped, output, tiny_bilm_dir, state) == 10
    assert output.read_bytes() == (stopped / f"whole-{state}.hdf5").read_bytes()
    assert not staging.exists()


@pytest.mark.parametrize("change", [
    lambda r: {**r, "batches": 999}, lambda r: {**r, "batches": 5},
    lambda r: {**r, "batches": 3}, lambda r: {**r, "bytes": 0},
    lambda r: {**r, "bytes": r["bytes"] - 3}, lambda r: {**r, "batches": 1},
], ids=["batches-999", "batches-5", "batches-3", "bytes-0", "bytes-less-3", "batches-1"])
def test_an_inconsistent_progress_record_is_one_line_and_keeps_the_work(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, change: Any) -> None:
    """The record's batches and bytes must agree with the input and options (batches 1 with
    the bytes of 2 once wrote a wrong file): else one line, the folder left as it was."""
    output, staging, before = stopped_copy(stopped, tmp_path)
    record = change(torch.load(staging.progress, weights_only=True))
    torch.save(record, staging.progress)
    before["progress.pt"] = staging.progress.read_bytes()
    take = ends(stopped)
    if record["batches"] == 999:
        why = "999 batches done, but the input makes 5"
    else:
        n = record["batches"]
        why = (f"bytes {record['bytes']}, but the first {n} batch{'es' if n != 1 else ''} "
               f"take {take[n]}")
    assert refusal(stopped, output, tiny_bilm_dir) == damaged(staging.progress, why)
    assert {p.name: p.read_bytes() for p in staging.folder.iterdir()} == before


@pytest.mark.parametrize("damage", ["garbage", "short"])
def test_vectors_that_do_not_match_their_record_are_one_line(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, damage: str) -> None:
    """Same-size garbage (once a wrong file at rc 0) fails the record's CRC-32."""
    output, staging, _ = stopped_copy(stopped, tmp_path)
    recorded = torch.load(staging.progress, weights_only=True)["bytes"]
    size = staging.vectors.stat().st_size
    assert size > recorded  # the third batch's unrecorded vectors
    if damage == "garbage":
        staging.vectors.write_bytes(bytes(range(256)) * (size // 256) + bytes(size % 256))
        why = f"its first {recorded} bytes do not match the CRC-32 in progress.pt"
    else:
        staging.vectors.write_bytes(staging.vectors.read_bytes()[:recorded - 4])
        why = f"{recorded - 4} bytes, but progress.pt records {recorded}"
    before = staging.vectors.read_bytes()
    assert refusal(stopped, output, tiny_bilm_dir) == damaged(staging.vectors, why)
    assert staging.vectors.read_bytes() == before  # nothing truncated


def nan_state(state: list) -> list:
    state[0] = (torch.full_like(state[0][0], float("nan")), state[0][1])
    return state


@pytest.mark.parametrize("state, change, why", [
    ("stateful", lambda s: [(h[:1], c[:1]) for h, c in s],
     "carried LSTM state 0: h has shape (1, 4), not (2, 4)"),
    ("stateful", lambda s: [], "the carried LSTM state is not 4 (h, c) pairs"),
    ("stateful", lambda s: [(h.double(), c.double()) for h, c in s],
     "carried LSTM state 0: h is float64, not float32"),
    ("stateful", lambda s: None, "no carried LSTM state after 2 stateful batches"),
    ("stateful", nan_state, "carried LSTM state 0: h is not finite"),
    ("stateful", lambda s: [(torch.full_like(h, 3e38), c) for h, c in s],
     "carried LSTM state 0: h exceeds the layer's clip 3.0"),  # finite, but no LSTM's
    ("stateful", lambda s: [*s[:3], (s[3][0], "c")],
     "carried LSTM state 3 is not an (h, c) pair of tensors"),
    ("stateless", lambda s: [(torch.zeros(2, 4), torch.zeros(2, 16))] * 4,
     "a carried LSTM state in a stateless run"),
    ("stateful", lambda s: [(h.to("meta"), c.to("meta")) for h, c in s],
     "carried LSTM state 0: h is on the meta device, not the CPU"),  # once a traceback
    ("stateful", lambda s: [(h.to_sparse(), c.to_sparse()) for h, c in s],
     "carried LSTM state 0: h is a sparse_coo tensor, not a dense one"),  # once a traceback
    ("stateful", lambda s: [(h.bfloat16(), c.bfloat16()) for h, c in s],
     "carried LSTM state 0: h is bfloat16, not float32"),  # once other vectors at rc 0
], ids=["shape", "empty", "float64", "none", "nan", "beyond-clip", "not-a-tensor",
        "stateless", "meta", "sparse", "bfloat16"])
def test_a_damaged_carried_state_is_one_line_and_keeps_the_work(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, state: str, change: Any,
        why: str) -> None:
    """The LSTM state a stateful recovery carries on must be the biLM's: (h, c) per layer and
    direction, (rows, 4) and (rows, 16), float32, finite (NaN once gave NaN vectors at rc 0)."""
    output, staging, _ = stopped_copy(stopped, tmp_path, state)
    record = torch.load(staging.progress, weights_only=True)
    record["carried"] = change(record["carried"])
    torch.save(record, staging.progress)
    before = {p.name: p.read_bytes() for p in staging.folder.iterdir()}
    assert refusal(stopped, output, tiny_bilm_dir, state) == damaged(staging.progress, why)
    assert {p.name: p.read_bytes() for p in staging.folder.iterdir()} == before


@pytest.mark.parametrize("name", ["vectors.bin", "settings.json", "progress.pt"])
def test_a_missing_staging_file_is_one_line_and_keeps_the_folder(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, name: str) -> None:
    """A deleted vectors.bin was a write error that removed the folder; a deleted progress.pt
    beside recorded vectors started over. Now: one line, and the rest is kept."""
    output, staging, before = stopped_copy(stopped, tmp_path)
    (staging.folder / name).unlink()
    del before[name]
    assert refusal(stopped, output, tiny_bilm_dir) == damaged(staging.folder / name, "missing")
    assert {p.name: p.read_bytes() for p in staging.folder.iterdir()} == before


def test_a_file_in_the_staging_folders_place(stopped: Path, tmp_path: Path,
                                             tiny_bilm_dir: Path) -> None:
    """Not a folder: --recover refuses in one line, --force replaces it (once 'File exists')."""
    output = tmp_path / "out.hdf5"
    staging = Staging(output)
    staging.folder.write_text("not ours\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        embed_file(stopped / "text.txt", output, str(tiny_bilm_dir), batch_size=2,
                   progress=False)
    assert str(info.value) == (f"{output}: an interrupted embed left {staging.folder}; "
                               f"--recover finishes it, --force starts over")
    assert refusal(stopped, output, tiny_bilm_dir) == damaged(staging.folder, "not a folder")
    assert staging.folder.read_text(encoding="utf-8") == "not ours\n"
    assert embed_file(stopped / "text.txt", output, str(tiny_bilm_dir), batch_size=2,
                      progress=False, force=True) == 10
    assert output.read_bytes() == (stopped / "whole-stateless.hdf5").read_bytes()
    assert not staging.exists()


@pytest.mark.parametrize("link", [False, True], ids=["same-path", "symlink"])
def test_the_output_cannot_be_the_input(tmp_path: Path, tiny_bilm_dir: Path,
                                        link: bool) -> None:
    """``embed one.txt one.txt --force`` once replaced the text with its vectors."""
    text = write_text(tmp_path / "one.txt", 3)
    before = text.read_bytes()
    output = tmp_path / "link.hdf5" if link else text
    if link:
        output.symlink_to(text)
    with pytest.raises(DataError) as info:
        embed_file(text, output, str(tiny_bilm_dir), progress=False, force=True)
    assert str(info.value) == f"{output}: the input itself; write the vectors to another file"
    assert text.read_bytes() == before


def test_lines_may_end_in_a_lone_carriage_return(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    """Old Mac files (CR only) were one sentence; lines end as Python's universal newlines."""
    lines = ["the cat sat", "", "a dog", "on a mat ."]
    outputs = []
    for name, end in (("lf", "\n"), ("cr", "\r"), ("crlf", "\r\n")):
        text = tmp_path / f"{name}.txt"
        text.write_bytes("".join(line + end for line in lines).encode("utf-8"))
        assert embed_file(text, tmp_path / f"{name}.hdf5", str(tiny_bilm_dir),
                          progress=False) == 4
        outputs.append((tmp_path / f"{name}.hdf5").read_bytes())
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]
    mixed = tmp_path / "mixed.txt"
    mixed.write_bytes(b"the cat sat\r\n\ra dog\ron a mat .")
    assert embed_file(mixed, tmp_path / "mixed.hdf5", str(tiny_bilm_dir), progress=False) == 4
    assert (tmp_path / "mixed.hdf5").read_bytes() == outputs[0]


@pytest.mark.parametrize("batch_size", ["2", None, 2.5, 0, True])
def test_a_batch_size_that_is_not_a_positive_whole_number_is_one_line(
        tmp_path: Path, tiny_bilm_dir: Path, batch_size: Any) -> None:
    with pytest.raises(DataError) as info:
        embed_file(write_text(tmp_path / "t.txt", 2), tmp_path / "o.hdf5", str(tiny_bilm_dir),
                   batch_size=batch_size, progress=False)
    assert str(info.value) == f"batch_size must be a whole number, at least 1, got {batch_size!r}"


def regular_files(folder: Path) -> dict[str, bytes]:
    """The bytes of the regular files in ``folder`` (opening a named pipe would block)."""
    return {p.name: p.read_bytes() for p in folder.iterdir()
            if p.is_file() and not p.is_symlink()}


def put_special(path: Path, kind: str) -> str:
    """A KIND in ``path``'s place; what the refusal calls it."""
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
        return "a named pipe, not a regular file"
    if kind == "folder":
        path.mkdir()
        return "a folder, not a regular file"
    path.symlink_to("/dev/zero")  # once read until memory ran out
    return "a character device, not a regular file"


@pytest.mark.timeout(60)  # a named pipe once blocked --recover for good
@pytest.mark.parametrize("kind", ["fifo", "folder", "dev-zero"])
@pytest.mark.parametrize("name", ["settings.json", "progress.pt", "vectors.bin"])
def test_a_staging_file_that_is_not_a_regular_file_is_refused_unopened(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, name: str, kind: str) -> None:
    output, staging, _ = stopped_copy(stopped, tmp_path, "stateful")
    why = put_special(staging.folder / name, kind)
    before = regular_files(staging.folder)
    if kind == "dev-zero":  # the command, its memory capped: a regression fails, not the machine
        import resource

        def cap() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))

        result = subprocess.run(
            command(stopped / "text.txt", output, tiny_bilm_dir, "--batch-size", "2", "--state",
                    "stateful", "--recover"), cwd=ROOT, capture_output=True, text=True,
            timeout=300, preexec_fn=cap, env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert result.returncode == 1 and result.stderr.strip().splitlines() == [
            f"error: {damaged(staging.folder / name, why)}"], result.stderr[-2000:]
        assert not output.exists()
    else:
        assert refusal(stopped, output, tiny_bilm_dir, "stateful") == damaged(
            staging.folder / name, why)
    assert regular_files(staging.folder) == before


@pytest.mark.parametrize("keys", [("pool",), ("pool", "weights")])
def test_a_settings_record_without_a_key_is_damage_naming_it(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, keys: tuple[str, ...]) -> None:
    """A missing key once read as None: 'made with pool None, not 'none''."""
    output, staging, _ = stopped_copy(stopped, tmp_path)
    saved = json.loads(staging.settings.read_text(encoding="utf-8"))
    for key in keys:
        del saved[key]
    staging.settings.write_text(json.dumps(saved), encoding="utf-8")
    before = regular_files(staging.folder)
    assert refusal(stopped, output, tiny_bilm_dir) == damaged(
        staging.settings, "no " + ", ".join(map(repr, keys)))
    assert regular_files(staging.folder) == before


def test_a_staging_folder_that_is_a_symbolic_link_says_so_and_loses_nothing(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path) -> None:
    """Once 'damaged (not a folder)'; the work it links to is intact and what it says works."""
    output, staging, before = stopped_copy(stopped, tmp_path)
    moved = tmp_path / "elsewhere"
    staging.folder.rename(moved)
    staging.folder.symlink_to(moved)
    assert refusal(stopped, output, tiny_bilm_dir) == (
        f"{staging.folder}: a symbolic link (to {moved}), not a folder, so the interrupted "
        f"embed cannot resume; move the folder it links to in its place and --recover, or "
        f"--force starts over (removing the link only)")
    assert regular_files(moved) == before
    staging.folder.unlink()
    moved.rename(staging.folder)
    assert recover(stopped, output, tiny_bilm_dir) == 10
    assert output.read_bytes() == (stopped / "whole-stateless.hdf5").read_bytes()


@pytest.mark.timeout(60)  # a named pipe as the output once blocked h5py's open for good
@pytest.mark.parametrize("case", ["pool", "truncated", "fifo", "not-an-embed", "no-key"])
def test_recover_of_a_finished_output_says_what_is_wrong_with_it(
        tmp_path: Path, tiny_bilm_dir: Path, case: str) -> None:
    """Each was once 'exists and was not made by this embed'."""
    import h5py

    text = write_text(tmp_path / "text.txt", 10)
    output = tmp_path / "out.hdf5"
    embed_file(text, output, str(tiny_bilm_dir), progress=False)
    expected = {
        "pool": f"{output}: a finished embed made with pool 'none', not 'mean'; write to "
                "another file, or --force replaces it",
        "truncated": f"{output}: damaged (not a readable HDF5 file), so --recover cannot check "
                     "it; --force embeds it again",
        "fifo": f"{output}: a named pipe, not an embed's HDF5 file; --force replaces it",
        "not-an-embed": f"{output} exists and was not made by elmo-exp embed (no "
                        "embed_settings); write to another file, or --force replaces it",
        "no-key": f"{output}: damaged (embed_settings has no 'pool'); --force embeds it again",
    }[case]
    if case == "truncated":
        output.write_bytes(output.read_bytes()[:output.stat().st_size // 2])
    elif case == "fifo":
        output.unlink()
        os.mkfifo(output)
    elif case in ("not-an-embed", "no-key"):
        with h5py.File(output, "r+") as handle:
            settings = json.loads(handle.attrs.pop("embed_settings"))
            if case == "no-key":
                del settings["pool"]
                handle.attrs["embed_settings"] = json.dumps(settings)
    before = None if case == "fifo" else output.read_bytes()
    with pytest.raises(DataError) as info:
        embed_file(text, output, str(tiny_bilm_dir), progress=False, recover=True,
                   pool="mean" if case == "pool" else "none")
    assert str(info.value) == expected
    assert before is None or output.read_bytes() == before


@pytest.mark.parametrize("flag", ["recover", "force"])
def test_a_folder_as_the_output_is_one_line_before_any_work(
        tmp_path: Path, tiny_bilm_dir: Path, flag: str) -> None:
    """The command's own check says so; ``embed_file(force=True)`` once embedded every batch,
    then failed to rename the file onto the folder."""
    output = tmp_path / "out.hdf5"
    output.mkdir()
    with pytest.raises(DataError) as info:
        embed_file(write_text(tmp_path / "text.txt", 3), output, str(tiny_bilm_dir),
                   progress=False, **{flag: True})
    assert str(info.value) == f"{output}: a folder; name the HDF5 file to write"
    assert list(output.iterdir()) == [] and not Staging(output).exists()


def test_a_bf16_stateful_run_carries_and_recovers_its_own_dtype(
        tmp_path: Path, tiny_bilm_dir: Path) -> None:
    """A bf16 run (as asked: the suite forces bf16) carries bfloat16, recovers to its
    uninterrupted file bit for bit, and refuses float32 there."""
    text = write_text(tmp_path / "text.txt", 10, seed=3)
    options: dict[str, Any] = {"batch_size": 2, "state": "stateful", "precision": "bf16"}
    whole, output = tmp_path / "whole.hdf5", tmp_path / "out.hdf5"
    embed_file(text, whole, str(tiny_bilm_dir), progress=False, **options)
    staging = interrupt(text, output, tiny_bilm_dir, 2, **options)
    record = torch.load(staging.progress, weights_only=True)
    assert {t.dtype for pair in record["carried"] for t in pair} == {torch.bfloat16}
    torch.save({**record, "carried": [(h.float(), c.float()) for h, c in record["carried"]]},
               staging.progress)
    with pytest.raises(DataError) as info:
        embed_file(text, output, str(tiny_bilm_dir), progress=False, recover=True, **options)
    assert str(info.value) == damaged(staging.progress,
                                      "carried LSTM state 0: h is float32, not bfloat16")
    torch.save(record, staging.progress)
    assert embed_file(text, output, str(tiny_bilm_dir), progress=False, recover=True,
                      **options) == 10
    assert output.read_bytes() == whole.read_bytes()


def test_a_bf16_run_that_runs_in_fp32_carries_float32(
        tiny_bilm_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a CPU without bf16 units (not forced) bf16 runs in fp32: the state it carries, and
    so the one its recovery takes, is float32."""
    from elmo_experiments import precision as precision_module
    from elmo_experiments.bilm.characters import batch_to_ids
    from elmo_experiments.bilm.pretrained import resolve_weights
    from elmo_experiments.bilm.state import BilmRunner
    from elmo_experiments.bilm.weights import load_bilm

    monkeypatch.delenv("ELMO_FORCE_BF16", raising=False)
    monkeypatch.setattr(precision_module, "native_bf16", lambda device="cpu": False)
    runner = BilmRunner(load_bilm(*resolve_weights(str(tiny_bilm_dir))), "stateful",
                        precision="bf16")
    assert runner.precision == "fp32"
    with torch.no_grad():
        runner(batch_to_ids([["the", "cat", "sat"], ["a"]]))
    carried = runner.carried_state()
    assert carried is not None and carried[0][0].dtype == torch.float32
    assert runner.carried_state_problem(carried, 2) is None
    assert runner.carried_state_problem([(h.bfloat16(), c.bfloat16()) for h, c in carried],
                                        2) == "carried LSTM state 0: h is bfloat16, not float32"


def modes_apply() -> list[str]:
    """A command prefix under which file modes apply: none for a user, setpriv dropping the
    capabilities that override them for root (skipped where that cannot be done)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    prefix = [setpriv or "setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner",
              "--"]
    if setpriv is None or subprocess.run([*prefix, "true"], capture_output=True).returncode:
        pytest.skip("root, and setpriv cannot drop the capabilities that override file modes")
    return prefix


@pytest.mark.parametrize("name, mode, verb", [
    ("vectors.bin", 0o444, "read and write"), ("progress.pt", 0o000, "read"),
    ("settings.json", 0o000, "read"), (".", 0o000, "read"),
], ids=["vectors-444", "progress-000", "settings-000", "folder-000"])
def test_a_staging_file_without_permission_is_intact_work_not_damage(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, name: str, mode: int,
        verb: str) -> None:
    """Once 'damaged (PermissionError...) ...; --force starts over', which threw the work away."""
    prefix = modes_apply()
    output, staging, before = stopped_copy(stopped, tmp_path)
    target = staging.folder if name == "." else staging.folder / name
    target.chmod(mode)
    try:
        result = run([*prefix, *command(stopped / "text.txt", output, tiny_bilm_dir,
                                        "--batch-size", "2", "--recover")])
    finally:
        target.chmod(0o755 if name == "." else 0o644)
    assert result.returncode == 1 and result.stderr.strip().splitlines() == [
        f"error: {target}: cannot {verb} it (permission denied); the interrupted embed's "
        f"work is intact: fix its permissions, then --recover"], result.stderr[-2000:]
    assert regular_files(staging.folder) == before and not output.exists()
    assert recover(stopped, output, tiny_bilm_dir) == 10  # as it says
    assert output.read_bytes() == (stopped / "whole-stateless.hdf5").read_bytes()


@pytest.mark.parametrize("where", ["output-folder", "staging-folder"])
def test_a_write_without_permission_keeps_the_batches_done(
        stopped: Path, tmp_path: Path, tiny_bilm_dir: Path, where: str) -> None:
    """A read-only folder (EACCES) takes the full disk's path: the recorded work stays."""
    prefix = modes_apply()
    output, staging, _ = stopped_copy(stopped, tmp_path)
    folder = output.parent if where == "output-folder" else staging.folder
    failed = output if where == "output-folder" else staging.progress
    folder.chmod(0o555)
    try:
        result = run([*prefix, *command(stopped / "text.txt", output, tiny_bilm_dir,
                                        "--batch-size", "2", "--recover")])
    finally:
        folder.chmod(0o755)
    assert result.returncode == 1 and result.stderr.strip().splitlines() == [
        f"error: {failed}: cannot write it: Permission denied; an earlier version of it, if "
        f"any, is intact; the batches done so far are kept in {staging.folder}: --recover "
        f"finishes the run"], result.stderr[-2000:]
    assert not output.exists() and batches_done(staging) == (5 if where == "output-folder"
                                                             else 2)
    assert recover(stopped, output, tiny_bilm_dir) == 10
    assert output.read_bytes() == (stopped / "whole-stateless.hdf5").read_bytes()
