#!/usr/bin/env bash
# Stand-in for addonpkg, ONLY to test the bench plumbing (ADDONPKG=$PWD/bench/fake-addonpkg.sh).
# It implements the planned CLI shapes with peer tools; its numbers mean nothing.
#   unpack REF|oci:LAYOUT:TAG -o DIR   -> DIR holds the /addon content
#   build DIR -t REF                   -> artifact-style push of DIR
#   push REF                           -> push what `build DIR -t REF --local` staged (here: a layout)
set -euo pipefail
: "${CRANE:=crane}" "${ORAS:=oras}"
cmd="$1"; shift
case "$cmd" in
unpack)
  src="$1"; [[ "$2" == -o ]]; out="$3"; tmp="$(mktemp -d "$(dirname "$out")/.unpack.XXXX")"
  case "$src" in
    oci:*) l="${src#oci:}"; umoci unpack --rootless --image "$l" "$tmp/b" >/dev/null; mv "$tmp/b/rootfs/addon" "$out" ;;
    *:artifact|*:addonpkg-artifact)  # the oras-made artifact holds the same tree
       "$ORAS" pull --plain-http "${src%:*}:artifact" -o "$tmp" >/dev/null; mv "$tmp/addon" "$out" ;;
    *) "$CRANE" export "$src" - | tar -x -C "$tmp" addon/; mv "$tmp/addon" "$out" ;;
  esac
  rm -rf "$tmp" ;;
build)  # build DIR [--format F --name N --version V] -t REF
  dir="$1"; shift; ref=""
  while (($#)); do [[ "$1" == -t ]] && ref="$2"; shift; done
  cd "$(dirname "$dir")" && "$ORAS" push --plain-http "$ref" --config /dev/null:application/vnd.cncf.addon.config.v1+json \
     "$(basename "$dir"):application/vnd.cncf.addon.content.v1.tar+gzip" >/dev/null ;;
push)
  [[ "$1" == -q ]] && shift
  ref="$1"; "$ORAS" cp --from-oci-layout "$W/layouts/artifact:artifact" --to-plain-http "$ref" >/dev/null ;;
*) echo "fake-addonpkg: unknown command $cmd" >&2; exit 2 ;;
esac
