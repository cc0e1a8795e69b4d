// Command benchdoc writes docs/benchmarks.md from one perf-lab run: the machine, the
// exact commands, the medians of every operation, and addonpkg's ratios against the
// peers measured in the same run, checked against the performance targets.
//
// Inputs (all in -in DIR, written by bench-peers.sh and run.sh):
//
//	runs.tsv      size op run wall_s rss_kb rc load1   (one row per timed run)
//	ops.tsv       size op category title check in_bytes
//	datasets.tsv  size files addon_bytes gz_bytes raw_bytes artifact_bytes
//	cmds.tsv      op title command prep                (bash, as run)
//	meta.tsv      key value                            (machine, versions, settings)
//
// -profile FILE (optional) is the markdown summary bench/profile.sh writes; it becomes
// the "Where the time goes" section. -notes FILE (optional, hand-written markdown) is
// inserted verbatim after the ratio tables.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type key struct{ size, op string }

type opInfo struct {
	category, title, check string
}

type stat struct {
	wall, rss, load []float64
	n, failed       int
}

func readTSV(p string) [][]string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			rows = append(rows, strings.Split(line, "\t"))
		}
	}
	return rows
}

func num(s string) float64 { x, _ := strconv.ParseFloat(strings.TrimSpace(s), 64); return x }

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minmax(v []float64) (float64, float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

type lab struct {
	sizes      []string
	addonBytes map[string]float64
	files      map[string]string
	ds         map[string][]string
	ops        []string
	adv        []string // the adversarial inputs (bomb, huge): memory rows only
	info       map[key]opInfo
	st         map[key]*stat
	cmds       [][]string
	meta       map[string]string
	metaKeys   []string
}

// adversarial names the data sets of the memory rows that have no peer rows.
var adversarial = map[string]bool{"bomb": true, "huge": true}

// all is every data set: the sizes, then the adversarial inputs.
func (l *lab) all() []string { return append(append([]string(nil), l.sizes...), l.adv...) }

func load(in string) *lab {
	l := &lab{addonBytes: map[string]float64{}, files: map[string]string{}, ds: map[string][]string{},
		info: map[key]opInfo{}, st: map[key]*stat{}, meta: map[string]string{}}
	for _, r := range readTSV(filepath.Join(in, "datasets.tsv")) {
		if len(r) < 6 {
			continue
		}
		if _, ok := l.ds[r[0]]; !ok {
			if adversarial[r[0]] {
				l.adv = append(l.adv, r[0])
			} else {
				l.sizes = append(l.sizes, r[0])
			}
		}
		l.ds[r[0]] = r
		l.addonBytes[r[0]] = num(r[2])
		l.files[r[0]] = r[1]
	}
	seen := map[string]bool{}
	for _, r := range readTSV(filepath.Join(in, "ops.tsv")) {
		if len(r) < 6 {
			continue
		}
		l.info[key{r[0], r[1]}] = opInfo{category: r[2], title: r[3], check: r[4]}
		if !seen[r[1]] {
			seen[r[1]] = true
			l.ops = append(l.ops, r[1])
		}
	}
	for _, r := range readTSV(filepath.Join(in, "runs.tsv")) {
		if len(r) < 6 {
			continue
		}
		k := key{r[0], r[1]}
		if l.st[k] == nil {
			l.st[k] = &stat{}
		}
		x := l.st[k]
		x.n++
		if len(r) >= 7 {
			x.load = append(x.load, num(r[6]))
		}
		if r[5] != "0" {
			x.failed++
			continue
		}
		x.wall = append(x.wall, num(r[3]))
		x.rss = append(x.rss, num(r[4])/1024)
	}
	l.cmds = readTSV(filepath.Join(in, "cmds.tsv"))
	for _, r := range readTSV(filepath.Join(in, "meta.tsv")) {
		if len(r) < 2 {
			continue
		}
		if _, ok := l.meta[r[0]]; !ok {
			l.metaKeys = append(l.metaKeys, r[0])
		}
		l.meta[r[0]] = r[1]
	}
	return l
}

// med returns the median wall time of (size, op) over its successful runs, ok=false
// when there is none.
func (l *lab) med(size, op string) (float64, bool) {
	x := l.st[key{size, op}]
	if x == nil || len(x.wall) == 0 {
		return 0, false
	}
	return median(x.wall), true
}

func (l *lab) checkMark(size, op string) string {
	c := l.info[key{size, op}].check
	switch {
	case c == "OK":
		return " ✔"
	case strings.HasPrefix(c, "FAIL"):
		return " ✘"
	}
	return ""
}

func (l *lab) treeOK(size, op string) bool {
	c := l.info[key{size, op}].check
	return c == "OK" || c == "-" || c == ""
}

// spread is "median s (min–max)" of (size, op), or "failed".
func (l *lab) spread(size, op string) string {
	x := l.st[key{size, op}]
	if x == nil {
		return "–"
	}
	if len(x.wall) == 0 {
		return fmt.Sprintf("failed (%d/%d runs)", x.failed, x.n)
	}
	lo, hi := minmax(x.wall)
	return fmt.Sprintf("%.2f s (%.2f–%.2f)", median(x.wall), lo, hi)
}

func secs(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.2f s", x)
}

// verdict of a "ratio <= target" goal.
func verdict(a, b, target float64) string {
	r := a / b
	if r <= target {
		return fmt.Sprintf("**MET** (%.2fx ≤ %.2fx)", r, target)
	}
	need := b * target
	return fmt.Sprintf("**MISSED** by %.2fx (%.2fx > %.2fx): needs ≤ %.2f s, is %.2f s (+%.0f%%)",
		r-target, r, target, need, a, (a/need-1)*100)
}

type goal struct {
	name, size, ours, peer string
	target                 float64
}

func main() {
	inDir := flag.String("in", ".", "directory with the run's TSV files")
	profile := flag.String("profile", "", "markdown summary from bench/profile.sh (optional)")
	notes := flag.String("notes", "", "hand-written notes appended at the end (optional)")
	flag.Parse()
	in := *inDir
	l := load(in)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	m := func(k string) string {
		if v, ok := l.meta[k]; ok && v != "" {
			return v
		}
		return "?"
	}

	p("# addonpkg benchmarks\n\n")
	p("<!-- generated by bench/run.sh (bench/tools/benchdoc) from bench id %s; edit bench/benchmarks-notes.md, not this file -->\n\n", m("bench id"))
	p("addonpkg against the peer tools on the same add-on images, measured in **one run** of the perf lab in [`bench/`](../bench/README.md) (so every ratio below compares numbers taken minutes apart on the same machine, same registry, same page cache). Reproduce with `bench/run.sh`; a quick check (written to `bench/.work/benchmarks.md`, not here) with `SIZES=small RUNS=1 bench/run.sh`.\n\n")

	// ------------------------------------------------------------ machine
	p("## Machine and run\n\n")
	p("| | |\n|---|---|\n")
	for _, k := range l.metaKeys {
		if !strings.Contains(k, "_") { // registry_addr, addonpkg_bin: for the text below
			p("| %s | %s |\n", k, l.meta[k])
		}
	}
	var loads []float64
	for _, x := range l.st {
		loads = append(loads, x.load...)
	}
	if len(loads) > 0 {
		lo, hi := minmax(loads)
		p("| 1-min load average before each timed run | mean %.1f, min %.1f, max %.1f (on %s cores) |\n", mean(loads), lo, hi, m("cores"))
	}
	p("\nEach operation runs as a whole process tree under `/usr/bin/time -f '%%e %%M'`: wall seconds and peak RSS of the largest single process of the tree (for a pipeline that is not the sum). Medians over the runs. Every run gets a fresh output directory and a fresh `$TMPDIR` on tmpfs (created and deleted untimed); every addonpkg command gets a fresh, empty store (`ADDONPKG_HOME=$TMPDIR/home`); every push goes to a new repository, so all blobs are really uploaded. The registry is the Debian CNCF Distribution on loopback, sharing the cores with the client.\n\n")
	p("**The machine is shared** with other work (builds and tests of other sessions ran during the bench; see the load average above and per row below). Absolute times are therefore noisy; ratios are from the same run, but a row and its peer did not run at the same instant, so a ratio can still be off when the load changed in between. Compare with the min–max columns before trusting a close call.\n\n")

	// ------------------------------------------------------------ data sets
	p("## Data sets\n\n")
	p("Generated by `bench/tools/gen` (deterministic). The image has 5 layers: a base layer with 100 MiB of incompressible junk outside `/addon`, two content layers, a patch layer with file, directory and opaque whiteouts, and a meta layer. `artifact` is the final `/addon` tree as one tar+gzip layer made by `oras push DIR`; `addonpkg-artifact` is the same tree built by `addonpkg build --format artifact` (the oras-made one is not a valid add-on artifact: its config lacks `specVersion`, `kind`, `identity`, `inventory`, and its tar has an `addon/` prefix, so addonpkg refuses it as spec/addon-v1.md 6.5 requires; the `addonpkg-unpack-artifact` row reads `addonpkg-artifact`, the `oras pull` rows read `artifact`). Every extracted tree is compared with `diff -r` against an independent flatten of the layer trees (`bench/expected.sh`).\n\n")
	p("| size | /addon files | /addon MB (MiB) | docker-gz image MB | docker-raw image MB | artifact layer MB (oras) | artifact layer MB (addonpkg) |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range l.sizes {
		r := l.ds[s]
		ap := "–"
		if len(r) >= 7 && r[6] != "" {
			ap = fmt.Sprintf("%.2f", num(r[6])/1e6)
		}
		p("| %s | %s | %.2f (%.1f) | %.1f | %.1f | %.2f | %s |\n", s, r[1], num(r[2])/1e6, num(r[2])/(1<<20), num(r[3])/1e6, num(r[4])/1e6, num(r[5])/1e6, ap)
	}
	p("\n")
	if len(l.adv) > 0 {
		p("Adversarial inputs of the memory rows (`bench/tools/adversarial`, OCI layouts, addonpkg rows only): `bomb` is one gzip layer with `addon/a.yaml` and 40 files of 128 MiB of zeros (every mode must refuse it at the 512 MiB add-on size limit; `build` reads the same files, sparse, from a directory); `huge` is a 1 GiB add-on of 16,384 ConfigMaps of 64 KiB in 4 gzip layers, unpacked with `--max-addon-bytes 2147483648` (`build` has no limit flags and refuses it at its 512 MiB default).\n\n")
		p("| input | files | add-on MB (MiB) | layout layers MB |\n|---|---:|---:|---:|\n")
		for _, s := range l.adv {
			r := l.ds[s]
			p("| %s | %s | %.0f (%.0f) | %.1f |\n", s, r[1], num(r[2])/1e6, num(r[2])/(1<<20), num(r[3])/1e6)
		}
		p("\n")
	}

	// ------------------------------------------------------------ correctness of addonpkg rows
	var bad []string
	for _, s := range l.all() {
		for _, op := range l.ops {
			if !strings.HasPrefix(op, "addonpkg-") {
				continue
			}
			k := key{s, op}
			x := l.st[k]
			if x == nil {
				continue
			}
			if !l.treeOK(s, op) && x.failed == 0 {
				bad = append(bad, fmt.Sprintf("%s `%s`: tree check %s", s, op, l.info[k].check))
			}
			if x.failed > 0 {
				msg := ""
				if b, err := os.ReadFile(filepath.Join(in, "logs", s+"-"+op+"-1.log")); err == nil {
					if line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n"); line != "" {
						msg = ": `" + strings.ReplaceAll(line, "`", "'") + "`"
					}
				}
				bad = append(bad, fmt.Sprintf("%s `%s`: %d of %d runs failed%s", s, op, x.failed, x.n, msg))
			}
		}
	}
	p("## Correctness of the addonpkg rows\n\n")
	if len(bad) == 0 {
		p("Every addonpkg run exited 0, and every addonpkg tree checked (`-o DIR` rows, first run of each) equals the expected `/addon` tree (✔ below).\n\n")
	} else {
		p("**Failures:**\n\n")
		for _, b := range bad {
			p("- %s\n", b)
		}
		p("\n")
	}

	// ------------------------------------------------------------ targets
	p("## Targets\n\n")
	p("Ratio = addonpkg median wall / peer median wall, same run; times are median (min–max) over the runs. A target is MET when the ratio is at or below it and the addonpkg row succeeded with a correct tree. *Best case* = addonpkg's fastest run / the peer's slowest run (for RSS: the smallest peak over the limit): a miss that survives it is not an artefact of the machine's load.\n\n")
	goals := []goal{
		{"unpack large gzip image from the registry ≤ 0.45x `crane export \\| tar -x addon/`", "large", "addonpkg-unpack-gz", "crane-export-gz", 0.45},
		{"unpack large gzip image from the registry ≤ 0.7x the `gzip -dc \\| tar -x` floor (only addon/)", "large", "addonpkg-unpack-gz", "floor-gunzip-untar-addon", 0.7},
		{"unpack medium gzip image from the registry ≤ 0.6x `crane export \\| tar -x addon/`", "medium", "addonpkg-unpack-gz", "crane-export-gz", 0.6},
		{"unpack large artifact from the registry ≤ 0.7x `oras pull`", "large", "addonpkg-unpack-artifact", "oras-pull-artifact", 0.7},
		{"`addonpkg unpack REF` to stdout (large) ≤ 0.4x `crane export \\| tar -x addon/`", "large", "addonpkg-unpack-stdout", "crane-export-gz", 0.4},
		{"`addonpkg build` of the large add-on ≤ 0.5x `oras push`", "large", "addonpkg-build", "oras-push-artifact", 0.5},
		{"`addonpkg build && addonpkg push` of the large add-on ≤ 0.3x `oras push`", "large", "addonpkg-build-push", "oras-push-artifact", 0.3},
		{"`addonpkg push` (large) no slower than `crane push`", "large", "addonpkg-push", "crane-push-gz", 1.0},
		{"`addonpkg push` (medium) no slower than `crane push`", "medium", "addonpkg-push", "crane-push-gz", 1.0},
		{"`addonpkg push` (small) no slower than `crane push`", "small", "addonpkg-push", "crane-push-gz", 1.0},
	}
	p("| target | size | addonpkg | peer | ratio | best case | verdict |\n|---|---|---:|---:|---:|---:|---|\n")
	met, total := 0, 0
	for _, g := range goals {
		a, okA := l.med(g.size, g.ours)
		b, okB := l.med(g.size, g.peer)
		if l.st[key{g.size, g.ours}] == nil && l.st[key{g.size, g.peer}] == nil {
			continue // size or op not in this run
		}
		total++
		v := ""
		switch {
		case !okA:
			v = "**MISSED**: addonpkg row failed or missing"
		case !okB:
			v = "not measured: peer row failed or missing"
		case !l.treeOK(g.size, g.ours):
			v = "**MISSED**: tree check failed (" + l.info[key{g.size, g.ours}].check + ")"
		default:
			v = verdict(a, b, g.target)
		}
		if strings.HasPrefix(v, "**MET**") {
			met++
		}
		ratio, best := "–", "–"
		if okA && okB {
			ratio = fmt.Sprintf("%.2fx", a/b)
			aLo, _ := minmax(l.st[key{g.size, g.ours}].wall)
			_, bHi := minmax(l.st[key{g.size, g.peer}].wall)
			best = fmt.Sprintf("%.2fx", aLo/bHi)
			if strings.HasPrefix(v, "**MISSED**") {
				if aLo/bHi > g.target {
					v += "; missed in the best case too"
				} else {
					v += "; met in the best case (noise)"
				}
			}
		}
		p("| %s | %s | `%s` %s | `%s` %s | %s | %s | %s |\n", g.name, g.size, g.ours, l.spread(g.size, g.ours), g.peer, l.spread(g.size, g.peer), ratio, best, v)
	}
	p("\n%d of %d time target rows above MET.", met, total)
	p("\n\nNotes on the comparisons: `crane push` uploads the 5-layer docker-gz image (including the 100 MiB junk layer), `addonpkg push` uploads what `addonpkg build` made of `/addon` (one layer, the size of the artifact layer), so the push rows compare tools doing their own job, not the same bytes. `addonpkg build` writes to the local store and does not upload; `oras push DIR` tars, compresses *and* uploads (loopback), so `addonpkg build DIR -t REF && addonpkg push REF` is listed as well.")

	// ------------------------------------------------------------ memory
	memMet, memTotal := l.memory(p)
	p("\n%d of %d memory rows MET.\n\n", memMet, memTotal)

	// ------------------------------------------------------------ ratio matrix
	p("## addonpkg vs each peer\n\n")
	p("Ratio of medians, same run (< 1 = addonpkg faster). Rows: addonpkg operations; columns: peer operations.\n\n")
	type col struct{ id, label string }
	extractCols := []col{
		{"crane-export-gz", "crane export gz"}, {"crane-export-raw", "crane export raw"},
		{"umoci-unpack-gz", "umoci unpack gz"}, {"umoci-unpack-raw", "umoci unpack raw"},
		{"oras-pull-artifact", "oras pull artifact"}, {"oras-pull-artifact-layout", "oras pull layout"},
		{"floor-gunzip-untar", "floor gunzip\\|untar all"}, {"floor-gunzip-untar-addon", "floor gunzip\\|untar addon/"},
	}
	pushCols := []col{{"crane-push-gz", "crane push"}, {"skopeo-push-gz", "skopeo copy (push)"}, {"oras-push-artifact", "oras push DIR"}}
	matrix := func(cols []col, rows []string) {
		p("| size | addonpkg op | median |")
		for _, c := range cols {
			p(" %s |", c.label)
		}
		p("\n|---|---|---:|")
		for range cols {
			p("---:|")
		}
		p("\n")
		for _, s := range l.sizes {
			for _, op := range rows {
				a, ok := l.med(s, op)
				if l.st[key{s, op}] == nil {
					continue
				}
				p("| %s | `%s`%s | %s |", s, op, l.checkMark(s, op), secs(orNaN(a, ok)))
				for _, c := range cols {
					b, okB := l.med(s, c.id)
					if !ok || !okB || b == 0 {
						p(" – |")
						continue
					}
					p(" %.2fx |", a/b)
				}
				p("\n")
			}
		}
		p("\n")
	}
	var extractRows, pushRows []string
	for _, op := range l.ops {
		switch {
		case strings.HasPrefix(op, "addonpkg-unpack"):
			extractRows = append(extractRows, op)
		case strings.HasPrefix(op, "addonpkg-"):
			pushRows = append(pushRows, op)
		}
	}
	if len(extractRows) > 0 {
		p("### Unpack\n\n")
		matrix(extractCols, extractRows)
	}
	if len(pushRows) > 0 {
		p("### Build and push\n\n")
		matrix(pushCols, pushRows)
	}

	// ------------------------------------------------------------ notes (hand-written)
	if *notes != "" {
		if b, err := os.ReadFile(*notes); err == nil {
			w.Write(b)
			p("\n")
		}
	}

	// ------------------------------------------------------------ medians
	p("## All medians: wall time / peak RSS\n\n")
	p("Median wall s / median peak RSS MiB per size. ✔ = extracted tree equals the expected `/addon` tree, ✘ = differs (the `floor-gunzip-untar-addon` row ignores whiteouts on purpose: it is the negative control and must be ✘).\n\n")
	p("| category | id | operation |")
	for _, s := range l.all() {
		p(" %s |", s)
	}
	p("\n|---|---|---|")
	for range l.all() {
		p("---:|")
	}
	p("\n")
	rank := map[string]int{"extract": 0, "pull": 1, "push": 2, "floor": 3, "disk": 4}
	ops := append([]string(nil), l.ops...)
	catOf := func(op string) (string, string) {
		for _, s := range l.all() {
			if i, ok := l.info[key{s, op}]; ok {
				return i.category, i.title
			}
		}
		return "", op
	}
	sort.SliceStable(ops, func(i, j int) bool {
		ci, _ := catOf(ops[i])
		cj, _ := catOf(ops[j])
		return rank[ci] < rank[cj]
	})
	for _, op := range ops {
		c, t := catOf(op)
		id := "`" + op + "`"
		if strings.HasPrefix(op, "addonpkg-") {
			id = "**" + id + "**"
		}
		p("| %s | %s | %s |", c, id, t)
		for _, s := range l.all() {
			x := l.st[key{s, op}]
			switch {
			case x == nil:
				p(" – |")
			case len(x.wall) == 0:
				p(" FAILED (%d/%d) |", x.failed, x.n)
			default:
				f := ""
				if x.failed > 0 {
					f = fmt.Sprintf(" (%d/%d failed)", x.failed, x.n)
				}
				p(" %.2f s / %.0f%s%s |", median(x.wall), median(x.rss), l.checkMark(s, op), f)
			}
		}
		p("\n")
	}
	p("\n")

	// ------------------------------------------------------------ profile
	p("## Where the time goes\n\n")
	if b, err := os.ReadFile(*profile); *profile != "" && err == nil {
		w.Write(b)
		p("\n")
	} else {
		p("No profile in this run: `bench/profile.sh` (after `bench/run.sh`, or with the registry and images in place) adds CPU and allocation profiles of `addonpkg unpack` and `addonpkg build` on the large data set here.\n\n")
	}

	// ------------------------------------------------------------ commands
	p("## Exact commands\n\n")
	p("Each is a bash snippet run as `bash -c \"set -eo pipefail; CMD\"` under `/usr/bin/time` (prep: untimed, before each run). Variables: `$R` = `%s/addon-<size>`, `$REG` = `%s`, `$W` = `bench/.work/<size>`, `$EXP` = `$W/expected` (`$EXP/rootfs/addon` is the expected `/addon` tree, a plain directory), `$OUT` and `$TMPDIR` = fresh directories on tmpfs, `$GZ_BLOBS`/`$RAW_BLOBS` = the layer blobs of the OCI layouts, `$ADDONPKG` = `%s`, `$CRANE`/`$ORAS` = `bench/.bin/{crane,oras}`, `$BENCH_ID`/`$RUN` make each push repository new.\n\n", m("registry_addr"), m("registry_addr"), m("addonpkg_bin"))
	for _, r := range l.cmds {
		if len(r) < 3 {
			continue
		}
		p("- `%s` (%s):\n  `%s`", r[0], r[1], strings.TrimSpace(r[2]))
		if len(r) >= 4 && strings.TrimSpace(r[3]) != "" {
			p("\n  prep: `%s`", strings.TrimSpace(r[3]))
		}
		p("\n")
	}
	p("\n")

	// ------------------------------------------------------------ detail
	p("## Detail\n\n")
	p("| size | id | runs | median s | min–max s | peak RSS MiB median / max | mean load | tree check |\n|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, s := range l.all() {
		for _, op := range ops {
			x := l.st[key{s, op}]
			if x == nil {
				continue
			}
			chk := l.info[key{s, op}].check
			if chk == "-" || chk == "" {
				chk = "n/a"
			}
			runs := fmt.Sprint(x.n)
			if x.failed > 0 {
				runs = fmt.Sprintf("%d (%d failed)", x.n, x.failed)
			}
			if len(x.wall) == 0 {
				p("| %s | `%s` | %s | FAILED | | | %.1f | %s |\n", s, op, runs, mean(x.load), chk)
				continue
			}
			lo, hi := minmax(x.wall)
			_, rhi := minmax(x.rss)
			p("| %s | `%s` | %s | %.2f | %.2f–%.2f | %.0f / %.0f | %.1f | %s |\n", s, op, runs, median(x.wall), lo, hi, median(x.rss), rhi, mean(x.load), chk)
		}
	}
}

// memLimit is the peak RSS limit (MiB) of an addonpkg row of data set s, by mode:
// -o holds the tree's shape, not its bytes (96 MiB whatever the input); stdout holds
// the add-on (its size + 48 MiB); build holds it too (its size + 64 MiB). What an
// input is refused at bounds what a mode may hold of it: the bomb is refused at the
// 512 MiB add-on size limit with its large files on disk, and build refuses the huge
// add-on once it has read 512 MiB of it.
func (l *lab) memLimit(s, mode string) (float64, string) {
	const limitMiB = 512
	addon := l.addonBytes[s] / (1 << 20)
	switch {
	case mode == "-o":
		return 96, "constant"
	case s == "bomb" && mode == "stdout":
		return 96, "refused at the limit, files over 1 MiB wait on disk"
	case s == "bomb":
		return 96, "refused before any file is read"
	case mode == "stdout":
		return addon + 48, "add-on + 48 MiB"
	case s == "huge":
		return limitMiB + 64, fmt.Sprintf("the %d MiB read before the refusal + 64 MiB", limitMiB)
	}
	return addon + 64, "add-on + 64 MiB"
}

// memory writes the memory rows: peak RSS (max over runs) of every addonpkg unpack
// and build row, per mode and data set, against memLimit.
func (l *lab) memory(p func(string, ...any)) (met, total int) {
	p("\n\n## Memory\n\n")
	p("Peak RSS of the addonpkg process, max over the runs (median in brackets), against the limits of issue 16: `unpack -o` ≤ 96 MiB whatever the input; `unpack` to stdout ≤ the add-on's size + 48 MiB; `build` ≤ the add-on's size + 64 MiB. For comparison, `addonpkg version` alone peaks at about 30 MiB (the binary's own pages).\n\n")
	p("| input | mode | row | peak RSS max (median) | limit | verdict |\n|---|---|---|---:|---|---|\n")
	for _, s := range l.all() {
		for _, op := range l.ops {
			mode := ""
			switch {
			case op == "addonpkg-unpack-stdout":
				mode = "stdout"
			case strings.HasPrefix(op, "addonpkg-unpack"):
				mode = "-o"
			case op == "addonpkg-build":
				mode = "build"
			default:
				continue
			}
			x := l.st[key{s, op}]
			if x == nil {
				continue
			}
			total++
			limit, what := l.memLimit(s, mode)
			if len(x.rss) == 0 {
				p("| %s | %s | `%s` | – | %s | **MISSED**: no successful run |\n", s, mode, op, what)
				continue
			}
			_, hi := minmax(x.rss)
			v := fmt.Sprintf("**MET** (%.2fx the limit)", hi/limit)
			if hi > limit {
				v = fmt.Sprintf("**MISSED** by %.0f MiB (%.2fx the limit)", hi-limit, hi/limit)
			} else {
				met++
			}
			p("| %s | %s | `%s` | %.0f MiB (%.0f) | %.0f MiB (%s) | %s |\n", s, mode, op, hi, median(x.rss), limit, what, v)
		}
	}
	return met, total
}

func orNaN(x float64, ok bool) float64 {
	if !ok {
		return math.NaN()
	}
	return x
}
