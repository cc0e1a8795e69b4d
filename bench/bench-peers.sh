#!/usr/bin/env bash
# Time peer tools (and, when ADDONPKG is set, addonpkg) on the images built by make-images.sh.
#
# Each operation runs as one whole process tree under /usr/bin/time -f '%e %M';
# RUNS times (RUNS_LARGE for "large"), median reported. Scratch output is created
# fresh for each run and deleted afterwards (untimed). After the first run of an
# operation that produces an /addon tree, the tree is compared with the expected
# one (expected.sh) using diff -r.
#
# Env: RUNS (5) RUNS_LARGE (3) SIZES ("small medium large") OPS (regex on op ids, default all)
#      RESULTS ($WORK_DIR/results.md) OUT_TSV_DIR ($WORK_DIR/results) APPEND=1 keeps earlier TSV rows
#      ADDONPKG=/path/to/addonpkg adds the addonpkg rows (see README.md)
# Raw data: runs.tsv (+ the 1-minute load average before each run), ops.tsv, datasets.tsv,
# cmds.tsv (the exact command and untimed prep of every op), env.md.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"
build_tools

RUNS="${RUNS:-5}"
RUNS_LARGE="${RUNS_LARGE:-3}"
OPS="${OPS:-.}"
RESULTS="${RESULTS:-$WORK_DIR/results.md}"
TSV="${OUT_TSV_DIR:-$WORK_DIR/results}"
# Scratch for every run's output. Default: tmpfs (/dev/shm), so the numbers measure the
# tools, not this VM's ext4 (mounted with `discard`, where creating/deleting 20k small
# files costs ~5x more, almost all system time). Ops whose id ends in -disk write to
# DISK_SCRATCH instead, to show that effect.
if [[ -z "${SCRATCH_DIR:-}" ]]; then
  if [[ -d /dev/shm && -w /dev/shm ]]; then SCRATCH_DIR=/dev/shm/addonpkg-perf-scratch; else SCRATCH_DIR="$WORK_DIR/scratch"; fi
fi
SCRATCH="$SCRATCH_DIR"
DISK_SCRATCH="${DISK_SCRATCH_DIR:-$WORK_DIR/scratch}"
LOGS="$TSV/logs"
BENCH_ID="${BENCH_ID:-$(date +%s)-$$}"
export BENCH_ID
mkdir -p "$TSV" "$LOGS" "$SCRATCH" "$DISK_SCRATCH"
if [[ "${APPEND:-0}" != 1 ]]; then
  rm -f "$TSV/runs.tsv" "$TSV/ops.tsv" "$TSV/datasets.tsv" "$TSV/cmds.tsv" "$LOGS"/*
fi
curl -fsS -o /dev/null "http://$REG/v2/" || { echo "registry not answering at $REG; run bench/registry.sh start" >&2; exit 1; }

# skopeo remembers where it has seen each blob (blob-info cache) and then pushes to a
# new repo by cross-repo *mount*, i.e. without sending data. To time a real upload,
# that cache is removed before every timed skopeo push (untimed prep step).
if [[ $(id -u) -eq 0 ]]; then SKOPEO_BIC_DIR=/var/lib/containers/cache
else SKOPEO_BIC_DIR="${XDG_DATA_HOME:-$HOME/.local/share}/containers/cache"; fi
export SKOPEO_BIC="$SKOPEO_BIC_DIR/blob-info-cache-v1.boltdb"

# ---------------------------------------------------------------- measurement core
median() { sort -n | awk '{a[NR]=$1} END{ if(NR==0){print "NaN"} else if(NR%2){print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2} }'; }

# op ID CATEGORY CHECK TITLE IN_BYTES CMD [PREP]
#   CHECK: path under $OUT that must equal the expected /addon tree, or "-"
#   CMD/PREP: bash snippets; see the exported variables below. PREP runs untimed before each run.
op() {
  local id="$1" cat="$2" check="$3" title="$4" inb="$5" cmd="$6" prep="${7:-}"
  [[ "$id" =~ $OPS ]] || return 0
  local n="$RUNS"; [[ "$S" == large || "$S" == bomb || "$S" == huge ]] && n="$RUNS_LARGE"
  local status="-" walls=() i tf log load
  printf '  %-28s' "$id"
  # the exact command (and untimed prep) of this op, for the report; once per op id
  grep -q "^$id	" "$TSV/cmds.tsv" 2>/dev/null || printf '%s\t%s\t%s\t%s\n' "$id" "$title" "$cmd" "$prep" >> "$TSV/cmds.tsv"
  local base="$SCRATCH"; [[ "$id" == *-disk ]] && base="$DISK_SCRATCH"
  for ((i = 1; i <= n; i++)); do
    # OUT: the run's output dir; TMPDIR: the tools' temp files (oras push, skopeo), same medium
    export RUN="$i" OUT="$base/$S-$id-$i" TMPDIR="$base/$S-$id-$i.tmp"
    rm -rf "$OUT" "$TMPDIR"; mkdir -p "$OUT" "$TMPDIR"
    tf="$TSV/time.txt"; log="$LOGS/$S-$id-$i.log"
    if [[ -n "$prep" ]]; then bash -c "set -eo pipefail; $prep" >"$log.prep" 2>&1 || echo " (prep failed, see $log.prep)"; fi
    load="$(cut -d' ' -f1 /proc/loadavg)"   # the machine may be shared: keep the load next to each run
    /usr/bin/time -f '%e %M' -o "$tf" bash -c "set -eo pipefail; $cmd" >"$log" 2>&1
    local rc=$?
    read -r wall rss < <(tail -1 "$tf")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$S" "$id" "$i" "$wall" "$rss" "$rc" "$load" >> "$TSV/runs.tsv"
    if ((rc != 0)); then printf ' [run %d rc=%d, see %s]' "$i" "$rc" "$log"; fi
    walls+=("$wall")
    if ((i == 1)) && [[ "$check" != "-" ]]; then
      if ((rc != 0)); then status="FAIL (command failed)"
      elif [[ ! -d "$OUT/$check" ]]; then status="FAIL (no $check)"
      else
        diff -r "$EXP/addon/" "$OUT/$check/" > "$LOGS/$S-$id.diff" 2>&1
        local nd; nd=$(wc -l < "$LOGS/$S-$id.diff")
        if ((nd == 0)); then status="OK"; rm -f "$LOGS/$S-$id.diff"
        else status="FAIL ($nd diff lines, see logs/$S-$id.diff)"; fi
      fi
    fi
    rm -rf "$OUT" "$TMPDIR"
    [[ "$base" == "$DISK_SCRATCH" ]] && sync   # flush deletes (and their discards) before the next timed run
  done
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$S" "$id" "$cat" "$title" "$status" "$inb" >> "$TSV/ops.tsv"
  printf ' median %6ss  %s\n' "$(printf '%s\n' "${walls[@]}" | median)" "$status"
}

blobsum() { local t=0 b; for b in "$@"; do t=$((t + $(stat -c %s "$b"))); done; echo "$t"; }
layout_blobs() { # LAYOUT -> absolute paths of the layer blobs of its (only) manifest, in order
  local L="$1" m
  m="$(jq -r '.manifests[0].digest' "$L/index.json")"
  jq -r '.layers[].digest' "$L/blobs/sha256/${m#sha256:}" | sed "s#^sha256:#$L/blobs/sha256/#"
}

# ---------------------------------------------------------------- environment record
{
  echo "# addonpkg perf lab: peer tool baselines"
  echo
  echo "Generated by \`bench-peers.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); bench id $BENCH_ID."
  echo
  echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r), $(. /etc/os-release; echo "$PRETTY_NAME")"
  echo "- registry: $(/usr/bin/docker-registry --version 2>&1 | awk '{print $2, $3}') on http://$REG (filesystem storage in a temp dir), same machine"
  echo "- crane $("$CRANE" version 2>&1) · oras $("$ORAS" version 2>&1 | awk '/Version/{print $2}') · $(umoci --version) · $(skopeo --version) · gzip $(gzip --version | awk 'NR==1{print $2}') · GNU tar $(tar --version | awk 'NR==1{print $4}')"
  echo "- runs: $RUNS per operation ($RUNS_LARGE for large), median reported; whole-process wall time and peak RSS from \`/usr/bin/time -f '%e %M'\` (for pipelines %M is the largest single process, not the sum). Page cache warm (all data sets fit in RAM); registry and client share the $(nproc) cores. Outputs and tool temp dirs (TMPDIR) go to $SCRATCH (tmpfs unless SCRATCH_DIR says otherwise); \`-disk\` rows write to the ext4 disk ($DISK_SCRATCH), which is mounted with \`discard\`."
} > "$TSV/env.md"

# ---------------------------------------------------------------- the operations
for S in $SIZES; do
  export S W="$WORK_DIR/$S" R="$REG/addon-$S"
  export EXP="$W/expected"
  [[ -d "$W/layouts/docker-gz" ]] || { echo "missing $W/layouts; run bench/make-images.sh" >&2; exit 1; }
  mapfile -t GZB < <(layout_blobs "$W/layouts/docker-gz")
  mapfile -t RAWB < <(layout_blobs "$W/layouts/docker-raw")
  mapfile -t ARTB < <(layout_blobs "$W/layouts/artifact")
  export GZ_BLOBS="${GZB[*]}" RAW_BLOBS="${RAWB[*]}"
  GZ_BYTES=$(blobsum "${GZB[@]}"); RAW_BYTES=$(blobsum "${RAWB[@]}"); ART_BYTES=$(blobsum "${ARTB[@]}")
  APB=(); AP_ART_BYTES=""   # the addonpkg-built artifact (make-images.sh, only with ADDONPKG)
  if [[ -d "$W/layouts/addonpkg-artifact" ]]; then
    mapfile -t APB < <(layout_blobs "$W/layouts/addonpkg-artifact"); AP_ART_BYTES=$(blobsum "${APB[@]}")
  fi
  ADDON_BYTES=$(jq .final_addon_bytes "$W/src/stats.json"); ADDON_FILES=$(jq .final_addon_files "$W/src/stats.json")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$S" "$ADDON_FILES" "$ADDON_BYTES" "$GZ_BYTES" "$RAW_BYTES" "$ART_BYTES" "$AP_ART_BYTES" >> "$TSV/datasets.tsv"
  # top-level rootfs entries other than addon/, for the "addon only" floor
  export NON_ADDON_EXCLUDES="$(cd "$EXP/rootfs" && ls -A | grep -vx addon | sed 's/^/--exclude=/' | tr '\n' ' ' | sed 's/^/--anchored /')"
  echo "=== $S ($ADDON_FILES files, $((ADDON_BYTES / 1000)) kB addon; gz image $((GZ_BYTES / 1000000)) MB, raw $((RAW_BYTES / 1000000)) MB)"

  # --- flatten / extract /addon
  op crane-export-gz   extract addon "crane export \| tar -x addon/ (registry, gzip layers)" "$GZ_BYTES" \
     '"$CRANE" export "$R:docker-gz" - | tar -x -C "$OUT" addon/'
  op crane-export-raw  extract addon "crane export \| tar -x addon/ (registry, uncompressed layers)" "$RAW_BYTES" \
     '"$CRANE" export "$R:docker-raw" - | tar -x -C "$OUT" addon/'
  op umoci-unpack-gz   extract bundle/rootfs/addon "umoci unpack --rootless (OCI layout, gzip layers)" "$GZ_BYTES" \
     '"$UMOCI" unpack --rootless --image "$W/layouts/docker-gz:docker-gz" "$OUT/bundle"'
  op umoci-unpack-raw  extract bundle/rootfs/addon "umoci unpack --rootless (OCI layout, uncompressed layers)" "$RAW_BYTES" \
     '"$UMOCI" unpack --rootless --image "$W/layouts/docker-raw:docker-raw" "$OUT/bundle"'
  op oras-pull-artifact extract addon "oras pull artifact (registry, 1 tar+gzip layer)" "$ART_BYTES" \
     '"$ORAS" pull --plain-http "$R:artifact" -o "$OUT"'
  op oras-pull-artifact-layout extract addon "oras pull artifact (OCI layout)" "$ART_BYTES" \
     '"$ORAS" pull --oci-layout "$W/layouts/artifact:artifact" -o "$OUT"'

  # --- pull only (no flattening)
  op skopeo-pull-gz    pull - "skopeo copy docker:// → oci: (pull only)" "$GZ_BYTES" \
     '"$SKOPEO" --policy "$SKOPEO_POLICY" copy -q --src-tls-verify=false "docker://$R:docker-gz" "oci:$OUT/layout:docker-gz"'
  op crane-pull-oci-gz pull - "crane pull --format oci (pull only)" "$GZ_BYTES" \
     '"$CRANE" pull --format oci "$R:docker-gz" "$OUT/layout"'

  # --- push (every run goes to a fresh repository, so all blobs are really uploaded)
  op crane-push-gz     push - "crane push LAYOUT REF (5 gzip layers)" "$GZ_BYTES" \
     '"$CRANE" push "$W/layouts/docker-gz" "$REG/push-crane-$S-$BENCH_ID-$RUN:latest"'
  op skopeo-push-gz    push - "skopeo copy oci: → docker:// (5 gzip layers)" "$GZ_BYTES" \
     '"$SKOPEO" --policy "$SKOPEO_POLICY" copy -q --dest-tls-verify=false "oci:$W/layouts/docker-gz:docker-gz" "docker://$REG/push-skopeo-$S-$BENCH_ID-$RUN:latest"' \
     'rm -f "$SKOPEO_BIC"'
  op oras-push-artifact push - "oras push DIR (tar+gzip the /addon tree + upload)" "$ART_BYTES" \
     'cd "$EXP/rootfs" && "$ORAS" push --plain-http "$REG/push-oras-$S-$BENCH_ID-$RUN:v1" --config "$W/addon-config.json:$ADDON_CONFIG_MT" "addon:$ADDON_CONTENT_MT"'

  # --- physical floor on this machine: the same layer blobs, straight from disk (page cache)
  op floor-cat-gz      floor - "floor: cat gzip blobs > /dev/null" "$GZ_BYTES" \
     'cat $GZ_BLOBS > /dev/null'
  op floor-gunzip      floor - "floor: gzip -dc gzip blobs > /dev/null" "$GZ_BYTES" \
     'for b in $GZ_BLOBS; do gzip -dc "$b"; done > /dev/null'
  op floor-gunzip-untar floor - "floor: gzip -dc \| tar -x, all 5 layers, everything" "$GZ_BYTES" \
     'for b in $GZ_BLOBS; do gzip -dc "$b" | tar -x -C "$OUT"; done'
  # negative control: no whiteout handling, so its tree check must come out ✘
  op floor-gunzip-untar-addon floor addon "floor: gzip -dc \| tar -x, all 5 layers, only addon/ (no whiteouts: must be ✘)" "$GZ_BYTES" \
     'for b in $GZ_BLOBS; do gzip -dc "$b" | tar -x -C "$OUT" $NON_ADDON_EXCLUDES; done'
  op floor-untar-raw-addon floor - "floor: cat \| tar -x uncompressed blobs (streamed), only addon/" "$RAW_BYTES" \
     'for b in $RAW_BLOBS; do cat "$b" | tar -x -C "$OUT" $NON_ADDON_EXCLUDES; done'

  # --- the same extractions writing to the ext4 disk instead of tmpfs
  op crane-export-gz-disk disk addon "crane export \| tar -x addon/ (registry, gzip) → ext4 disk" "$GZ_BYTES" \
     '"$CRANE" export "$R:docker-gz" - | tar -x -C "$OUT" addon/'
  op oras-pull-artifact-disk disk addon "oras pull artifact (registry) → ext4 disk" "$ART_BYTES" \
     '"$ORAS" pull --plain-http "$R:artifact" -o "$OUT"'
  op floor-gunzip-untar-addon-disk disk - "floor: gzip -dc \| tar -x, only addon/ → ext4 disk" "$GZ_BYTES" \
     'for b in $GZ_BLOBS; do gzip -dc "$b" | tar -x -C "$OUT" $NON_ADDON_EXCLUDES; done'

  # --- addonpkg (only when ADDONPKG points at a binary). Every command runs with a fresh,
  #     empty store: ADDONPKG_HOME=$TMPDIR/home ($TMPDIR is created and deleted per run,
  #     untimed). Override any command without editing this file (README.md).
  if [[ -n "${ADDONPKG:-}" ]]; then
    export ADDONPKG
    AP='ADDONPKG_HOME="$TMPDIR/home" "$ADDONPKG"'
    # where the unpacked /addon *content* lands under $OUT (DIR == /addon)
    [[ -n "${ADDONPKG_CHECK:-}" ]]      || ADDONPKG_CHECK=out
    [[ -n "${ADDONPKG_UNPACK_CMD:-}" ]] || ADDONPKG_UNPACK_CMD="$AP"' unpack "$SRC" -o "$OUT/out"'
    [[ -n "${ADDONPKG_STDOUT_CMD:-}" ]] || ADDONPKG_STDOUT_CMD="$AP"' unpack "$SRC" > /dev/null'
    [[ -n "${ADDONPKG_BUILD_CMD:-}" ]]  || ADDONPKG_BUILD_CMD="$AP"' build "$EXP/rootfs/addon" -t "$DST"'
    [[ -n "${ADDONPKG_PUSH_PREP:-}" ]]  || ADDONPKG_PUSH_PREP="$AP"' build "$EXP/rootfs/addon" -t "$DST"'
    [[ -n "${ADDONPKG_PUSH_CMD:-}" ]]   || ADDONPKG_PUSH_CMD="$AP"' push "$DST"'
    [[ -n "${ADDONPKG_LAYOUT_REF:-}" ]] || ADDONPKG_LAYOUT_REF='oci:$W/layouts/docker-gz:docker-gz'
    op addonpkg-unpack-gz  extract "$ADDONPKG_CHECK" "addonpkg unpack REF -o DIR (registry, gzip layers)" "$GZ_BYTES" \
       "SRC=\"\$R:docker-gz\"; $ADDONPKG_UNPACK_CMD"
    op addonpkg-unpack-raw extract "$ADDONPKG_CHECK" "addonpkg unpack REF -o DIR (registry, uncompressed layers)" "$RAW_BYTES" \
       "SRC=\"\$R:docker-raw\"; $ADDONPKG_UNPACK_CMD"
    # the artifact form as addonpkg builds it (make-images.sh: addonpkg-artifact), same tree as
    # oras's `artifact`, which is not a valid add-on artifact (spec/addon-v1.md 5, 6.5)
    if [[ -n "$AP_ART_BYTES" ]]; then
      op addonpkg-unpack-artifact extract "$ADDONPKG_CHECK" "addonpkg unpack REF -o DIR (registry, artifact form built by addonpkg)" "$AP_ART_BYTES" \
         "SRC=\"\$R:addonpkg-artifact\"; $ADDONPKG_UNPACK_CMD"
    fi
    op addonpkg-unpack-layout extract "$ADDONPKG_CHECK" "addonpkg unpack LAYOUT -o DIR (OCI layout, gzip layers)" "$GZ_BYTES" \
       "SRC=\"$ADDONPKG_LAYOUT_REF\"; $ADDONPKG_UNPACK_CMD"
    # rendered YAML stream to stdout (what `| kubectl apply -f -` reads); no tree to check
    op addonpkg-unpack-stdout extract - "addonpkg unpack REF > /dev/null (registry, gzip layers, rendered to stdout)" "$GZ_BYTES" \
       "SRC=\"\$R:docker-gz\"; $ADDONPKG_STDOUT_CMD"
    # build = validate + tar + compress into the (fresh) local store; it does not upload
    op addonpkg-build  push - "addonpkg build DIR -t REF (into the local store)" "$ART_BYTES" \
       "DST=\"\$REG/push-addonpkg-build-\$S-\$BENCH_ID-\$RUN:v1\"; $ADDONPKG_BUILD_CMD"
    # push of what an untimed build put into the store, to a fresh repository
    op addonpkg-push   push - "addonpkg push REF (store → registry, fresh repository)" "$ART_BYTES" \
       "DST=\"\$REG/push-addonpkg-\$S-\$BENCH_ID-\$RUN:v1\"; $ADDONPKG_PUSH_CMD" \
       "DST=\"\$REG/push-addonpkg-\$S-\$BENCH_ID-\$RUN:v1\"; $ADDONPKG_PUSH_PREP"
    # build then push: the same job as `oras push DIR` (tar + gzip + upload)
    op addonpkg-build-push push - "addonpkg build DIR -t REF && addonpkg push REF" "$ART_BYTES" \
       "DST=\"\$REG/push-addonpkg-bp-\$S-\$BENCH_ID-\$RUN:v1\"; $ADDONPKG_BUILD_CMD && $ADDONPKG_PUSH_CMD"
  fi
done

# ---------------------------------------------------------------- adversarial inputs (memory rows)
# Only addonpkg rows, from OCI layouts that make-images.sh writes with tools/adversarial:
#   bomb  1 gzip layer, 40 files of 128 MiB of zeros under addon/ (5 GiB in 5 MB): every
#         mode must refuse it at the add-on size limit (512 MiB), in constant memory. The
#         command succeeds only when addonpkg exits non-zero with that limit's message.
#   huge  a 1 GiB add-on of 16,384 files of 64 KiB, 4 gzip layers; unpacked with
#         --max-addon-bytes 2 GiB. `addonpkg build` has no limit flags: it refuses the tree
#         at its 512 MiB default, which is what its row measures.
# ADVERSARIAL=0 leaves them out.
if [[ -n "${ADDONPKG:-}" && "${ADVERSARIAL:-1}" == 1 ]]; then
  AP='ADDONPKG_HOME="$TMPDIR/home" "$ADDONPKG"'
  refused() { # CMD: succeeds only when CMD fails with the add-on size limit's message
    printf 'if %s 2> "$TMPDIR/err"; then echo "not refused"; exit 1; fi; grep -q "add-on size limit" "$TMPDIR/err" || { cat "$TMPDIR/err"; exit 1; }' "$1"
  }
  for S in bomb huge; do
    export S W="$WORK_DIR/$S"
    [[ -f "$W/layout/index.json" ]] || { echo "missing $W/layout; run bench/make-images.sh (ADVERSARIAL=1)" >&2; continue; }
    mapfile -t ADVB < <(layout_blobs "$W/layout")
    ADV_BYTES=$(blobsum "${ADVB[@]}")
    ADV_FILES=$(find "$W/tree/addon" -type f | wc -l)
    ADV_ADDON=$(find "$W/tree/addon" -type f -printf '%s\n' | awk '{t+=$1} END{printf "%.0f", t}')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$S" "$ADV_FILES" "$ADV_ADDON" "$ADV_BYTES" "" "" "" >> "$TSV/datasets.tsv"
    echo "=== $S (adversarial: $ADV_FILES files, $((ADV_ADDON / 1000000)) MB add-on; layout $((ADV_BYTES / 1000000)) MB)"
    if [[ "$S" == bomb ]]; then
      op addonpkg-unpack-layout extract - "addonpkg unpack LAYOUT -o DIR, refused at the add-on size limit" "$ADV_BYTES" \
         "$(refused "$AP"' unpack "oci:$W/layout:bomb" -o "$OUT/out"')"
      op addonpkg-unpack-stdout extract - "addonpkg unpack LAYOUT > /dev/null, refused at the add-on size limit" "$ADV_BYTES" \
         "$(refused "$AP"' unpack "oci:$W/layout:bomb" > /dev/null')"
      op addonpkg-build push - "addonpkg build DIR -t REF (sparse files), refused at the add-on size limit" "$ADV_BYTES" \
         "$(refused "$AP"' build "$W/tree/addon" -t bomb:1')"
    else
      op addonpkg-unpack-layout extract - "addonpkg unpack LAYOUT -o DIR --max-addon-bytes 2 GiB" "$ADV_BYTES" \
         "$AP"' unpack "oci:$W/layout:huge" -o "$OUT/out" --max-addon-bytes 2147483648 && test "$(find "$OUT/out" -type f | wc -l)" = 16384'
      op addonpkg-unpack-stdout extract - "addonpkg unpack LAYOUT > /dev/null --max-addon-bytes 2 GiB" "$ADV_BYTES" \
         "$AP"' unpack "oci:$W/layout:huge" --max-addon-bytes 2147483648 > /dev/null'
      op addonpkg-build push - "addonpkg build DIR -t REF, refused at its 512 MiB add-on size limit (no flag raises it)" "$ADV_BYTES" \
         "$(refused "$AP"' build "$W/tree/addon" -t huge:1')"
    fi
  done
fi

{ "$REPORT" -in "$TSV"
} > "$RESULTS.tmp" && mv "$RESULTS.tmp" "$RESULTS"
echo "wrote $RESULTS (raw data in $TSV)"
