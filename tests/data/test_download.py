"""`elmo-exp data download / where / list` against a local HTTP server serving files made here."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import socket
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from http_files import Server

from elmo_experiments.cli import cli
from elmo_experiments.data import download as dl
from elmo_experiments.data.download import Dataset, Source, download, where
from elmo_experiments.errors import DataError

TRAIN = b"the cat sat\non the mat\n" * 50
DOC = b"#begin document (x); part 000\nA\n#end document\n"
PLAIN = bytes(range(256)) * 40  # 10,240 bytes
NOTES = b"notes, stored gzipped on the server\n" * 20


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bundle/train.txt", TRAIN)
        archive.writestr("bundle/docs/a.conll", DOC)
        archive.writestr("bundle/docs/deep/b.conll", DOC + b"B\n")
        archive.writestr("__MACOSX/bundle/._train.txt", b"junk")
        archive.writestr("bundle/other.txt", b"not wanted")
    return buffer.getvalue()


FILES = {"/toy.zip": _zip(), "/plain.bin": PLAIN, "/notes.txt.gz": gzip.compress(NOTES)}


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(honour_range: bool = True, cut: int | None = None) -> Server:
        servers.append(Server(FILES, honour_range, cut, "/plain.bin"))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def toy_table(url: str, plain_sha: str | None = None) -> dict[str, Dataset]:
    return {d.name: d for d in [
        Dataset("toy", "a toy set", "CC0", (
            Source(f"{url}/toy.zip", (("bundle/train.txt", "toy/train.txt"),
                                      ("bundle/docs/", "toy/docs/")), "zip"),
            Source(f"{url}/plain.bin", (("", "toy/plain.bin"),), sha256=plain_sha),
            Source(f"{url}/notes.txt.gz", (("", "toy/notes.txt.gz"),)),
            Source(f"{url}/plain.bin", (("", "toy/packed/plain.bin.gz"),), compress=True))),
        Dataset("secret", "a licensed set", "by agreement", layout=("secret/train.txt",),
                how="ask the owners nicely"),
    ]}


def quiet(message: str) -> None:
    pass


def test_download_writes_the_layout_and_a_manifest(serve, tmp_path: Path) -> None:
    server = serve()
    root = tmp_path / "data"
    targets = download(["toy"], root, toy_table(server.url), log=quiet)
    assert (root / "toy/train.txt").read_bytes() == TRAIN
    assert (root / "toy/docs/a.conll").read_bytes() == DOC
    assert (root / "toy/docs/deep/b.conll").read_bytes() == DOC + b"B\n"
    assert (root / "toy/plain.bin").read_bytes() == PLAIN
    assert gzip.decompress((root / "toy/notes.txt.gz").read_bytes()) == NOTES
    packed = (root / "toy/packed/plain.bin.gz").read_bytes()
    assert gzip.decompress(packed) == PLAIN and packed[4:8] == b"\0\0\0\0"  # mtime 0
    assert root / "toy/docs" in targets and len(targets) == 5
    leftovers = [p.name for p in root.rglob("*") if p.name.endswith((".part", ".tmp", ".old"))
                 or (p.name.startswith(".") and p.name != ".downloads.json")]
    assert leftovers == [".downloads"] and not any((root / ".downloads").iterdir())
    assert not (root / "toy/other.txt").exists() and not list(root.rglob("._train.txt"))
    manifest = json.loads((root / ".downloads.json").read_text())
    assert manifest["sources"][f"{server.url}/toy.zip"]["sha256"] == sha(FILES["/toy.zip"])
    assert manifest["files"]["toy/docs/deep/b.conll"]["sha256"] == sha(DOC + b"B\n")
    assert manifest["files"]["toy/plain.bin"]["sha256"] == sha(PLAIN)


def test_present_verified_files_are_skipped_and_changed_ones_fetched(serve, tmp_path) -> None:
    server = serve()
    table = toy_table(server.url)
    download(["toy"], tmp_path, table, log=quiet)
    asked = len(server.requests)
    messages: list[str] = []
    download(["toy"], tmp_path, table, log=messages.append)
    assert len(server.requests) == asked, "nothing is fetched again"
    assert sum("present and verified" in m for m in messages) == 4
    (tmp_path / "toy/docs/a.conll").write_bytes(b"edited")
    download(["toy"], tmp_path, table, log=quiet)
    assert server.requests[asked:] == [("/toy.zip", None)]
    assert (tmp_path / "toy/docs/a.conll").read_bytes() == DOC


def test_files_put_in_place_by_hand_are_adopted(serve, tmp_path: Path) -> None:
    server = serve()
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy/plain.bin").write_bytes(PLAIN)
    messages: list[str] = []
    table = {"toy": Dataset("toy", "t", "CC0", (toy_table(server.url)["toy"].sources[1],))}
    download(["toy"], tmp_path, table, log=messages.append)
    assert server.requests == [] and "already present" in messages[0]
    manifest = json.loads((tmp_path / ".downloads.json").read_text())
    assert manifest["sources"][f"{server.url}/plain.bin"]["sha256"] == sha(PLAIN)


def test_a_partial_download_resumes_with_a_range_request(serve, tmp_path: Path) -> None:
    server = serve()
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy/plain.bin.part").write_bytes(PLAIN[:4000])
    messages: list[str] = []
    download(["toy"], tmp_path, toy_table(server.url, sha(PLAIN)), log=messages.append)
    assert ("/plain.bin", "bytes=4000-") in server.requests
    assert (tmp_path / "toy/plain.bin").read_bytes() == PLAIN
    assert not (tmp_path / "toy/plain.bin.part").exists()
    assert any("resuming at byte 4,000" in m for m in messages)
    assert server.sent == sum(len(b) for b in FILES.values()) + len(PLAIN) - 4000


def test_an_interrupted_download_keeps_its_part_and_resumes(serve, tmp_path: Path) -> None:
    table = {"toy": Dataset("toy", "t", "CC0", (Source(f"{serve(cut=3000).url}/plain.bin",
                                                        (("", "toy/plain.bin"),)),))}
    with pytest.raises(DataError, match=r"(interrupted|ended early).* again to resume"):
        download(["toy"], tmp_path, table, log=quiet)
    assert (tmp_path / "toy/plain.bin.part").read_bytes() == PLAIN[:3000]
    assert not (tmp_path / "toy/plain.bin").exists()
    server = serve()
    table = {"toy": Dataset("toy", "t", "CC0", (Source(f"{server.url}/plain.bin",
                                                        (("", "toy/plain.bin"),)),))}
    download(["toy"], tmp_path, table, log=quiet)
    assert server.requests == [("/plain.bin", "bytes=3000-")]
    assert (tmp_path / "toy/plain.bin").read_bytes() == PLAIN


def test_a_server_ignoring_range_gives_a_fresh_download(serve, tmp_path: Path) -> None:
    server = serve(honour_range=False)
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy/plain.bin.part").write_bytes(b"x" * 4000)  # would corrupt an append
    messages: list[str] = []
    download(["toy"], tmp_path, toy_table(server.url, sha(PLAIN)), log=messages.append)
    assert ("/plain.bin", "bytes=4000-") in server.requests
    assert (tmp_path / "toy/plain.bin").read_bytes() == PLAIN
    assert any("ignored the range request" in m for m in messages)


def test_a_checksum_mismatch_leaves_nothing_behind(serve, tmp_path: Path) -> None:
    server = serve()
    with pytest.raises(DataError) as caught:
        download(["toy"], tmp_path, toy_table(server.url, "0" * 64), log=quiet)
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path / "toy/plain.bin") in message
    assert "SHA-256" in message and "0" * 64 in message
    assert not (tmp_path / "toy/plain.bin").exists()
    assert not (tmp_path / "toy/plain.bin.part").exists()


def test_a_later_download_is_checked_against_the_recorded_checksum(serve, tmp_path) -> None:
    server = serve()
    table = toy_table(server.url)
    download(["toy"], tmp_path, table, log=quiet)
    manifest = tmp_path / ".downloads.json"
    data = json.loads(manifest.read_text())
    data["sources"][f"{server.url}/toy.zip"]["sha256"] = "f" * 64  # as if upstream changed
    manifest.write_text(json.dumps(data))
    (tmp_path / "toy/train.txt").unlink()
    with pytest.raises(DataError, match=r"differs from the expected f{64}.*\.downloads\.json"):
        download(["toy"], tmp_path, table, log=quiet)
    assert not (tmp_path / "toy/train.txt").exists()
    assert not any((tmp_path / ".downloads").iterdir())


def test_offline_says_which_file_to_put_where(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(DataError) as caught:
        download(["toy"], tmp_path, toy_table(url), log=quiet)
    message = str(caught.value)
    assert "\n" not in message and "offline?" in message
    assert f"download {url}/toy.zip yourself" in message
    assert f"put it at {tmp_path / '.downloads' / 'toy-toy.zip'}" in message


def test_an_archive_put_where_the_error_said_is_used(serve, tmp_path: Path) -> None:
    server = serve()
    (tmp_path / ".downloads").mkdir()
    (tmp_path / ".downloads/toy-toy.zip").write_bytes(FILES["/toy.zip"])
    table = {"toy": Dataset("toy", "t", "CC0", (toy_table(server.url)["toy"].sources[0],))}
    download(["toy"], tmp_path, table, log=quiet)
    assert server.requests == [] and (tmp_path / "toy/train.txt").read_bytes() == TRAIN


def test_where_for_a_licence_restricted_set(serve, tmp_path: Path) -> None:
    server = serve()
    table = toy_table(server.url)
    text = where("secret", tmp_path, table)
    assert f"{tmp_path / 'secret/train.txt'}  [missing]" in text
    assert "ask the owners nicely" in text and "by agreement" in text
    with pytest.raises(DataError) as caught:
        download(["toy", "secret"], tmp_path, table, log=quiet)
    assert "secret cannot be downloaded" in str(caught.value) and text in str(caught.value)
    assert server.requests == [], "nothing is fetched when one name cannot be"
    real = where("conll2003", tmp_path)
    assert str(tmp_path / "ner_conll2003/eng.train") in real and "NIST" in real


def test_where_for_a_downloadable_set_names_each_source(tmp_path: Path) -> None:
    (tmp_path / "snli").mkdir()
    (tmp_path / "snli/snli_1.0_dev.jsonl.gz").write_bytes(b"")
    text = where("snli", tmp_path)
    assert f"{tmp_path / 'snli/snli_1.0_dev.jsonl.gz'}  [present]" in text
    assert "snli_1.0.zip (snli_1.0/snli_1.0_train.jsonl)" in text
    assert "elmo-exp data download snli" in text


def test_unknown_names_and_a_missing_root(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(DataError, match="unknown data set 'snil'; did you mean snli"):
        download(["snil"], tmp_path)
    with pytest.raises(DataError, match="did you mean wikitext2"):
        where("wikitext")
    monkeypatch.delenv("ELMO_DATA_DIR", raising=False)
    with pytest.raises(DataError, match="pass --root DIR or set ELMO_DATA_DIR"):
        download(["squad"])


def test_every_table_entry_is_well_formed() -> None:
    for dataset in dl.DATASETS.values():
        assert dataset.downloadable != bool(dataset.how), dataset.name
        for source in dataset.sources:
            assert source.kind in ("file", "zip") and source.files
            assert source.sha256 is None or len(source.sha256) == 64
            for member, target in source.files:
                assert bool(member) == (source.kind == "zip")
                assert member.endswith("/") == target.endswith("/")
                assert not source.compress or target.endswith(("/", ".gz"))


def test_the_command_line(serve, tmp_path: Path, monkeypatch) -> None:
    server = serve()
    monkeypatch.setitem(dl.DATASETS, "toy", toy_table(server.url)["toy"])
    monkeypatch.setenv("ELMO_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    result = runner.invoke(cli, ["data", "download", "toy"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "toy/train.txt").read_bytes() == TRAIN
    result = runner.invoke(cli, ["data", "where", "conll2003", "--root", str(tmp_path / "r")])
    assert result.exit_code == 0 and str(tmp_path / "r/ner_conll2003/eng.testb") in result.output
    result = runner.invoke(cli, ["data", "list"])
    assert result.exit_code == 0
    lines = {line.split()[0]: line for line in result.output.splitlines()}
    assert "download" in lines["snli"] and "CC BY-SA 4.0" in lines["snli"]
    assert "manual" in lines["ptb"] and "toy" in lines
    result = runner.invoke(cli, ["data", "download", "ptb"])
    assert isinstance(result.exception, DataError) and "LDC" in str(result.exception)
