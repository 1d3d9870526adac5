"""The instrument's fingerprint: a hash of all the code that measures, which the benchmarks'
asv version carries, so that asv (and the gate, and the dashboard) compare only figures
measured by the same code.

asv hashes a benchmark's own source where it has no explicit ``version``; the suites set one
(the method's name, bumped by hand), and most of what measures lives here, in the instrument,
which neither covers. The fingerprint covers every Python file of rmsnorm_bench/instrument/,
rmsnorm_bench/__init__.py (the package the instrument is imported from) and benchmarks/. As
asv's own hash of a benchmark, it reads Python's tokens: comments and layout do not change
it, code and strings do.
"""

import hashlib
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
           tokenize.ENCODING, tokenize.ENDMARKER}  # fmt: skip


def files(root: Path = ROOT) -> list[Path]:
    """The files whose code the fingerprint covers, in a fixed order."""
    found = list((root / "rmsnorm_bench" / "instrument").rglob("*.py"))
    found += [root / "rmsnorm_bench" / "__init__.py", *(root / "benchmarks").glob("*.py")]
    return sorted(p for p in found if p.is_file())


def tokens(text: str) -> list:
    """What of a file's text the fingerprint reads: its tokens less comments and layout (the
    raw text where it does not tokenize)."""
    try:
        readline = io.StringIO(text).readline
        return [(t.type, t.string) for t in tokenize.generate_tokens(readline)
                if t.type not in SKIPPED]  # fmt: skip
    except (tokenize.TokenError, SyntaxError):
        return [text]


def fingerprint(root: Path = ROOT) -> str:
    """12 hex digits of a SHA-256 over each covered file's path and tokens."""
    h = hashlib.sha256()
    for path in files(root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(repr(tokens(path.read_text())).encode() + b"\0")
    return h.hexdigest()[:12]
