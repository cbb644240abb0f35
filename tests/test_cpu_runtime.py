"""tune_cpu_runtime: denormals flushed, glibc keeps freed memory; idempotent."""

import sys

import pytest
import torch

from elmo_experiments.cpu_runtime import tune_cpu_runtime


def test_tuning_flushes_denormals_and_is_idempotent() -> None:
    first = tune_cpu_runtime()
    assert tune_cpu_runtime() == first
    if not first["flush_denormal"]:
        pytest.skip("this CPU cannot flush denormals")
    tiny = torch.tensor([1e-30], dtype=torch.float32)
    assert (tiny * 1e-10).item() == 0.0  # 1e-40 is a float32 denormal: flushed to zero
    assert (tiny * 1e-5).item() == pytest.approx(1e-35)  # normal values are untouched


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_tuning_reaches_glibc_malloc() -> None:
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not glibc")
    assert tune_cpu_runtime()["malloc_keeps_memory"]
    big = torch.ones(16 << 20)  # 64 MB: from the heap now, and still correct
    assert float(big.sum()) == 16 << 20


def test_tuning_first_reaches_every_compute_thread() -> None:
    """Applied before the first parallel operation, the flush holds on all threads."""
    import subprocess

    code = ("import torch; torch.set_num_threads(2)\n"
            "from elmo_experiments.cpu_runtime import tune_cpu_runtime\n"
            "if not tune_cpu_runtime()['flush_denormal']: print('skip'); raise SystemExit\n"
            "x = torch.full((4_000_000,), 1e-30)\n"
            "print(int(((x * 1e-10) != 0).sum()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    if out == "skip":
        pytest.skip("this CPU cannot flush denormals")
    assert out == "0"
