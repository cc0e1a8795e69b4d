# Shared settings for the addonpkg perf lab (bench/); sourced by the other scripts.
# Every knob is an env var; nothing machine-specific is hard-coded.
# .work/ .bin/ .state/ under bench/ are git-ignored (see /.gitignore).
HERE="${HERE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
REPO_ROOT="${REPO_ROOT:-$(cd "$HERE/.." && pwd)}"  # the addonpkg module
WORK_DIR="${WORK_DIR:-$HERE/.work}"          # generated content, layer tars, layouts, scratch
PEERS_BIN="${PEERS_BIN:-$HERE/.bin}"         # where setup-peers.sh put crane/oras (and gen)
REGISTRY_PORT="${REGISTRY_PORT:-5055}"
REG="${REG:-127.0.0.1:$REGISTRY_PORT}"
SIZES="${SIZES:-small medium large}"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"

_tool() { if [[ -x "$PEERS_BIN/$1" ]]; then echo "$PEERS_BIN/$1"; else command -v "$1" || echo "$1-not-found"; fi; }
CRANE="${CRANE:-$(_tool crane)}"
ORAS="${ORAS:-$(_tool oras)}"
UMOCI="${UMOCI:-$(command -v umoci || echo umoci-not-found)}"
SKOPEO="${SKOPEO:-$(command -v skopeo || echo skopeo-not-found)}"
GEN="$PEERS_BIN/gen"
REPORT="$PEERS_BIN/report"
# build the lab's Go tools (tools/gen, tools/report, tools/benchdoc, tools/adversarial) when
# missing or stale: older than their own folder, the code they share (tools/internal) or
# tools/go.mod. tools/ is its own Go module (tools/go.mod), so the addonpkg module's
# `go vet ./...` and `go test ./...` never compile it.
build_tools() {
  local t
  for t in gen report benchdoc adversarial; do
    if [[ ! -x "$PEERS_BIN/$t" || -n "$(find "$HERE/tools/$t" "$HERE/tools/internal" "$HERE/tools/go.mod" -newer "$PEERS_BIN/$t")" ]]; then
      mkdir -p "$PEERS_BIN"; (cd "$HERE/tools" && "$GO" build -trimpath -o "$PEERS_BIN/$t" "./$t")
    fi
  done
}

# media types of the artifact-style package
ADDON_CONFIG_MT="${ADDON_CONFIG_MT:-application/vnd.cncf.addon.config.v1+json}"
ADDON_CONTENT_MT="${ADDON_CONTENT_MT:-application/vnd.cncf.addon.content.v1.tar+gzip}"

# skopeo needs a signature policy; use our own permissive one instead of /etc/containers.
SKOPEO_POLICY="$WORK_DIR/skopeo-policy.json"
mkdir -p "$WORK_DIR"
[[ -f "$SKOPEO_POLICY" ]] || echo '{"default":[{"type":"insecureAcceptAnything"}]}' > "$SKOPEO_POLICY"

# deterministic tar of a layer tree: no ./ prefix, root-owned, fixed mtime, sorted
layer_tar() { # DIR OUT.tar
  local d="$1" out="$2"
  (cd "$d" && ls -A | LC_ALL=C sort | tar --sort=name --owner=0 --group=0 --numeric-owner \
      --mtime=@1704067200 --format=gnu -cf "$out" -T -)
}

export CRANE ORAS UMOCI SKOPEO REG WORK_DIR SKOPEO_POLICY ADDON_CONFIG_MT ADDON_CONTENT_MT
