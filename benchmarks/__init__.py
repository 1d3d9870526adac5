"""asv suites of rmsnorm_kernels; the instrument they measure with is rmsnorm_bench.

asv imports this package through an importer that finds `benchmarks` alone (asv_runner's
SpecificImporter; the repository root is deliberately kept off sys.path, since it holds a
checkout of the package under test). The same is done here for `rmsnorm_bench`, beside this
folder: it is found from this checkout, and nothing else of the root becomes importable, so
the rmsnorm_kernels measured is always the one installed in asv's environment.
"""

import importlib.machinery
import sys
from pathlib import Path


class _BenchImporter:
    finds_rmsnorm_bench = True
    root = str(Path(__file__).resolve().parent.parent)

    def find_spec(self, fullname, path, target=None):
        if fullname != "rmsnorm_bench":
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [self.root], target)


if not any(getattr(f, "finds_rmsnorm_bench", False) for f in sys.meta_path):
    sys.meta_path.insert(0, _BenchImporter())
