# Sourced by scripts/run and scripts/compare: set up .venv and the environment asv runs in.
# Sets: machine (from --machine or the GPU's name, "cpu-smoke" without one), RMSNORM_* vars.
# Expects: machine, gpu (may be empty); the caller is in the repository root.
bash scripts/setup >&2
root=$PWD
export PATH="$root/.venv/bin:$PATH"
export RMSNORM_TORCH_PYTHON="$root/.venv/bin/python"
if [[ -n ${gpu:-} ]]; then
  [[ $gpu =~ ^[0-9]+$ ]] || { echo "$0: --gpu takes a GPU index, got '$gpu'" >&2; exit 2; }
  export CUDA_VISIBLE_DEVICES=$gpu
fi
# offline: every pip install asv makes reads the wheel folder that scripts/setup used
wheelhouse=${RMSNORM_WHEELHOUSE:-.whl}
if [[ -d $wheelhouse ]]; then
  export PIP_NO_INDEX=1 PIP_FIND_LINKS="$(cd "$wheelhouse" && pwd)"
fi
facts=$(python scripts/machine-info)
if [[ $(python -c 'import json,sys; print(json.loads(sys.argv[1])["gpu_count"])' "$facts") != 0 ]]; then
  export RMSNORM_BENCH_DEVICE=cuda
  default_machine=$(python -c 'import json,re,sys; print(re.sub("[^a-z0-9]+", "-", json.loads(sys.argv[1])["gpu"].lower()).strip("-"))' "$facts")
else
  export RMSNORM_BENCH_DEVICE=cpu
  default_machine=cpu-smoke
fi
# runs side by side on several GPUs of one host get their own machine name by default
machine=${machine:-$default_machine${gpu:+-gpu$gpu}}
[[ $machine =~ ^[A-Za-z0-9._-]+$ ]] || { echo "$0: machine name '$machine' may hold letters, digits, '.', '_' and '-' only" >&2; exit 2; }
# one Triton cache per machine name and GPU, so runs side by side never share one
export TRITON_CACHE_DIR="$root/.asv/triton-cache/$machine${gpu:+-gpu$gpu}"
# and one inductor cache (the torch_compile peer's compiled graphs), kept between runs
export TORCHINDUCTOR_CACHE_DIR="$root/.asv/inductor-cache/$machine${gpu:+-gpu$gpu}"

# asv's config, with its own environment directory per GPU, so that runs on two GPUs of one
# host never build into the same environment
conf=asv.conf.json
if [[ -n ${gpu:-} ]]; then
  conf=.asv-gpu$gpu.json  # beside asv.conf.json: asv resolves paths from the config's folder
  python scripts/asvfiles.py conf-copy "$conf" "env_dir=.asv/env-gpu$gpu"
fi

# the machine file is shared by every run of this user: update it under a lock
exec 9>"$HOME/.asv-machine.json.lock"
flock 9
asv machine --yes --machine "$machine" >/dev/null
python - "$machine" "$facts" "${gpu:-}" <<'PY'
import json, os, sys
name, facts, gpu = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
path = os.path.expanduser("~/.asv-machine.json")
data = json.load(open(path))
data[name].update(facts)
if gpu:
    data[name]["gpu_index"] = gpu
json.dump(data, open(path, "w"), indent=4)
print(f"{os.path.basename(sys.argv[0])}: machine {name}: {json.dumps(data[name])}", file=sys.stderr)
PY
flock -u 9
