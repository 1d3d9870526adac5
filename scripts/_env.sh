# Sourced by scripts/run and scripts/compare: set up .venv and the environment asv runs in.
# Sets: machine (from --machine or the GPU's name, "cpu-smoke" without one), conf, root,
# RMSNORM_* vars. Expects: machine, gpu (may be empty), force (optional: 1 re-registers a
# machine name whose recorded facts differ); the caller is in the repository root.
source scripts/_cache.sh
# a failed set-up (a working tree that does not import, a wheel missing) is no regression
bash scripts/setup >&2 || { echo "$0: set-up failed (see above): nothing ran" >&2; exit 2; }
root=$PWD
export PATH="$root/.venv/bin:$PATH"
if [[ -n ${gpu:-} ]]; then
  [[ $gpu =~ ^[0-9]+$ ]] || { echo "$0: --gpu takes a GPU index, got '$gpu'" >&2; exit 2; }
  export CUDA_VISIBLE_DEVICES=$gpu
fi
# offline: every pip install asv makes reads the wheel folder that scripts/setup used
wheelhouse=${RMSNORM_WHEELHOUSE:-.whl}
if [[ -d $wheelhouse ]]; then
  export PIP_NO_INDEX=1 PIP_FIND_LINKS="$(cd "$wheelhouse" && pwd)"
fi
# the machine's name and facts, its entry in asv's machine file written before asv reads it
# (sets machine, device, torch_site, facts)
assignments=$(python -m rmsnorm_bench.machine --register ${force:+--force} ${machine:+--machine "$machine"} ${gpu:+--gpu "$gpu"})
eval "$assignments"
export RMSNORM_BENCH_DEVICE=$device
# asv's install step (python -m rmsnorm_bench.link_torch) shows these to its environment
export RMSNORM_TORCH_SITE=$torch_site
# one Triton cache (our kernels, Liger's) and one inductor cache (the torch_compile peer's
# graphs) per machine name and GPU, so runs side by side never share one; in cache_root
# (scripts/_cache.sh): both are keyed by what they compiled
export TRITON_CACHE_DIR="$cache_root/triton/$machine${gpu:+-gpu$gpu}"
export TORCHINDUCTOR_CACHE_DIR="$cache_root/inductor/$machine${gpu:+-gpu$gpu}"

# asv's config, with its own environment directory per GPU, so that runs on two GPUs of one
# host never build into the same environment
conf=asv.conf.json
if [[ -n ${gpu:-} ]]; then
  conf=.asv-gpu$gpu.json  # beside asv.conf.json: asv resolves paths from the config's folder
  python -m rmsnorm_bench.asvfiles conf-copy "$conf" "env_dir=.asv/env-gpu$gpu"
fi

# Runs "$@" as a child that a SIGTERM sent to the calling script reaches too (bash runs a
# trap only once a foreground child has ended, so the child would run on alone); Ctrl-C
# reaches it directly, as one process group, and the child handles it. Standard input is
# passed on (a background job would get /dev/null).
forward_signals() {
  local child='' status=0 pending=''
  # the traps come first: a signal between the child's start and a trap would end bash alone;
  # a SIGTERM before the child is known is passed on once it is
  trap 'if [[ -n $child ]]; then kill -TERM "$child" 2>/dev/null || :; else pending=1; fi' TERM
  trap ':' INT
  "$@" <&0 &
  child=$!
  [[ -z $pending ]] || kill -TERM "$child" 2>/dev/null || :
  while kill -0 "$child" 2>/dev/null; do
    wait "$child" || :  # ended by the child's exit, or by a trap (the loop then waits on)
  done
  wait "$child" && status=0 || status=$?  # the child's own status, kept by bash once reaped
  trap - TERM INT
  return "$status"
}
