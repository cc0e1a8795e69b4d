package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

const conformanceVectors = "../../spec/conformance/vectors"

// knownFailures are vectors addonpkg fails on this branch, each with the
// change that makes it pass. The test fails when one of them passes, so
// the list cannot go stale.
var knownFailures = map[string]string{}

// addonpkg's reader passes every vector of spec/conformance/vectors,
// through the runner and a real process, as a third-party reader would.
func TestConformanceVectors(t *testing.T) {
	t.Parallel()
	vs, err := conformance.LoadVectors(conformanceVectors)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := conformance.Run(t.Context(), vs, conformance.RunOptions{Command: []string{binary(t), "conformance", "read"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		why, known := knownFailures[o.Vector.Name]
		switch {
		case known && o.Passed():
			t.Errorf("%s passes now: remove it from knownFailures (%s)", o.Vector.Name, why)
		case known:
			t.Logf("%s fails as known until %s: %s", o.Vector.Name, why, strings.Join(o.Problems, "; "))
		case !o.Passed():
			t.Errorf("%s: %s\nstderr: %s", o.Vector.Name, strings.Join(o.Problems, "; "), o.Stderr)
		}
	}
	for name := range knownFailures {
		if _, err := os.Stat(filepath.Join(conformanceVectors, name)); err != nil {
			t.Errorf("known failure %s is not a vector: %v", name, err)
		}
	}
}

// conformance read prints the result on stdout: exit 0 for an add-on it
// accepts, 1 with the error on stderr for one it refuses.
func TestCLIConformanceRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		vector string
		code   int
	}{
		{"image-gzip", 0},
		{"artifact-oci-archive", 0},
		{"refuse-traversal", 1},
		{"refuse-digest-mismatch", 1},
	} {
		t.Run(c.vector, func(t *testing.T) {
			v, err := conformance.LoadVector(filepath.Join(conformanceVectors, c.vector))
			if err != nil {
				t.Fatal(err)
			}
			r := cliRun(t, "conformance", "read", v.Source)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", r.code, c.code, r.stderr)
			}
			got, err := conformance.Decode([]byte(r.stdout))
			if err != nil {
				t.Fatalf("%v; stdout: %s", err, r.stdout)
			}
			if d := conformance.Compare(v.Expected, got); len(d) > 0 {
				t.Errorf("differs from expected.json: %s", strings.Join(d, "; "))
			}
			if c.code != 0 && (strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, v.Source)) {
				t.Errorf("stderr %q: want one line naming %s", r.stderr, v.Source)
			}
		})
	}
}

// conformance read takes only the local image sources vectors use.
func TestCLIConformanceReadOtherSource(t *testing.T) {
	t.Parallel()
	r := cliRun(t, "conformance", "read", "registry.example.com/addons/x:1")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "oci:, oci-archive: or docker-archive:") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// conformance run reports each vector and exits 1 when one fails: here a
// copy of a vector whose expected.json was changed.
func TestCLIConformanceRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"image-gzip", "refuse-fifo"} {
		if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(filepath.Join(conformanceVectors, name))); err != nil {
			t.Fatal(err)
		}
	}
	reader := []string{"--", binary(t), "conformance", "read"}
	r := cliRun(t, append([]string{"conformance", "run", "--vectors", dir}, reader...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "PASS image-gzip\n") || !strings.Contains(r.stdout, "2 of 2 vectors passed") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The fifo vector now claims the add-on is accepted.
	bad := filepath.Join(dir, "refuse-fifo", "expected.json")
	if err := os.WriteFile(bad, []byte(`{"result":"ok","form":"image","identity":"sha256:00"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cliRun(t, append([]string{"conformance", "run", "--json", "--vectors", dir}, reader...)...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stdout %q", r.code, r.stdout)
	}
	var outs []struct {
		Vector   string   `json:"vector"`
		Passed   bool     `json:"passed"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &outs); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(outs) != 2 || !outs[0].Passed || outs[1].Passed || outs[1].Vector != "refuse-fifo" || len(outs[1].Problems) == 0 {
		t.Errorf("outcomes %+v: want image-gzip passed, refuse-fifo failed", outs)
	}
}

// unpackDiffers are accepted vectors that `unpack -o` (which streams
// files to disk while it reads, unpack.Options.Sink) does not write as
// expected.json says, and why. The test fails when one of them passes.
var unpackDiffers = map[string]string{}

// `addonpkg unpack SOURCE -o DIR` writes every accepted vector's tree to
// disk as expected.json describes it: files, modes, links and, through
// the identity, directories.
func TestCLIUnpackVectorsToDisk(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	vs, err := conformance.LoadVectors(conformanceVectors)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Expected.Result != conformance.ResultOK {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "tree")
			r := cliRun(t, "unpack", v.Source, "--platform", conformance.DefaultPlatform, "-o", out)
			var problems []string
			if r.code != 0 {
				problems = append(problems, "unpack -o: "+strings.TrimSpace(r.stderr))
			} else {
				got, err := conformance.DescribeDir(out, v.Expected.Form)
				if err != nil {
					t.Fatal(err)
				}
				problems = conformance.Compare(v.Expected, got)
			}
			why, known := unpackDiffers[v.Name]
			switch {
			case known && len(problems) == 0:
				t.Errorf("unpack -o writes it right now: remove %s from unpackDiffers (%s)", v.Name, why)
			case known:
				t.Logf("differs as known (%s): %s", why, strings.Join(problems, "; "))
			case len(problems) > 0:
				t.Errorf("unpack -o: %s", strings.Join(problems, "; "))
			}
		})
	}
}

// A vector's name is a directory's and the problems quote the reader:
// printed, neither carries a terminal escape.
func TestPrintOutcomesSanitized(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printOutcomes(&b, []conformance.Outcome{
		{Vector: conformance.Vector{Name: "ok\x1b]0;owned\x07"}},
		{Vector: conformance.Vector{Name: "bad\x1b[2J"}, Problems: []string{"reader said \x1b[31mno\nmore"}},
	})
	if strings.ContainsAny(b.String(), "\x1b\x07") || strings.Count(b.String(), "\n") != 3 {
		t.Errorf("printed:\n%q", b.String())
	}
}
