"""The warm-up before measuring (rmsnorm_bench.instrument.warm): what it validates, where it
stands aside, and that it warms a package source once."""

import pytest

from rmsnorm_bench.instrument import matrix, warm
from rmsnorm_bench.instrument.matrix import Shape

LABELS = ";".join(f"{m},256,bf16" for m in range(1, 5))  # 4 shapes: 8 (op, shape) pairs


@pytest.fixture(autouse=True)
def own_inductor_cache(monkeypatch, tmp_path):
    """A warm-up forgets the launch configs in inductor's cache: never this machine's."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor-cache"))


class InProcess:
    """ProcessPoolExecutor's part that main uses, run in this process."""

    def __init__(self, workers, mp_context=None):
        self.workers = workers

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, chunks):
        return [fn(chunk) for chunk in chunks]


class Broken(InProcess):
    """A pool whose worker died."""

    def map(self, fn, chunks):
        raise RuntimeError("a worker died")


def test_a_chunk_is_validated_by_every_backend_that_runs_here():
    # ours and torch eager validate here (the interpreter) or on the GPU; a peer that is not
    # installed is passed over
    assert warm.warm([("rms_norm", Shape(2, 256, "bf16"))]) >= 2


def test_it_warms_each_pair_once_then_stands_aside(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(matrix, "DEVICE", "cuda")
    monkeypatch.setenv(matrix.FWD_SHAPES_VAR, LABELS)
    monkeypatch.setenv(matrix.BWD_SHAPES_VAR, LABELS)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    chunks = []
    monkeypatch.setattr(warm, "ProcessPoolExecutor", InProcess)
    monkeypatch.setattr(warm, "warm", lambda chunk: chunks.append(chunk) or len(chunk))
    assert warm.main(["--workers", "3"]) == 0
    assert "8 cases validated in 3 processes" in capsys.readouterr().out
    dealt = sorted((op, s.label) for chunk in chunks for op, s in chunk)
    assert dealt == sorted((op, s.label) for op, s in warm.pairs())
    assert [len(c) for c in chunks] == [3, 3, 2]  # dealt out, the large shapes apart
    assert len(list(tmp_path.glob("rmsnorm-bench-warm-*.json"))) == 1
    chunks.clear()
    assert warm.main([]) == 0  # the same source, matrix and backends: warmed before
    assert "warmed before" in capsys.readouterr().out and not chunks
    monkeypatch.setenv(matrix.BACKENDS_VAR, "triton")  # another selection: warmed again
    assert warm.main([]) == 0 and chunks
    monkeypatch.setenv(matrix.FWD_SHAPES_VAR, "1,256,bf16")  # a narrowed run: not worth it
    monkeypatch.setenv(matrix.BWD_SHAPES_VAR, "1,256,bf16")
    chunks.clear()
    assert warm.main([]) == 0 and not chunks
    assert "2 pairs" in capsys.readouterr().out


def test_launch_configs_chosen_side_by_side_are_forgotten(monkeypatch, tmp_path, capsys):
    # inductor keeps the config it timed fastest beside the kernel; timed while the other
    # workers share the GPU, that choice is not kept: the first measuring process makes it alone
    monkeypatch.setattr(matrix, "DEVICE", "cuda")
    monkeypatch.setenv(matrix.FWD_SHAPES_VAR, LABELS)
    monkeypatch.setenv(matrix.BWD_SHAPES_VAR, LABELS)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    inductor = tmp_path / "inductor"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(inductor))
    (inductor / "ab").mkdir(parents=True)
    earlier = inductor / "ab" / "kernel1.best_config"  # an earlier warm-up's, or not: gone too
    earlier.write_text("{}")

    def compile_some(chunk):
        for i, (op, shape) in enumerate(chunk):
            folder = inductor / f"{op[:2]}{i}"
            folder.mkdir(exist_ok=True)
            (folder / f"{shape.label}.py").write_text("# a kernel")
            (folder / f"{shape.label}.best_config").write_text("{}")
        return len(chunk)

    monkeypatch.setattr(warm, "ProcessPoolExecutor", InProcess)
    monkeypatch.setattr(warm, "warm", compile_some)
    assert warm.main(["--workers", "2"]) == 0
    assert "9 launch-config choices forgotten" in capsys.readouterr().out
    assert not list(inductor.rglob("*.best_config"))  # the kernels themselves stay
    assert len(list(inductor.rglob("*.py"))) == 8


def test_inductor_cache_is_found_as_torch_finds_it(monkeypatch, tmp_path):
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    assert str(warm.inductor_cache()) == default_cache_dir()
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    assert warm.inductor_cache() == tmp_path / "inductor"


def test_it_never_fails_the_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(matrix, "DEVICE", "cuda")
    monkeypatch.setenv(matrix.FWD_SHAPES_VAR, "1,256,bf16;oops")
    assert warm.main([]) == 0 and "skipped" in capsys.readouterr().out  # a bad override
    monkeypatch.setenv(matrix.FWD_SHAPES_VAR, LABELS)
    monkeypatch.setenv(matrix.BWD_SHAPES_VAR, LABELS)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))

    monkeypatch.setattr(warm, "ProcessPoolExecutor", Broken)
    assert warm.main([]) == 0 and "a worker died" in capsys.readouterr().out
    assert not list(tmp_path.glob("rmsnorm-bench-warm-*"))  # nothing stamped: warmed again
    monkeypatch.setattr(matrix, "DEVICE", "cpu")
    assert warm.main([]) == 0 and "smoke mode" in capsys.readouterr().out


def test_it_warms_the_installed_package_not_the_checkout(monkeypatch):
    import sys

    root = str(warm.Path(warm.__file__).resolve().parents[2])
    monkeypatch.setattr(sys, "path", [root, "", *sys.path])
    monkeypatch.setattr(matrix, "DEVICE", "cpu")
    monkeypatch.chdir(root)
    warm.main([])
    assert root not in sys.path and "" not in sys.path


def test_what_it_did_goes_to_the_runs_times_file(monkeypatch, tmp_path):
    from rmsnorm_bench import progress

    times = tmp_path / "times.jsonl"
    monkeypatch.setenv(progress.TIMES_VAR, str(times))
    monkeypatch.setattr(matrix, "DEVICE", "cuda")
    monkeypatch.setenv(matrix.FWD_SHAPES_VAR, LABELS)
    monkeypatch.setenv(matrix.BWD_SHAPES_VAR, LABELS)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setattr(warm, "ProcessPoolExecutor", InProcess)
    monkeypatch.setattr(warm, "warm", len)
    assert warm.main(["--workers", "2"]) == 0  # warmed
    assert warm.main(["--workers", "2"]) == 0  # warmed before: skipped

    monkeypatch.setenv(matrix.BACKENDS_VAR, "triton")  # another selection: warmed again
    monkeypatch.setattr(warm, "ProcessPoolExecutor", Broken)
    assert warm.main([]) == 0
    done, skipped, stopped = (line["warm"] for line in progress.read_times(times))
    assert {k: done[k] for k in ("workers", "pairs", "cases")} == {
        "workers": 2, "pairs": 8, "cases": 8
    }  # fmt: skip
    assert done["seconds"] >= 0 and done["forgotten"] == 0
    assert skipped["skipped"].startswith("warmed before") and "cases" not in skipped
    assert stopped["stopped"] == "RuntimeError: a worker died" and "cases" not in stopped
    monkeypatch.setenv(progress.TIMES_VAR, str(tmp_path / "gone" / "times.jsonl"))
    assert warm.main([]) == 0  # a times file it cannot write: still exit status 0
