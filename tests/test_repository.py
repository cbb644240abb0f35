"""Repository rules that a review could miss: large files live only beside a model card; no
file cites notes that only the developers' machines have; relative doc links resolve; committed
results name no machine's folders."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LARGE = 1_000_000  # bytes


def test_large_files_only_in_model_card_folders() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    offenders = [name for name in listed if name and (ROOT / name).is_file()
                 and (ROOT / name).stat().st_size > LARGE
                 and not ((ROOT / name).parent / "MODEL_CARD.md").is_file()]
    assert offenders == [], f"files over {LARGE:,} bytes outside a model-card folder"


def test_the_wheel_carries_shipped_biLMs(tmp_path: Path, tiny_bilm_dir: Path) -> None:
    """A non-editable install holds ``elmo_experiments/bilm/models/<name>/*``: build a wheel
    from a copy of the tracked files plus one model folder, and look inside."""
    import sys
    import zipfile

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    source = tmp_path / "source"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    model = source / "elmo_experiments" / "bilm" / "models" / "probe"
    shutil.copytree(tiny_bilm_dir, model, dirs_exist_ok=True)
    (model / "MODEL_CARD.md").write_text("# probe\n")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                             "--no-build-isolation", "-w", str(tmp_path / "wheel"), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    [wheel] = (tmp_path / "wheel").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for file in model.iterdir():
        assert f"elmo_experiments/bilm/models/probe/{file.name}" in names


# Notes kept only on the developers' machines, and their folder beside the checkout. Spelled in
# pieces so that this file does not cite them itself.
ABSENT_NOTES = re.compile("|".join([r"\bPAPER\.md", r"\bELMO_FORMAT\b", r"\bDESIGN\.md",
                                    r"\.\./" + "shared" + r"\b", "/work/" + "shared" + r"\b"]))
# .ci/run looks for the data and the reference outputs beside a checkout on the developers'
# machines and exports them as ELMO_DATA_DIR and ELMO_FIXTURES_DIR: the one place allowed to.
MAY_NAME_THE_SHARED_FOLDER = {".ci/run"}


def _repository_files() -> list[str]:
    """Tracked files, plus new ones git does not ignore (so that a new page is checked before
    its first commit). Read-only."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    return sorted({name for name in listed if name and (ROOT / name).is_file()})


def test_no_file_cites_notes_the_repository_does_not_have() -> None:
    """The paper is cited as Peters et al. 2018 and summarised in docs/paper.md."""
    offenders = []
    for name in _repository_files():
        data = (ROOT / name).read_bytes()
        if b"\0" in data:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for match in ABSENT_NOTES.finditer(line):
                if "shared" in match.group() and name in MAY_NAME_THE_SHARED_FOLDER:
                    continue
                offenders.append(f"{name}:{number}: {match.group()}")
    assert offenders == [], "cite the paper or docs/paper.md instead:\n" + "\n".join(offenders)


def _without_code(markdown: str) -> str:
    markdown = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", markdown, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", markdown)


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, -N for
    repeats."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", _without_code(markdown), flags=re.M):
        heading = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        candidate, repeat = slug, 0
        while candidate in anchors:
            repeat += 1
            candidate = f"{slug}-{repeat}"
        anchors.add(candidate)
    return anchors


def test_relative_links_in_the_docs_resolve() -> None:
    """Every relative link in README.md and docs/*.md names a file or folder of the repository,
    and a #fragment into a markdown page names one of its headings."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    link = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
                      r"|^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", flags=re.M)
    broken = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for match in link.finditer(_without_code(text)):
            target = match.group(1) or match.group(2)
            if re.match(r"[a-z][a-z0-9+.-]*:", target, flags=re.I) or target.startswith("//"):
                continue  # https:, mailto:, ...
            path, _, fragment = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}: {target}"
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                broken.append(f"{where} (no such file)")
            elif fragment and resolved.suffix == ".md" and resolved.is_file() \
                    and fragment.lower() not in _anchors(resolved.read_text(encoding="utf-8")):
                broken.append(f"{where} (no such heading)")
    assert broken == [], "broken links:\n" + "\n".join(broken)


def test_committed_results_name_no_machine_folders() -> None:
    """Commands and configs in results/ are what a user types from the repository root."""
    problems = []
    for path in sorted((ROOT / "results").glob("*.json")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            absolute = re.search(r'"(command|config)": "[^"]*(?<![\w.-])/(?:work|home|tmp|root)/',
                                 line)
            elsewhere = re.search(r'"config": "(?!experiments/)|"command": "elmo-exp sweep '
                                  r'(?!experiments/ablations/)', line)
            if absolute or elsewhere:
                problems.append(f"{path.name}:{number}: {line.strip()}")
    assert not problems, "\n".join(problems)
