#!/usr/bin/env bash
# Installs what the tests need, idempotently:
#  - Debian packages (the Distribution registry, umoci, skopeo, git, etcd
#    and kubectl for the cluster tests) with apt-get when run as root;
#  - the Go peers crane, oras, cosign (2) and cosign3 into ./bin, pinned,
#    built once per version into ${XDG_CACHE_HOME:-~/.cache}/addonpkg/tools;
#  - kube-apiserver, built from its Go module by hack/build-kube-apiserver.sh
#    and cached outside the clone (tens of minutes cold, a no-op once cached).
# Under CI (CI non-empty) anything missing afterwards fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/bin"
mkdir -p "$BIN"

CRANE_VERSION=v0.22.1
ORAS_VERSION=v1.3.6
COSIGN_VERSION=v2.6.5
COSIGN3_VERSION=v3.1.4
DEBS=(docker-registry umoci skopeo git etcd-server kubectl)

missing=()
for pkg in "${DEBS[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "install-deps: apt-get install ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "install-deps: missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
  fi
fi

# The registry package starts a system service on install; the tests run
# their own registries, so stop it where it was started.
if command -v systemctl >/dev/null 2>&1; then systemctl stop docker-registry >/dev/null 2>&1 || true; fi

# The Go peers are built once per version into a cache outside the clone
# (as kube-apiserver is), and copied into ./bin from there: a fresh clone
# (CI's) otherwise links all three again, half a minute on two cores,
# cosign most of it, though Go's build cache holds every package.
tools=${XDG_CACHE_HOME:-$HOME/.cache}/addonpkg/tools
install_go_tool() { # name module version [go toolchain]
  local name=$1 module=$2 version=$3 toolchain=${4:-}
  local built=${module##*/}
  if [[ -x "$BIN/$name" && -f "$BIN/.$name.$version" ]]; then return; fi
  local cached=$tools/$name/$version
  if [[ ! -x $cached/$built ]]; then
    echo "install-deps: go install $module@$version${toolchain:+ with $toolchain}" >&2
    rm -rf "$cached.tmp" && mkdir -p "$cached.tmp"
    if [[ -n $toolchain ]]; then
      GOTOOLCHAIN=$toolchain GOBIN="$cached.tmp" go install "$module@$version"
    else
      GOBIN="$cached.tmp" go install "$module@$version"
    fi
    rm -rf "$cached" && mv "$cached.tmp" "$cached"
  fi
  cp "$cached/$built" "$BIN/$name.tmp" && mv "$BIN/$name.tmp" "$BIN/$name"
  touch "$BIN/.$name.$version"
}
install_go_tool crane github.com/google/go-containerregistry/cmd/crane "$CRANE_VERSION"
install_go_tool oras oras.land/oras/cmd/oras "$ORAS_VERSION"
install_go_tool cosign github.com/sigstore/cosign/v2/cmd/cosign "$COSIGN_VERSION"
# cosign 3 beside 2 (e2e/cosign3_test.go): its binary is named cosign
# too, so ./bin holds it as cosign3. It needs Go 1.27: go fetches that
# toolchain from the module proxy (about 76 MB, once per machine).
install_go_tool cosign3 github.com/sigstore/cosign/v3/cmd/cosign "$COSIGN3_VERSION" go1.27.3

# The cluster tests' API server (internal/testing/kubeenv finds it in the
# cache this prints, unless TEST_ASSET_KUBE_APISERVER names another).
kube_apiserver=
if [[ -n "${TEST_ASSET_KUBE_APISERVER:-}" ]]; then
  kube_apiserver=$TEST_ASSET_KUBE_APISERVER
elif ! kube_apiserver=$(hack/build-kube-apiserver.sh); then
  echo "install-deps: hack/build-kube-apiserver.sh failed" >&2
  kube_apiserver=
fi

status=0
if [[ -z $kube_apiserver || ! -x $kube_apiserver ]]; then
  echo "install-deps: kube-apiserver is missing (hack/build-kube-apiserver.sh)" >&2
  status=1
fi
for tool in docker-registry umoci skopeo git etcd kubectl; do
  if ! command -v "$tool" >/dev/null; then
    echo "install-deps: $tool is not installed" >&2
    status=1
  fi
done
for tool in crane oras cosign cosign3; do
  [[ -x "$BIN/$tool" ]] || { echo "install-deps: $BIN/$tool is missing" >&2; status=1; }
done
if [[ -n "${CI:-}" && $status != 0 ]]; then
  echo "install-deps: CI needs every dependency" >&2
  exit 1
fi
exit 0
