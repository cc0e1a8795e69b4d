#!/usr/bin/env bash
# Builds kube-apiserver from the k8s.io/kubernetes Go module (it cannot be
# downloaded here, and `go install` refuses the module because its go.mod has
# replace directives) and caches the binary outside the clone, keyed by
# version, so a machine builds it once:
#
#   ${XDG_CACHE_HOME:-~/.cache}/addonpkg/kube-apiserver/$KUBE_VERSION/kube-apiserver
#
# The wrapper module requires k8s.io/kubernetes and replaces each staging
# module that the tag's go.mod points at ./staging/src/... with its published
# v0.X.Y; the list is read from the tag's go.mod, not kept here. Prints the
# binary's path on stdout.
set -euo pipefail
KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/addonpkg/kube-apiserver/$KUBE_VERSION
bin=$cache/kube-apiserver
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi

minor=${KUBE_VERSION#v1.}
minor=${minor%%.*}
staging=v0.${KUBE_VERSION#v1.}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "build-kube-apiserver: resolving k8s.io/kubernetes@$KUBE_VERSION (about 550 MB of modules on a cold cache)" >&2
gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[[ -f $gomod ]] || { echo "build-kube-apiserver: no go.mod for k8s.io/kubernetes@$KUBE_VERSION" >&2; exit 1; }

{
  echo "module kubeapiserverbuild"
  echo
  echo "go 1.26.0"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  echo "replace ("
  # Lines such as "	k8s.io/api => ./staging/src/k8s.io/api".
  sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9./-]*\)[[:space:]]*=>[[:space:]]*\./staging/src/.*$#\1#p' "$gomod" |
    sort -u | while read -r mod; do echo "	$mod => $mod $staging"; done
  echo ")"
} >go.mod
n=$(grep -c '=> k8s.io' go.mod || true)
[[ $n -gt 0 ]] || { echo "build-kube-apiserver: found no staging modules in $gomod" >&2; exit 1; }
cat >tools.go <<'EOF'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
EOF

go mod tidy >&2
echo "build-kube-apiserver: go build k8s.io/kubernetes/cmd/kube-apiserver ($n staging modules replaced; minutes on a cold build cache)" >&2
mkdir -p "$cache"
go build -trimpath -o "$cache/kube-apiserver.tmp" \
  -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
  k8s.io/kubernetes/cmd/kube-apiserver
mv "$cache/kube-apiserver.tmp" "$bin"
echo "$bin"
