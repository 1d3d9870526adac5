"""The instrument's fingerprint: a hash of all the code that measures, and the method it is
declared to be.

asv hashes a benchmark's own source where it has no explicit ``version``; the suites set one
(the method's name), and most of what measures lives here, in the instrument, which neither
covers. The fingerprint covers every Python file of rmsnorm_bench/instrument/,
rmsnorm_bench/__init__.py (the package the instrument is imported from) and benchmarks/. As
asv's own hash of a benchmark, it reads Python's tokens: comments and layout do not change
it, code and strings do.

DECLARED (benchmarks/method.json) names the method (the suites' asv version) and the
fingerprint of the instrument declared to measure by it. A run whose instrument's
fingerprint is not the declared one is refused before it measures (rmsnorm_bench.asvrun),
and the test suite fails on it: whoever changes the instrument declares, in the same commit,
either that the method is the same (the new fingerprint under the same name: figures stay
comparable with the stored ones, as a hand-set asv version means) or that it changed (a new
name: asv then compares, gates and graphs only figures of the new one). The fingerprint is
not the version itself: every commit that touches the instrument would otherwise hide the
whole stored history from the dashboard and the gate, however little it changed.
"""

import hashlib
import io
import json
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECLARED = ROOT / "benchmarks" / "method.json"


def files(root: Path = ROOT) -> list[Path]:
    """The files whose code the fingerprint covers, in a fixed order."""
    found = list((root / "rmsnorm_bench" / "instrument").rglob("*.py"))
    found += [root / "rmsnorm_bench" / "__init__.py", *(root / "benchmarks").glob("*.py")]
    return sorted(p for p in found if p.is_file())


def tokens(text: str) -> str:
    """What of a file's text the fingerprint reads: the text less its comments and every
    whitespace character (the raw text where it does not tokenize). Not the tokens
    themselves: Python 3.12 splits an f-string into tokens of its own (PEP 701) where 3.11
    gives one, so that one instrument had two fingerprints; comments are found alike."""
    try:
        found = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    lines = text.splitlines(keepends=True)
    for t in reversed([t for t in found if t.type == tokenize.COMMENT]):
        (row, col), (_, end) = t.start, t.end
        lines[row - 1] = lines[row - 1][:col] + lines[row - 1][end:]
    return "".join("".join(lines).split())


def fingerprint(root: Path = ROOT) -> str:
    """12 hex digits of a SHA-256 over each covered file's path and tokens."""
    h = hashlib.sha256()
    for path in files(root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(repr(tokens(path.read_text())).encode() + b"\0")
    return h.hexdigest()[:12]


def declared(path: Path = DECLARED) -> dict:
    """{"method": the suites' asv version, "instrument": the fingerprint declared for it}."""
    found = json.loads(path.read_text())
    if not (isinstance(found, dict) and {"method", "instrument"} <= set(found)):
        raise ValueError(f"{path}: expected {{'method': ..., 'instrument': ...}}")
    return found


def undeclared(root: Path = ROOT, path: Path | None = None) -> str | None:
    """Why the instrument here is not the one its method was declared for; None where it is."""
    path = path or root / "benchmarks" / "method.json"
    method, now = declared(path), fingerprint(root)
    if now == method["instrument"]:
        return None
    return (
        f"the instrument's code (fingerprint {now}) is not the one {path.name} declares for "
        f"method {method['method']!r} ({method['instrument']}): in {path}, either set "
        f'"instrument": "{now}" (the method of measuring is the same: figures stay '
        "comparable with the stored ones) or name a new method too (what a sample is, or the "
        "statistic, changed)"
    )
