#!/usr/bin/env bash
# Install the peer tools used by the addonpkg perf lab. Idempotent.
# Debian packages with apt-get only when run as root (else they must be installed);
# crane and oras with `go install` into $PEERS_BIN (bench/.bin, git-ignored).
#
#   PEERS_BIN   where crane/oras are installed (default: <dir of this script>/.bin)
#   CRANE_VERSION / ORAS_VERSION   pinned module versions (defaults below)
#   SKIP_APT=1  do not touch apt (e.g. when the Debian packages are already there)
#
# Debian packages: umoci skopeo docker-registry (+ time jq curl tar gzip).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEERS_BIN="${PEERS_BIN:-$HERE/.bin}"
CRANE_VERSION="${CRANE_VERSION:-v0.22.1}"
ORAS_VERSION="${ORAS_VERSION:-v1.3.6}"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"

APT_PKGS=(umoci skopeo docker-registry time jq curl tar gzip)
if [[ "${SKIP_APT:-0}" != 1 ]]; then
  missing=()
  for p in "${APT_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    # apt only as root; otherwise the packages must already be there.
    if [[ $(id -u) -ne 0 ]]; then
      echo "setup-peers: missing Debian packages: ${missing[*]}" >&2
      echo "setup-peers: run as root, or: sudo apt-get install --no-install-recommends ${missing[*]}" >&2
      exit 1
    fi
    echo "apt-get install: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "apt packages already installed: ${APT_PKGS[*]}"
  fi
  # docker-registry's Debian package enables a systemd service on :5000; the lab
  # runs its own instance (registry.sh), so we leave the service alone.
fi
for t in umoci skopeo /usr/bin/docker-registry /usr/bin/time jq curl; do
  command -v "$t" >/dev/null || { echo "setup-peers: $t not found" >&2; exit 1; }
done

mkdir -p "$PEERS_BIN"
# go install only when the binary is missing or reports a different version.
need_install() { # name wanted-version-string cmd...
  local bin="$PEERS_BIN/$1" want="$2"; shift 2
  [[ -x "$bin" ]] || return 0
  "$bin" "$@" 2>/dev/null | grep -qF "${want#v}" && return 1
  return 0
}
if need_install crane "$CRANE_VERSION" version; then
  echo "go install crane@$CRANE_VERSION -> $PEERS_BIN"
  GOBIN="$PEERS_BIN" GOFLAGS="${GOFLAGS:-} -trimpath" "$GO" install "github.com/google/go-containerregistry/cmd/crane@$CRANE_VERSION"
fi
if need_install oras "$ORAS_VERSION" version; then
  echo "go install oras@$ORAS_VERSION -> $PEERS_BIN"
  GOBIN="$PEERS_BIN" GOFLAGS="${GOFLAGS:-} -trimpath" "$GO" install "oras.land/oras/cmd/oras@$ORAS_VERSION"
fi

echo "--- versions"
echo "crane:           $("$PEERS_BIN/crane" version)"
echo "oras:            $("$PEERS_BIN/oras" version | head -1)"
echo "umoci:           $(umoci --version)"
echo "skopeo:          $(skopeo --version)"
echo "docker-registry: $(/usr/bin/docker-registry --version)"
echo "go:              $("$GO" version)"
echo "gzip:            $(gzip --version | head -1)"
echo "tar:             $(tar --version | head -1)"
