// Package labrun reads what one run of the perf lab wrote (bench-peers.sh):
// the data sets, the operations and every timed run, as report and
// benchdoc both turn them into markdown, and the few statistics and cells
// that the two reports show alike.
//
// Inputs (all in one directory, tab-separated, # lines and empty lines
// skipped):
//
//	datasets.tsv  size files addon_bytes gz_bytes raw_bytes artifact_bytes [addonpkg_artifact_bytes]
//	ops.tsv       size op category title check in_bytes (one row per size/op; last row wins)
//	runs.tsv      size op run wall_s rss_kb rc [load1]  (one row per timed run)
package labrun

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Key is one operation on one data set.
type Key struct{ Size, Op string }

// Op is what ops.tsv says of an operation on a data set.
type Op struct {
	Category, Title string
	// Check is the tree check: OK, FAIL..., or "-" or "" for none.
	Check string
	// InBytes is what the operation reads or sends, 0 when not known.
	InBytes float64
}

// Runs are the timed runs of an operation on a data set.
type Runs struct {
	// Wall (s) and RSS (peak, MiB) of the runs that exited 0.
	Wall, RSS []float64
	// Load is the 1-minute load average before each run, failed or not.
	Load []float64
	// N runs in all, Failed of them exited non-zero.
	N, Failed int
}

// Run is one run of the lab.
type Run struct {
	// Datasets are the rows of datasets.tsv, in order.
	Datasets [][]string
	// Sizes are the data sets' names, in the order they first appear.
	Sizes []string
	// Dataset is the last row of each data set.
	Dataset map[string][]string
	// AddonBytes is the final /addon bytes of each data set.
	AddonBytes map[string]float64
	// Ops are the operations, in the order they first appear in ops.tsv.
	Ops  []string
	Info map[Key]Op
	Runs map[Key]*Runs
}

// Load reads the lab's files in dir; a missing file reads as empty.
func Load(dir string) *Run {
	r := &Run{Dataset: map[string][]string{}, AddonBytes: map[string]float64{}, Info: map[Key]Op{}, Runs: map[Key]*Runs{}}
	r.loadDatasets(filepath.Join(dir, "datasets.tsv"))
	r.loadOps(filepath.Join(dir, "ops.tsv"))
	r.loadRuns(filepath.Join(dir, "runs.tsv"))
	return r
}

func (r *Run) loadDatasets(p string) {
	for _, row := range ReadTSV(p) {
		if len(row) < 6 {
			continue
		}
		if _, ok := r.Dataset[row[0]]; !ok {
			r.Sizes = append(r.Sizes, row[0])
		}
		r.Datasets = append(r.Datasets, row)
		r.Dataset[row[0]] = row
		r.AddonBytes[row[0]] = Num(row[2])
	}
}

func (r *Run) loadOps(p string) {
	seen := map[string]bool{}
	for _, row := range ReadTSV(p) {
		if len(row) < 6 {
			continue
		}
		r.Info[Key{row[0], row[1]}] = Op{Category: row[2], Title: row[3], Check: row[4], InBytes: Num(row[5])}
		if !seen[row[1]] {
			seen[row[1]] = true
			r.Ops = append(r.Ops, row[1])
		}
	}
}

func (r *Run) loadRuns(p string) {
	for _, row := range ReadTSV(p) {
		if len(row) < 6 {
			continue
		}
		k := Key{row[0], row[1]}
		if r.Runs[k] == nil {
			r.Runs[k] = &Runs{}
		}
		x := r.Runs[k]
		x.N++
		if len(row) >= 7 {
			x.Load = append(x.Load, Num(row[6]))
		}
		if row[5] != "0" {
			x.Failed++
			continue
		}
		x.Wall = append(x.Wall, Num(row[3]))
		x.RSS = append(x.RSS, Num(row[4])/1024)
	}
}

// Describe is what ops.tsv says of op for the first of sizes that has it:
// an operation's title can differ by data set (the adversarial inputs).
func (r *Run) Describe(op string, sizes []string) (Op, bool) {
	for _, s := range sizes {
		if i, ok := r.Info[Key{s, op}]; ok {
			return i, true
		}
	}
	return Op{}, false
}

// categoryRank orders the tables' rows: tools doing the same job sit
// together, whatever order bench-peers.sh ran them in.
var categoryRank = map[string]int{"extract": 0, "pull": 1, "push": 2, "floor": 3, "disk": 4}

// OpsByCategory is Ops grouped by category (stably, so that later rows,
// addonpkg's, stay next to their peers), unknown categories last; an
// operation's category is Describe's over sizes.
func (r *Run) OpsByCategory(sizes []string) []string {
	rank := func(op string) int {
		i, _ := r.Describe(op, sizes)
		if n, ok := categoryRank[i.Category]; ok {
			return n
		}
		return len(categoryRank)
	}
	ops := append([]string(nil), r.Ops...)
	sort.SliceStable(ops, func(a, b int) bool { return rank(ops[a]) < rank(ops[b]) })
	return ops
}

// ReadTSV reads the rows of a TSV file, nil when it cannot be read.
func ReadTSV(p string) [][]string {
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

// Num is a field as a number, 0 when it is none (an empty field).
func Num(s string) float64 { x, _ := strconv.ParseFloat(strings.TrimSpace(s), 64); return x }
