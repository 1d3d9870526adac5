"""rmsnorm_bench.instrument has no command line; this says so (exit 2)."""

import sys

print(
    "rmsnorm_bench.instrument is the library that the asv suites in benchmarks/ and the\n"
    "tracker's tools import; it has no command line. Run a tool instead, from the\n"
    "repository root: python -m rmsnorm_bench.TOOL --help, TOOL one of validate, sweep,\n"
    "copy_ceiling, profile_host, spread, training_step, grid, asvrun, report (README.md).",
    file=sys.stderr,
)
sys.exit(2)
