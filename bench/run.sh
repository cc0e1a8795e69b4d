#!/usr/bin/env bash
# bench/run.sh: the whole performance lab in one go, addonpkg and the peers in ONE run, so
# every ratio in docs/benchmarks.md compares numbers from the same run.
#
#   1. build addonpkg from this checkout (go build -o $ADDONPKG_BIN ./cmd/addonpkg)
#   2. setup-peers.sh: crane/oras via `go install` into bench/.bin; umoci, skopeo,
#      docker-registry via apt only when root (otherwise they must be installed)
#   3. start the loopback registry (registry.sh), build + push the images (make-images.sh)
#   4. bench-peers.sh with ADDONPKG set: every peer row and every addonpkg row
#   5. (PROFILE=1) profile.sh: CPU/alloc profiles of addonpkg unpack/build on the large data
#   6. stop the registry, write the report (tools/benchdoc) to $DOC
#
# Env (all optional):
#   SIZES ("small medium large")  RUNS (5)  RUNS_LARGE (3)  OPS (regex on op ids, default all)
#   ADDONPKG=path    use this binary instead of building one (no build step)
#   ADDONPKG_BIN     where to build addonpkg (default bench/.bin/addonpkg: a private copy,
#                    so a `make build` elsewhere during the run cannot swap the binary)
#   SETUP=0          skip setup-peers.sh      PROFILE=1   also run profile.sh
#   BUILD_NOTE       free text added to the report's addonpkg line (e.g. a local patch)
#   DOC              report path; default docs/benchmarks.md when all three sizes ran,
#                    else bench/.work/benchmarks.md (a quick run never overwrites the doc;
#                    its raw data goes to bench/.work/results-quick, not .../results)
#   REGISTRY_PORT (5055), WORK_DIR, SCRATCH_DIR, PEERS_BIN: see README.md
#
#   SIZES=small RUNS=1 bench/run.sh                          # quick plumbing check, ~1 min
#   SIZES="small medium large" RUNS=3 RUNS_LARGE=3 bench/run.sh   # the documented run
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"
cd "$REPO_ROOT"

export SIZES RUNS="${RUNS:-5}" RUNS_LARGE="${RUNS_LARGE:-3}"
export BENCH_ID="${BENCH_ID:-$(date +%s)-$$}"
full=1
for s in small medium large; do [[ " $SIZES " == *" $s "* ]] || full=0; done
# a partial (quick) run keeps its raw data apart, so it never replaces a full run's
if ((full)); then TSV="${OUT_TSV_DIR:-$WORK_DIR/results}"; else TSV="${OUT_TSV_DIR:-$WORK_DIR/results-quick}"; fi
export OUT_TSV_DIR="$TSV"
if ((full)); then export RESULTS="${RESULTS:-$WORK_DIR/results.md}"; else export RESULTS="${RESULTS:-$WORK_DIR/results-quick.md}"; fi
if [[ -z "${DOC:-}" ]]; then
  if ((full)); then DOC="$REPO_ROOT/docs/benchmarks.md"; else DOC="$WORK_DIR/benchmarks.md"; fi
fi
started="$(date -u '+%Y-%m-%d %H:%M UTC')"

# 1. addonpkg
# others may commit while the bench runs: record the checkout as it was built
built_from="commit $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), $(git -C "$REPO_ROOT" status --porcelain 2>/dev/null | wc -l) uncommitted paths in the work tree"
if [[ -z "${ADDONPKG:-}" ]]; then
  ADDONPKG="${ADDONPKG_BIN:-$PEERS_BIN/addonpkg}"
  version="$(git -C "$REPO_ROOT" describe --tags --always --dirty 2>/dev/null || echo dev)"
  echo "--- go build -o $ADDONPKG ./cmd/addonpkg ($version)"
  mkdir -p "$(dirname "$ADDONPKG")"
  "$GO" build -ldflags "-X main.version=$version" -o "$ADDONPKG" ./cmd/addonpkg
fi
ADDONPKG="$(cd "$(dirname "$ADDONPKG")" && pwd)/$(basename "$ADDONPKG")"
export ADDONPKG
# the profiler and the pkg/unpack test binary, from the same checkout as addonpkg
if [[ "${PROFILE:-0}" == 1 ]]; then PROFILE_BUILD_ONLY=1 "$HERE/profile.sh"; fi

# 2. peers
if [[ "${SETUP:-1}" == 1 ]]; then PEERS_BIN="$PEERS_BIN" "$HERE/setup-peers.sh"; fi
CRANE="$(_tool crane)" ORAS="$(_tool oras)"; export CRANE ORAS
UMOCI="$(command -v umoci || echo umoci-not-found)" SKOPEO="$(command -v skopeo || echo skopeo-not-found)"; export UMOCI SKOPEO
build_tools

# 3. registry + images (the registry's storage is a temp dir: images are pushed again each run)
"$HERE/registry.sh" start
trap '"$HERE/registry.sh" stop' EXIT
"$HERE/make-images.sh"

# 4. one run: peers and addonpkg
"$HERE/bench-peers.sh"

# 5. profiles (optional; needs the registry)
profile_md=""
if [[ "${PROFILE:-0}" == 1 ]]; then
  PROFILE_PREBUILT=1 NO_DOC=1 "$HERE/profile.sh" && profile_md="$WORK_DIR/profile/summary.md"
elif [[ -f "$WORK_DIR/profile/summary.md" ]]; then
  profile_md="$WORK_DIR/profile/summary.md"   # from an earlier profile.sh; it says when
fi

# 6. machine and run record, then the report
{
  printf 'date\t%s (start) – %s (end)\n' "$started" "$(date -u '+%Y-%m-%d %H:%M UTC')"
  printf 'bench id\t%s\n' "$BENCH_ID"
  printf 'cores\t%s\n' "$(nproc)"
  printf 'CPU\t%s\n' "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  printf 'memory\t%s\n' "$(awk '/MemTotal/{printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  printf 'kernel\t%s\n' "$(uname -r)"
  printf 'OS\t%s\n' "$(. /etc/os-release; echo "$PRETTY_NAME")"
  printf 'scratch\t%s\n' "$(df -hT "${SCRATCH_DIR:-/dev/shm}" 2>/dev/null | awk 'NR==2{print $1" ("$2")"}') for outputs and TMPDIR; -disk rows on $(df -hT "$WORK_DIR" | awk 'NR==2{print $2}')"
  printf 'addonpkg\t%s, built from %s%s\n' "$("$ADDONPKG" --version 2>/dev/null | awk 'NR==1{print $2}')" "$built_from" "${BUILD_NOTE:+; $BUILD_NOTE}"
  printf 'peers\tcrane %s · oras %s · %s · %s\n' "$("$CRANE" version 2>&1)" "$("$ORAS" version 2>&1 | awk '/Version/{print $2}')" "$("$UMOCI" --version)" "$("$SKOPEO" --version)"
  printf 'registry\t%s on http://%s (loopback, filesystem storage in a temp dir)\n' "$(/usr/bin/docker-registry --version 2>&1 | awk '{print $2, $3}')" "$REG"
  printf 'floors\tgzip %s · GNU tar %s\n' "$(gzip --version | awk 'NR==1{print $2}')" "$(tar --version | awk 'NR==1{print $4}')"
  printf 'go\t%s\n' "$("$GO" version | awk '{print $3}')"
  printf 'runs\t%s per operation (%s for large), median reported; sizes: %s\n' "$RUNS" "$RUNS_LARGE" "$SIZES"
  printf 'registry_addr\t%s\n' "$REG"
  printf 'addonpkg_bin\t%s\n' "${ADDONPKG#"$REPO_ROOT"/}"
} > "$TSV/meta.tsv"
notes="$HERE/benchmarks-notes.md"; ((full)) || notes=""
mkdir -p "$(dirname "$DOC")"
"$PEERS_BIN/benchdoc" -in "$TSV" ${profile_md:+-profile "$profile_md"} ${notes:+-notes "$notes"} > "$DOC.tmp"
mv "$DOC.tmp" "$DOC"
printf '%s\t%s\n' "$DOC" "$notes" > "$TSV/doc.path"   # profile.sh refreshes the same report
echo "wrote $DOC (lab report: $RESULTS, raw data: $TSV)"
