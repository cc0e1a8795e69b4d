#!/usr/bin/env bash
# Build the test images for each size with peer tools only (gen + tar/gzip + crane/oras),
# push them to the loopback registry and mirror them into OCI layouts.
#
# Per size S (under $WORK_DIR/S):
#   src/            generator output (layers/ trees, model/, stats.json)
#   expected/       independent flatten of src/layers (expected.sh); expected/addon is the truth
#   blobs/N.tar     deterministic layer tarballs; blobs/N.tar.gz = gzip -n -6 of the same
#   layouts/{docker-gz,docker-raw,artifact}   OCI layouts (tag = variant name)
# Registry refs: $REG/addon-S:docker-gz   5 gzip layers, built by crane append + crane mutate
#                $REG/addon-S:docker-raw  same 5 layers uncompressed (oras push + crane's config)
#                $REG/addon-S:artifact    oras push of expected/addon as one tar+gzip layer,
#                                         custom config/layer media types
#                $REG/addon-S:addonpkg-artifact   only when ADDONPKG is set: the same tree built by
#                                         `addonpkg build --format artifact` + `addonpkg push`.
#                                         The oras-made `artifact` is not a valid add-on artifact
#                                         (spec/addon-v1.md: its config has no specVersion, kind,
#                                         identity, inventory and its tar has an addon/ prefix), and
#                                         addonpkg refuses it as the spec says; this variant is what
#                                         the addonpkg-unpack-artifact row reads.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"

build_tools
curl -fsS -o /dev/null "http://$REG/v2/" || { echo "registry not answering at $REG; run bench/registry.sh start" >&2; exit 1; }

for S in $SIZES; do
  W="$WORK_DIR/$S"; R="$REG/addon-$S"
  echo "=== $S"
  if [[ ! -f "$W/src/stats.json" ]]; then
    rm -rf "$W/src"; "$GEN" -size "$S" -out "$W/src"
  fi
  "$HERE/expected.sh" "$W/src/layers" "$W/expected"
  # the generator's own model must agree with the independent flatten
  diff -r "$W/expected/addon/" "$W/src/model/addon/" > /dev/null \
    || { echo "BUG: expected.sh and generator model disagree for $S" >&2; exit 1; }

  mkdir -p "$W/blobs"
  for L in "$W"/src/layers/*; do
    n="$(basename "$L")"
    if [[ ! -f "$W/blobs/$n.tar.gz" ]]; then
      layer_tar "$L" "$W/blobs/$n.tar"
      gzip -n -6 -c "$W/blobs/$n.tar" > "$W/blobs/$n.tar.gz.tmp" && mv "$W/blobs/$n.tar.gz.tmp" "$W/blobs/$n.tar.gz"
    fi
  done

  # docker-style, gzip layers: crane append onto an empty OCI base, then crane mutate
  args=(); for f in "$W"/blobs/*.tar.gz; do args+=(-f "$f"); done
  "$CRANE" append --oci-empty-base "${args[@]}" -t "$R:docker-gz-base" 2>/dev/null
  "$CRANE" mutate --set-platform linux/amd64 --entrypoint /usr/bin/junk \
     -l "org.opencontainers.image.title=synthetic-addon-$S" -t "$R:docker-gz" "$R:docker-gz-base" 2>/dev/null
  "$CRANE" config "$R:docker-gz" > "$W/image-config.json"

  # docker-style, uncompressed layers: same diff_ids, so the very same config works
  (cd "$W/blobs" && "$ORAS" push --plain-http "$R:docker-raw" \
     --config "../image-config.json:application/vnd.oci.image.config.v1+json" \
     $(for f in *.tar; do echo "$f:application/vnd.oci.image.layer.v1.tar"; done) > /dev/null)

  # artifact-style: the final /addon tree as one tar+gzip layer
  echo "{\"name\":\"synthetic-addon-$S\",\"version\":\"1.0.1\"}" > "$W/addon-config.json"
  (cd "$W/expected/rootfs" && "$ORAS" push --plain-http "$R:artifact" \
     --config "$W/addon-config.json:$ADDON_CONFIG_MT" "addon:$ADDON_CONTENT_MT" > /dev/null)

  variants=(docker-gz docker-raw artifact)
  if [[ -n "${ADDONPKG:-}" ]]; then
    h="$(mktemp -d "${TMPDIR:-/tmp}/addonpkg-perf-home.XXXXXX")"
    ADDONPKG_HOME="$h" "$ADDONPKG" build "$W/expected/rootfs/addon" --format artifact --name "synthetic-addon-$S" \
       --version 1.0.1 -t "$R:addonpkg-artifact" > /dev/null
    ADDONPKG_HOME="$h" "$ADDONPKG" push -q "$R:addonpkg-artifact" > /dev/null
    rm -rf "$h"
    variants+=(addonpkg-artifact)
  fi
  rm -rf "$W/layouts"
  for v in "${variants[@]}"; do
    "$ORAS" cp --from-plain-http "$R:$v" --to-oci-layout "$W/layouts/$v:$v" > /dev/null
    echo "  $R:$v  $("$CRANE" digest "$R:$v")  layers=$("$CRANE" manifest "$R:$v" | jq '.layers|length') bytes=$("$CRANE" manifest "$R:$v" | jq '[.layers[].size]|add')"
  done
  jq -c '{final_addon_files, final_addon_bytes, modified, deleted}' "$W/src/stats.json"
done

# the adversarial inputs of the memory rows (bench-peers.sh): OCI layouts only, no registry
if [[ "${ADVERSARIAL:-1}" == 1 ]]; then
  for K in bomb huge; do
    if [[ ! -f "$WORK_DIR/$K/layout/index.json" ]]; then
      echo "=== $K (adversarial)"
      "$PEERS_BIN/adversarial" -kind "$K" -out "$WORK_DIR/$K"
    fi
  done
fi
