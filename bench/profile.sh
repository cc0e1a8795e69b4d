#!/usr/bin/env bash
# bench/profile.sh: where addonpkg spends its time and memory, as Go profiles.
#
#   A. the library calls of `addonpkg unpack REF -o DIR` (large docker-gz image and large
#      addonpkg-built artifact, from the lab registry) and `addonpkg build DIR -t NAME` (the large /addon
#      tree), run by bench/profile (its own module + go.work, so cmd/ is not touched)
#      under the CPU profiler, with an allocation profile at the end;
#   B. `go test -bench BenchmarkUnpackLarge` of pkg/unpack (synthetic in-memory image,
#      no registry, no disk) with -cpuprofile/-memprofile.
# `go tool pprof -top` summaries go to $WORK_DIR/profile/summary.md (raw .prof files next
# to it), which bench/run.sh puts in docs/benchmarks.md under "Where the time goes".
#
# Needs the large images: starts the registry and runs make-images.sh (SIZES=large) when
# the registry is not running (and stops it again at the end).
# Env: PROFILE_SIZE (large)  BENCHTIME (3x)  NODES (20: lines per pprof table)
#      NO_DOC=1: do not regenerate the doc (run.sh does it)
#      PROFILE_BUILD_ONLY=1: only compile (addonpkg unless ADDONPKG is set, bench/profile,
#      the pkg/unpack test binary) into bench/.bin; PROFILE_PREBUILT=1: use those binaries.
#      run.sh uses the pair so that every binary of a run comes from the same checkout
#      (others may be editing the tree while the bench runs).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"
cd "$REPO_ROOT"
S="${PROFILE_SIZE:-large}"
BENCHTIME="${BENCHTIME:-3x}"
NODES="${NODES:-20}"
P="$WORK_DIR/profile"
R="$REG/addon-$S"
build_tools

# make-images.sh needs addonpkg for the addonpkg-artifact variant
if [[ "${PROFILE_PREBUILT:-0}" != 1 ]]; then
  if [[ -z "${ADDONPKG:-}" ]]; then
    echo "--- go build -o $PEERS_BIN/addonpkg ./cmd/addonpkg"
    "$GO" build -o "$PEERS_BIN/addonpkg" ./cmd/addonpkg
  fi
  echo "--- build bench/profile and the pkg/unpack test binary"
  (cd "$HERE/profile" && GOWORK="$HERE/profile/go.work" "$GO" build -o "$PEERS_BIN/profile" .)
  "$GO" test -c -o "$PEERS_BIN/unpack.test" ./pkg/unpack/ \
    || { echo "profile.sh: pkg/unpack tests do not compile; part B will be skipped" >&2; rm -f "$PEERS_BIN/unpack.test"; }
fi
[[ "${PROFILE_BUILD_ONLY:-0}" == 1 ]] && exit 0
export ADDONPKG="${ADDONPKG:-$PEERS_BIN/addonpkg}"

rm -rf "$P"; mkdir -p "$P"
if ! "$HERE/registry.sh" status >/dev/null 2>&1; then
  "$HERE/registry.sh" start
  trap '"$HERE/registry.sh" stop' EXIT
  SIZES="$S" "$HERE/make-images.sh"
elif ! "$CRANE" digest "$R:docker-gz" >/dev/null 2>&1 || ! "$CRANE" digest "$R:addonpkg-artifact" >/dev/null 2>&1; then
  SIZES="$S" "$HERE/make-images.sh"
fi
EXP="$WORK_DIR/$S/expected"
SCR="${SCRATCH_DIR:-/dev/shm/addonpkg-perf-scratch}/profile"
rm -rf "$SCR"; mkdir -p "$SCR"

top() { # title profile [pprof options...]
  local title="$1" prof="$2"; shift 2
  echo
  echo "$title"
  echo
  echo '```'
  "$GO" tool pprof -top -nodecount="$NODES" "$@" "$prof" 2>/dev/null | sed -n '/^Showing\|^      flat\|^ *[0-9.]\+[a-zA-Z]* /p' | grep -v '^Showing top' || echo "(pprof failed)"
  echo '```'
}

run_profile() { # name mode src [extra args]
  local name="$1" mode="$2" src="$3"; shift 3
  rm -rf "$SCR/$name"; mkdir -p "$SCR/$name"
  "$PEERS_BIN/profile" -mode "$mode" -src "$src" -store "$SCR/$name/home" "$@" \
     -cpuprofile "$P/$name.cpu.prof" -memprofile "$P/$name.alloc.prof" -peakprofile "$P/$name.peak.prof" | tee "$P/$name.txt"
  if [[ "$mode" == unpack ]]; then
    diff -r "$EXP/addon/" "$SCR/$name/out/" > "$P/$name.diff" 2>&1 && echo "tree ✔" >> "$P/$name.txt" \
      || echo "tree ✘ ($(wc -l < "$P/$name.diff") diff lines, $P/$name.diff)" >> "$P/$name.txt"
  fi
  rm -rf "$SCR/$name"
}

echo "--- A. profiles of the CLI's code paths on the $S data"
run_profile unpack-gz unpack "$R:docker-gz" -out "$SCR/unpack-gz/out"
run_profile unpack-artifact unpack "$R:addonpkg-artifact" -out "$SCR/unpack-artifact/out"
run_profile build build "$EXP/rootfs/addon" -tag "$REG/profile-$S:v1"

echo "--- B. BenchmarkUnpackLarge (go test -c ./pkg/unpack/)"
if [[ -x "$PEERS_BIN/unpack.test" ]]; then
  (cd "$REPO_ROOT/pkg/unpack" && "$PEERS_BIN/unpack.test" -test.run '^$' -test.bench '^BenchmarkUnpackLarge$' \
     -test.benchtime "$BENCHTIME" -test.benchmem \
     -test.cpuprofile "$P/bench-unpack.cpu.prof" -test.memprofile "$P/bench-unpack.alloc.prof") 2>&1 | tee "$P/bench-unpack.txt" \
     || echo "(benchmark failed)" >> "$P/bench-unpack.txt"
else
  echo "(not run: pkg/unpack tests did not compile)" > "$P/bench-unpack.txt"
fi

{
  echo "Profiles taken $(date -u '+%Y-%m-%d %H:%M UTC') by \`bench/profile.sh\` (commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(git status --porcelain 2>/dev/null | wc -l) uncommitted paths; 1-min load average $(cut -d' ' -f1 /proc/loadavg) at the end). Each profiled process runs once, on the same machine as the bench; \`flat\` is time (or bytes allocated) in the function itself, \`cum\` includes its callees. Raw profiles: \`bench/.work/profile/*.prof\` (\`go tool pprof -http=: FILE\`)."
  echo
  echo "### \`addonpkg unpack $R:docker-gz -o DIR\` ($S)"
  echo
  echo "$(head -1 "$P/unpack-gz.txt"); $(grep -h "heap peak" "$P/unpack-gz.txt"); $(tail -1 "$P/unpack-gz.txt")."
  top "CPU, top $NODES by flat time:" "$P/unpack-gz.cpu.prof"
  top "CPU, top $NODES by cumulative time:" "$P/unpack-gz.cpu.prof" -cum
  top "Allocations (alloc_space), top $NODES:" "$P/unpack-gz.alloc.prof" -sample_index=alloc_space
  top "Heap in use at the GC before the largest heap seen (inuse_space), top $NODES:" "$P/unpack-gz.peak.prof" -sample_index=inuse_space
  echo
  echo "### \`addonpkg unpack $R:addonpkg-artifact -o DIR\` ($S)"
  echo
  echo "$(head -1 "$P/unpack-artifact.txt"); $(tail -1 "$P/unpack-artifact.txt")."
  top "CPU, top $NODES by flat time:" "$P/unpack-artifact.cpu.prof"
  echo
  echo "### \`addonpkg build \$EXP/rootfs/addon -t NAME\` ($S)"
  echo
  echo "$(head -1 "$P/build.txt"); $(grep -h "heap peak" "$P/build.txt")."
  top "CPU, top $NODES by flat time:" "$P/build.cpu.prof"
  top "CPU, top $NODES by cumulative time:" "$P/build.cpu.prof" -cum
  top "Allocations (alloc_space), top $NODES:" "$P/build.alloc.prof" -sample_index=alloc_space
  top "Heap in use at the GC before the largest heap seen (inuse_space), top $NODES:" "$P/build.peak.prof" -sample_index=inuse_space
  echo
  echo "### \`go test -bench BenchmarkUnpackLarge ./pkg/unpack/\` (in-memory image, 20,000 files; -benchtime $BENCHTIME)"
  echo
  echo "The library alone: pkg/unpack's own synthetic 4-layer image, already in memory (no registry, no HTTP, no writing of the tree)."
  echo
  echo '```'
  grep -E '^(Benchmark|cpu|\(not run|\(benchmark)' "$P/bench-unpack.txt" || true
  echo '```'
  if [[ -s "$P/bench-unpack.cpu.prof" ]]; then
    top "CPU, top $NODES by flat time:" "$P/bench-unpack.cpu.prof"
    top "Allocations (alloc_space), top $NODES:" "$P/bench-unpack.alloc.prof" -sample_index=alloc_space
  fi
} > "$P/summary.md"
rm -rf "$SCR"
echo "wrote $P/summary.md"

# refresh the report of the last run.sh (same path, same notes) with this profile
if [[ "${NO_DOC:-0}" != 1 && -f "$WORK_DIR/results/doc.path" ]]; then   # the last full run
  IFS=$'\t' read -r DOC notes < "$WORK_DIR/results/doc.path"
  "$PEERS_BIN/benchdoc" -in "$WORK_DIR/results" -profile "$P/summary.md" ${notes:+-notes "$notes"} > "$DOC.tmp" && mv "$DOC.tmp" "$DOC"
  echo "updated $DOC"
fi
