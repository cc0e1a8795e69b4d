package render

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/types"
)

// kustomize warns by printing: the deprecated fields of a kustomization
// go to os.Stderr (fmt.Fprintf in its target loader), other warnings to
// the standard logger. A library must not write to its caller's
// terminal, so a render captures both and returns them as
// Result.Warnings, one line each.

// kustomizationPrints reports whether kustomize may print while it
// renders the kustomization b: it has a deprecated field (vars among
// them, whose expansion logs too) or sortOptions, or does not parse.
// Only then does a render swap os.Stderr and the standard logger, which
// are the whole process's: a tree without such a kustomization leaves
// both alone, so the caller's own goroutines keep their output. (Remote
// resources, whose git fetch logs, are captured by the caller's choice.)
func kustomizationPrints(b []byte) bool {
	var k types.Kustomization
	if k.Unmarshal(b) != nil {
		return true
	}
	msgs := k.CheckDeprecatedFields()
	return msgs != nil && len(*msgs) > 0 || k.SortOptions != nil
}

// captureOutput runs f with os.Stderr and the standard logger writing to
// a pipe, and returns the lines written. It runs under kustomizeMu, so
// no two renders swap os.Stderr at once; other goroutines that write to
// os.Stderr meanwhile have their lines returned too, which is why the
// window is only kustomize's run.
func captureOutput(f func() error) (lines []string, err error) {
	r, w, perr := os.Pipe()
	if perr != nil {
		return nil, f() // no capture: kustomize prints as it always did
	}
	var (
		buf bytes.Buffer
		wg  sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&buf, io.LimitReader(r, 1<<20))
		_, _ = io.Copy(io.Discard, r) // never block kustomize
	}()
	stderr, logOut, logFlags := os.Stderr, log.Writer(), log.Flags()
	os.Stderr = w
	log.SetOutput(w)
	log.SetFlags(0)
	defer func() {
		os.Stderr = stderr
		log.SetOutput(logOut)
		log.SetFlags(logFlags)
		w.Close()
		wg.Wait()
		r.Close()
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				lines = append(lines, l)
			}
		}
	}()
	return nil, f()
}

// kustomizeWarnings turns what kustomize printed into warnings. The
// deprecated fields are named with the kustomization that has them
// (files, the kustomizations kustomize read, in order), which kustomize's
// own line leaves out; anything else it printed is kept as it said it.
func kustomizeWarnings(fsys treeFS, files []string, printed []string) []string {
	var out []string
	said := map[string]bool{}
	for _, f := range files {
		b, err := fsys.ReadFile(f)
		if err != nil {
			continue
		}
		var k types.Kustomization
		if k.Unmarshal(b) != nil {
			continue
		}
		msgs := k.CheckDeprecatedFields()
		if msgs == nil {
			continue
		}
		for _, m := range *msgs {
			said[m] = true
			out = append(out, rel(f)+": "+warningText(m))
		}
	}
	for _, l := range printed {
		if !said[l] {
			out = append(out, "kustomize: "+warningText(l))
		}
	}
	return slices.Compact(out)
}

// warningText drops kustomize's "# Warning: " prefix: the caller says
// it is a warning its own way.
func warningText(s string) string {
	s = strings.TrimPrefix(s, "# ")
	return strings.TrimSpace(strings.TrimPrefix(s, "Warning: "))
}
