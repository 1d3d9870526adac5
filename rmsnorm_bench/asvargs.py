"""asv's command line, as asvrun is given it: checked, and the rounds added.

Where it sits: measure (instrument, benchmarks/) -> asv run (asvrun, with this) -> store ->
publish/report -> gate. asvrun and the self-test call it before anything runs or any lock is
taken: the ad-hoc overrides of shapes and backends, asv's arguments as asv parses them, the
commits they name, the CPUs of --cpu-affinity (each check raises ValueError naming the
problem); `pooled_rounds` has one commit measured in several processes of one round,
`with_rounds` several commits in several interleaved rounds, and `measured_only` selects the
cases this machine measures, so that asv starts no process for the others. Nothing here
runs asv or writes a file.
"""

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from . import instrument, link_torch
from .instrument.backends import installed

# the ad-hoc overrides of the shapes and backends (check_options): a run with one set leaves
# results/benchmarks.json as it was (asvrun.run_guarded)
OVERRIDES = (instrument.FWD_SHAPES_VAR, instrument.BWD_SHAPES_VAR, instrument.BACKENDS_VAR)

NO_INTERLEAVE = ("--no-interleave-rounds", "--no-interleave-processes")


def _is_option(arg: str, names) -> bool:
    """`arg` is one of `names` or a prefix argparse takes for one (at least '--no-in')."""
    flag = arg.split("=", 1)[0]
    return any(flag == n or (len(flag) >= 7 and n.startswith(flag)) for n in names)


def _rounds_given(asv_args: list[str]) -> str | None:
    """The value of `-a rounds=N` (or asv's alias `processes=N`) among the arguments."""
    found = None
    for i, arg in enumerate(asv_args):
        value = arg.split("=", 1)[1] if arg.startswith("--attribute=") else None
        if arg in ("-a", "--attribute") and i + 1 < len(asv_args):
            value = asv_args[i + 1]
        elif arg.startswith("-a") and len(arg) > 2 and not arg.startswith("--"):
            value = arg[2:]
        key, _, number = (value or "").replace(" ", "").partition("=")
        if key in ("rounds", "processes"):
            found = number
    return found


def with_rounds(asv_args: list[str], processes: int = instrument.PROCESSES) -> list[str]:
    """`asv run` or `continuous` arguments measuring each commit in `processes` processes:
    `-a rounds=N` added unless the arguments set rounds already (asv reads no rounds attribute
    of track_* benchmarks, so this option is how the suites get several rounds), and
    `--interleave-rounds`, without which `asv run` makes all rounds of a commit in one batch
    that shares one setup_cache: every round would then report the same measurement again.
    Each interleaved round gets a setup_cache of its own, a fresh measurement. Several rounds
    where asv cannot interleave them (--no-interleave-rounds, -E existing:..., --python=same)
    are refused (ValueError), as they would repeat one measurement; a dry run measures
    nothing and is passed on as it is."""
    if asv_args[:1] not in (["run"], ["continuous"]):
        return asv_args
    rounds = _rounds_given(asv_args)
    added = [] if rounds is not None else ["-a", f"rounds={processes}"]
    several = str(rounds if rounds is not None else processes) != "1"
    if not several or any(a in ("--dry-run", "-n") for a in asv_args):
        return [asv_args[0], *added, *asv_args[1:]]
    existing = any(
        a.startswith("existing:") or a == "--python=same" or a.startswith("-Eexisting")
        for a in asv_args
    )
    if existing or any(_is_option(a, NO_INTERLEAVE) for a in asv_args):
        raise ValueError(
            "several rounds without interleaving (--no-interleave-rounds, an existing "
            "environment, --python=same) would share one setup_cache and record one "
            "measurement several times; add -a rounds=1"
        )
    if not any(_is_option(a, ("--interleave-rounds", "--interleave-processes")) for a in asv_args):
        added.append("--interleave-rounds")
    return [asv_args[0], *added, *asv_args[1:]]


def pooled_rounds(
    asv_args: list[str], repo: Path, processes: int = instrument.PROCESSES
) -> tuple[list[str], int]:
    """`asv run` of one commit with no rounds given: its arguments with `-a rounds=1`, and
    `processes`, the processes its one round's setup_cache measures in, one after another
    (instrument.processes; asvrun names them in instrument.PROCESSES_VAR). The samples are
    those of `processes` asv rounds, without asv's small process per figure, case and round.
    Any other command, asked for as it is with 1: several commits (a range, HASHFILE:, asv's
    keywords), whose rounds interleave (with_rounds), `continuous`, `find`, rounds given, a
    dry run, and --quick (asv measures it once, in one round of one process). One commit in an
    existing environment (-E existing:..., --python=same), of which with_rounds refuses several
    rounds, is measured in several processes this way."""
    if asv_args[:1] != ["run"] or _rounds_given(asv_args) is not None or processes <= 1:
        return asv_args, 1
    try:
        ns = parsed(asv_args)
        rev = getattr(ns, "range", None)
        words = shlex.split(rev) if rev else []
    except ValueError:  # check_asv_args says why
        return asv_args, 1
    if getattr(ns, "quick", False) or getattr(ns, "dry_run", False):
        return asv_args, 1
    if not rev or rev in ASV_KEYWORDS or rev.startswith("HASHFILE:"):
        return asv_args, 1
    if commit_count(words, repo) != "1":
        return asv_args, 1
    return [asv_args[0], "-a", "rounds=1", *asv_args[1:]], processes


def gives_bench(arg: str) -> bool:
    """`arg` is (or starts) a benchmark selection: -b/--bench REGEX, -bREGEX, --bench=REGEX."""
    return (
        arg in ("-b", "--bench")
        or arg.startswith("--bench=")
        or (arg.startswith("-b") and len(arg) > 2)
    )


def measured_cases() -> str:
    """asv's -b regular expression of the cases this machine measures: each suite's shapes
    (instrument.shapes_for) by the backends selected (RMSNORM_BENCH_BACKENDS; where it is
    unset, those whose package asv's environment can find, environment_path). asv matches it
    against a parameter set's name, `name('1x4096-bf16', 'triton')`, and starts no process
    for one it leaves out, whose figure is n/a, as a skipped one's is: the GPU's default run
    leaves out the smoke mode's shapes and the peers not installed, a narrowed one (a
    history, the self-test) all but its few cases, the smoke mode the GPU's backends. A
    backend named in RMSNORM_BENCH_BACKENDS is run all the same, and its cases say why they
    are skipped. Ours has no public ratio (a peer's over ours): that figure is left out."""
    backends = instrument.selected_backends()
    if instrument.DEVICE == "cpu":  # the others are skipped there, each saying so
        backends = [b for b in backends if b in instrument.matrix.CPU_BACKENDS]
    elif not os.environ.get(instrument.BACKENDS_VAR, "").strip():
        path = environment_path()
        backends = [b for b in backends if installed(b, path)]
    peers = "|".join(re.escape(b) for b in backends if b != instrument.OURS)
    suites = []
    for phase in ("forward", "backward"):
        labels = "|".join(re.escape(s.label) for s in instrument.shapes_for(phase))
        # asv names a parameter set by its values' reprs: ('1x4096-bf16', 'triton')
        suite = rf"{phase.capitalize()}\.track_"
        if instrument.OURS in backends:
            ours = re.escape(instrument.OURS)
            suites.append(rf"{suite}(?!public_ratio\()\w+\('(?:{labels})', '{ours}'\)$")
        if peers:
            suites.append(rf"{suite}\w+\('(?:{labels})', '(?:{peers})'\)$")
    return "|".join(suites) or "(?!)"  # no backend: nothing (asv then says so)


def environment_path() -> list[str]:
    """Where asv's benchmark environment finds packages besides this one: the folders that
    link_torch shows it (RMSNORM_TORCH_SITE, then RMSNORM_PEER_SITE), as scripts/_env.sh
    sets them; where neither is set (asv run by hand), this interpreter's sys.path."""
    folders = [
        d for var in (link_torch.VAR, link_torch.PEERS_VAR)
        for d in os.environ.get(var, "").split(os.pathsep) if d
    ]  # fmt: skip
    return folders or list(sys.path)


def measured_only(asv_args: list[str]) -> list[str]:
    """`asv run` or `continuous` arguments with -b measured_cases() added, unless they
    select benchmarks themselves (asv runs what any -b matches, so one more would widen
    theirs)."""
    if asv_args[:1] not in (["run"], ["continuous"]) or any(map(gives_bench, asv_args)):
        return asv_args
    return [asv_args[0], "-b", measured_cases(), *asv_args[1:]]


def check_options() -> None:
    """The ad-hoc overrides, checked before anything runs (ValueError names the problem)."""
    instrument.selected_backends()
    for phase in ("forward", "backward"):
        instrument.shapes_for(phase)


ASV_KEYWORDS = ("NEW", "ALL", "EXISTING", "TAGS")  # asv run's ranges that are no git range


def bare_revision(words: list[str]) -> bool:
    """Whether a range is one revision alone (main, HEAD~3, a hash), which git rev-list, and
    so asv run, reads as that commit and all before it: for a user who meant that commit, a
    run of the whole history."""
    if len(words) != 1:
        return False
    word = words[0]
    return ".." not in word and not word.startswith("^") and not word.endswith(("^!", "^@"))


def parsed(asv_args: list[str]):
    """asv's arguments as asv parses them (an argparse namespace); ValueError with asv's own
    reason where it refuses them (--help: asv prints it, and SystemExit(0) goes on)."""
    from asv.commands import make_argparser

    parser, _ = make_argparser()
    try:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            return parser.parse_args(asv_args)
    except SystemExit as stop:
        if not stop.code:  # --help: asv printed it
            raise
        message = err.getvalue().strip().splitlines()
        why = message[-1] if message else "asv's usage error"
        raise ValueError(f"asv refuses {' '.join(asv_args)!r}: {why}") from None


def commit_count(words: list[str], repo: Path) -> str:
    """How many commits the range `words` selects, as git rev-list reads it for asv (first
    parents only), as git prints it ("" where git refuses it)."""
    return subprocess.run(
        ["git", "rev-list", "--first-parent", "--count", *words, "--"],
        cwd=repo, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def check_asv_args(asv_args: list[str], repo: Path) -> None:
    """asv's arguments as asv parses them, each -b a regular expression, and the commits they
    name known to git in `repo` and selecting at least one (ValueError names the problem):
    asv itself would stop on each with a traceback, or measure nothing."""
    ns = parsed(asv_args)
    benches = ns.bench if isinstance(ns.bench, list) else [ns.bench] if ns.bench else []
    for bench in benches:
        try:
            re.compile(bench)
        except re.error as e:
            raise ValueError(
                f"benchmark selection {bench!r} is not a regular expression: {e}"
            ) from None
    if asv_args[0] == "continuous":
        revisions = [ns.base, ns.branch]
    else:
        revisions = [getattr(ns, "range", None)]
    commits = {}  # each git revision's commit
    for rev in filter(None, revisions):
        if rev in ASV_KEYWORDS:
            continue
        if rev.startswith("HASHFILE:"):
            path = rev.partition(":")[2]
            if path != "-" and not Path(path).is_file():  # -: the hashes on standard input
                raise ValueError(f"{rev}: no such file")
            continue
        try:  # as asv asks git: the range split as a shell would, first parents only
            words = shlex.split(rev)
        except ValueError as e:
            raise ValueError(f"range {rev!r}: {e}") from None
        git = subprocess.run(
            ["git", "rev-list", "--first-parent", "--max-count=1", *words, "--"],
            cwd=repo, capture_output=True, text=True,
        )  # fmt: skip
        if git.returncode != 0:
            why = (git.stderr.strip().splitlines() or ["git rev-list failed"])[0]
            raise ValueError(f"{rev!r} is not a commit or range here ({why})")
        if not git.stdout.strip():
            raise ValueError(f"{rev!r} selects no commit")
        if asv_args[0] != "continuous" and bare_revision(words):
            count = commit_count(words, repo)
            if count != "1":
                raise ValueError(
                    f"range {rev!r} is every commit up to {rev} ({count} of them, as git "
                    f"rev-list reads it): give {rev}^! for that commit alone, or A..{rev} for "
                    "the commits after A"
                )
        commits[rev] = git.stdout.strip()
    if asv_args[0] == "continuous" and ns.base and ns.branch:
        if commits.get(ns.base) and commits.get(ns.base) == commits.get(ns.branch):
            raise ValueError(
                f"{ns.base!r} and {ns.branch!r} name one commit, {commits[ns.base][:10]}: "
                "nothing to compare; give two"
            )


def parse_cpus(text: str) -> set[int]:
    """asv's --cpu-affinity format: 0 or 0,1,2 or 0-3 or 0-3,8 (ValueError otherwise)."""
    cpus = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()) or (high and int(high) < int(low)):
            raise ValueError(f"--cpu-affinity {text!r}: give CPUs as 0, 0,1,2, 0-3 or 0-3,8")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def check_affinity(asv_args: list[str]) -> None:
    """A --cpu-affinity among asv's arguments names CPUs this process may run on: asv would
    fail each benchmark process otherwise (ValueError names them)."""
    for i, arg in enumerate(asv_args):
        if arg == "--cpu-affinity" or arg.startswith("--cpu-affinity="):
            text = arg.partition("=")[2] or (asv_args[i + 1] if i + 1 < len(asv_args) else "")
            cpus = parse_cpus(text)
            if not hasattr(os, "sched_getaffinity"):
                continue  # asv sets it through psutil there, or says why not
            allowed = os.sched_getaffinity(0)
            if not cpus <= allowed:
                raise ValueError(
                    f"--cpu-affinity {text}: CPU(s) {', '.join(map(str, sorted(cpus - allowed)))} "
                    f"not available to this run (allowed: {format_cpus(allowed)})"
                )


def format_cpus(cpus) -> str:
    """0,1,2,3,8 as 0-3,8."""
    runs, cpus = [], sorted(cpus)
    for cpu in cpus:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs)
