package labrun

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Median of v; NaN when v is empty, so that a missing number never reads
// as a measured 0.
func Median(v []float64) float64 {
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

// MinMax of v; NaN, NaN when v is empty.
func MinMax(v []float64) (float64, float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// Mean of v; NaN when v is empty.
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// Mark is the tree check as the tables' marks: " ✔" for a tree equal to
// the expected one, " ✘" for one that differs, nothing when not checked.
func (o Op) Mark() string {
	switch {
	case o.Check == "OK":
		return " ✔"
	case strings.HasPrefix(o.Check, "FAIL"):
		return " ✘"
	}
	return ""
}

// CheckCell is the tree check as a detail table's cell.
func (o Op) CheckCell() string {
	if o.Check == "-" || o.Check == "" {
		return "n/a"
	}
	return o.Check
}

// Count is the number of runs as a detail table's cell, with the failed
// ones.
func (x *Runs) Count() string {
	if x.Failed > 0 {
		return fmt.Sprintf("%d (%d failed)", x.N, x.Failed)
	}
	return fmt.Sprint(x.N)
}
