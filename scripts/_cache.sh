# Sourced by scripts/_env.sh and scripts/test, before set-up: the tracker's caches live outside
# the clone (RMSNORM_BENCH_CACHE, default ~/.cache/rmsnorm_bench), so that a fresh clone on a
# machine that ran before compiles nothing again. Sets cache_root.
#
# Python's bytecode goes there too (PYTHONPYCACHEPREFIX, where not set already), and is written
# even under PYTHONDONTWRITEBYTECODE, which then has nothing left to protect: with a prefix,
# nothing is written beside any package. On an H200 host that sets it, with torch's packages
# shipped without bytecode, every process compiled about 2,400 modules from source (6.4 s of a
# measuring process); `import torch, torch._dynamo` took 7.2-7.7 s, 3.1-3.6 s with the cache.
cache_root=${RMSNORM_BENCH_CACHE:-${XDG_CACHE_HOME:-${HOME:-${TMPDIR:-/tmp}}/.cache}/rmsnorm_bench}
[[ $cache_root == /* ]] || cache_root=$PWD/$cache_root  # every process resolves it alike
unset RMSNORM_BENCH_FRESH_PYCACHE  # this run's, not an inherited one
if [[ -z ${PYTHONPYCACHEPREFIX:-} ]]; then
  # for the run's record: the first process of each module pays its compile once
  [[ -d $cache_root/pycache ]] || export RMSNORM_BENCH_FRESH_PYCACHE=1
  export PYTHONPYCACHEPREFIX=$cache_root/pycache
  unset PYTHONDONTWRITEBYTECODE
fi
