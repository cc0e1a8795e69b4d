package conformance

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// DefaultPlatform is the platform the runner asks readers to pick from an
// index (the platform "the user requested", spec section 9.1).
const DefaultPlatform = "linux/amd64"

// Vector is one folder of the suite.
type Vector struct {
	// Name is the folder's name.
	Name string
	// Dir is the folder.
	Dir string
	// Source is what the reader reads, in the transport syntax of
	// skopeo and addonpkg: oci:DIR:v1, oci-archive:FILE:v1 or
	// docker-archive:FILE.
	Source string
	// Expected is the vector's expected.json.
	Expected Result
}

// ErrNoVectors is returned when a folder holds no vector.
var ErrNoVectors = errors.New("no conformance vectors")

// LoadVectors reads every vector of dir, in name order.
func LoadVectors(dir string) ([]Vector, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read vectors: %w", err)
	}
	var vs []Vector
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		v, err := LoadVector(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoVectors)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return vs, nil
}

// LoadVector reads one vector folder.
func LoadVector(dir string) (Vector, error) {
	v := Vector{Name: filepath.Base(dir), Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		return v, fmt.Errorf("vector %s: %w", v.Name, err)
	}
	if v.Expected, err = Decode(b); err != nil {
		return v, fmt.Errorf("vector %s: expected.json: %w", v.Name, err)
	}
	if v.Source, err = sourceOf(dir); err != nil {
		return v, fmt.Errorf("vector %s: %w", v.Name, err)
	}
	return v, nil
}

// sourceOf names the vector's input: its layout/ folder, else its
// archive.tar, an oci-archive when it holds an oci-layout file and a
// docker-archive otherwise.
func sourceOf(dir string) (string, error) {
	if st, err := os.Stat(filepath.Join(dir, "layout")); err == nil && st.IsDir() {
		return "oci:" + filepath.Join(dir, "layout") + ":v1", nil
	}
	archive := filepath.Join(dir, "archive.tar")
	f, err := os.Open(archive)
	if err != nil {
		return "", fmt.Errorf("neither layout/ nor archive.tar: %w", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return "docker-archive:" + archive, nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", archive, err)
		}
		if strings.TrimPrefix(h.Name, "./") == "oci-layout" {
			return "oci-archive:" + archive + ":v1", nil
		}
	}
}

// RunOptions says which reader to run.
type RunOptions struct {
	// Command is the reader command; the vector's source is appended as
	// its last argument.
	Command []string
	// Platform is passed as ADDON_PLATFORM (default DefaultPlatform).
	Platform string
	// Env is added to the reader's environment.
	Env []string
}

// Outcome is what one vector gave.
type Outcome struct {
	Vector Vector
	// Got is the reader's result, when it printed one.
	Got Result
	// ExitCode is the reader's exit status.
	ExitCode int
	// Problems is empty when the reader passed the vector.
	Problems []string
	// Stderr is what the reader printed on stderr (at most 4 KiB).
	Stderr string
}

// Passed reports whether the reader passed the vector.
func (o Outcome) Passed() bool { return len(o.Problems) == 0 }

// Run runs the reader on every vector.
func Run(ctx context.Context, vectors []Vector, opts RunOptions) ([]Outcome, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("run conformance: no reader command")
	}
	out := make([]Outcome, 0, len(vectors))
	for _, v := range vectors {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		out = append(out, RunVector(ctx, v, opts))
	}
	return out, nil
}

// RunDir runs the reader on every vector of the folder dir (LoadVectors,
// Run).
func RunDir(ctx context.Context, dir string, opts RunOptions) ([]Outcome, error) {
	vs, err := LoadVectors(dir)
	if err != nil {
		return nil, err
	}
	return Run(ctx, vs, opts)
}

// ErrFailed marks a run in which the reader failed a vector (Verdict).
var ErrFailed = errors.New("conformance vectors failed")

// Failed counts the outcomes that did not pass.
func Failed(outs []Outcome) int {
	n := 0
	for _, o := range outs {
		if !o.Passed() {
			n++
		}
	}
	return n
}

// Verdict is nil when the reader passed every vector, else an error
// saying how many it failed ("2 of 67 conformance vectors failed") that
// wraps ErrFailed.
func Verdict(outs []Outcome) error {
	if n := Failed(outs); n > 0 {
		return fmt.Errorf("%d of %d %w", n, len(outs), ErrFailed)
	}
	return nil
}

// RunVector runs the reader on one vector and compares.
func RunVector(ctx context.Context, v Vector, opts RunOptions) Outcome {
	platform := opts.Platform
	if platform == "" {
		platform = DefaultPlatform
	}
	o := Outcome{Vector: v}
	args := append(append([]string{}, opts.Command[1:]...), v.Source)
	cmd := exec.CommandContext(ctx, opts.Command[0], args...)
	cmd.Env = append(append(os.Environ(), opts.Env...),
		"ADDON_PLATFORM="+platform, "ADDON_VECTOR="+v.Dir, "ADDON_SOURCE="+v.Source)
	// A result is a short JSON document: a reader that prints more is
	// wrong, and is not held in memory for it.
	var stdout, stderr bytes.Buffer
	out := &capped{w: &stdout, left: resultCap.Max}
	cmd.Stdout, cmd.Stderr = out, &capped{w: &stderr, left: 4 << 10}
	err := cmd.Run()
	o.Stderr = stderr.String()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		o.ExitCode = ee.ExitCode()
	case err != nil:
		o.Problems = append(o.Problems, fmt.Sprintf("run reader: %v", err))
		return o
	}
	if out.over {
		o.Problems = append(o.Problems, fmt.Sprintf("stdout is not a result: more than %d bytes", resultCap.Max))
		return o
	}
	got, err := Decode(stdout.Bytes())
	if err != nil {
		o.Problems = append(o.Problems, fmt.Sprintf("stdout is not a result: %v", err))
		return o
	}
	o.Got = got
	switch {
	case got.Result == ResultOK && o.ExitCode != 0:
		o.Problems = append(o.Problems, fmt.Sprintf("result ok with exit status %d", o.ExitCode))
	case got.Result == ResultRefuse && o.ExitCode == 0:
		o.Problems = append(o.Problems, "result refuse with exit status 0")
	}
	o.Problems = append(o.Problems, Compare(v.Expected, got)...)
	return o
}

// resultCap bounds a reader's stdout: a result is a document as short
// as a declaration.
var resultCap = safetree.DefaultCap(safetree.LimitDeclarationBytes)

// capped keeps the first bytes written to it and drops the rest; over
// says some were dropped.
type capped struct {
	w    io.Writer
	left int64
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := int64(len(p))
	if n > c.left {
		n, c.over = c.left, true
	}
	if n > 0 {
		c.left -= n
		if _, err := c.w.Write(p[:n]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
