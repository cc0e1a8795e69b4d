package output

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// childEnv names the target of a writer child process.
const childEnv = "ADDONPKG_OUTPUT_TEST_CHILD"

// TestWriterChild is not a test: run as a child process by the tests
// below, it starts a Writer for $ADDONPKG_OUTPUT_TEST_CHILD, writes a file
// into its temp directory, prints that directory and waits, for the parent
// to kill it.
func TestWriterChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("run by the stale temp directory tests as a child process")
	}
	w, err := NewWriter(dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	w.WriteFile("a.yaml", []byte("a: 1\n"), 0o644)
	w.stopWorkers() // the file is on disk before the parent looks
	fmt.Println(w.tmp)
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	os.Exit(3)
}

// writerChild is a live process writing to dir: its temp directory and a
// kill that waits for it to be gone.
type writerChild struct {
	cmd *exec.Cmd
	tmp string
}

func startWriterChild(t *testing.T, dir string) *writerChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	stdin, err := cmd.StdinPipe() // held open: the child waits on it
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &writerChild{cmd: cmd}
	t.Cleanup(func() {
		stdin.Close()
		c.kill(t)
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(strings.TrimSpace(line), filepath.Dir(dir)) {
		t.Fatalf("child: %q, %v", line, err)
	}
	c.tmp = strings.TrimSpace(line)
	if _, err := os.Stat(filepath.Join(c.tmp, "a.yaml")); err != nil {
		t.Fatalf("child's temp directory: %v", err)
	}
	return c
}

// kill sends SIGKILL and waits for the child to be gone.
func (c *writerChild) kill(t *testing.T) {
	t.Helper()
	if c.cmd.ProcessState != nil {
		return
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child was not killed: %v", c.cmd.ProcessState)
	}
}

func tempsOf(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A writer killed with SIGKILL leaves its temp directory; the next
// Writer for the same target removes it, but never the temp directory of
// a writer still alive.
func TestKilledWriterTempRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	killed := startWriterChild(t, dir)
	alive := startWriterChild(t, dir)
	killed.kill(t)
	if _, err := os.Stat(killed.tmp); err != nil {
		t.Fatalf("the killed writer's temp directory is already gone: %v", err)
	}

	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed.tmp); err == nil {
		t.Errorf("%s of the killed writer survived the next NewWriter", killed.tmp)
	}
	if _, err := os.Stat(filepath.Join(alive.tmp, "a.yaml")); err != nil {
		t.Errorf("the live writer's temp directory was touched: %v", err)
	}
	if err := w.Commit(tree(t)); err != nil {
		t.Fatal(err)
	}
	if got := tempsOf(t, dir); !slices.Equal(got, []string{alive.tmp}) {
		t.Errorf("temp directories after the commit: %q, want only the live writer's", got)
	}

	// Once it dies too, the next writer's sweep takes it.
	alive.kill(t)
	if n := removeStaleTemps(filepath.Dir(dir), filepath.Base(dir)); n != 1 {
		t.Errorf("removed %d, want the 1 of the second killed writer", n)
	}
	if got := tempsOf(t, dir); len(got) != 0 {
		t.Errorf("temp directories left: %q", got)
	}
}

// Two writers of one process, one target: the second leaves the first's
// temp directory alone.
func TestConcurrentWriterTempKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w1, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w1.tmp); err != nil {
		t.Errorf("the second writer removed the first's temp directory: %v", err)
	}
	w2.Abort()
	if err := w1.Commit(tree(t)); err != nil {
		t.Fatal(err)
	}
	if got := tempsOf(t, dir); len(got) != 0 {
		t.Errorf("temp directories left: %q", got)
	}
}

// The sweep removes only what a writer made: lookalikes stay.
func TestStaleSweepKeepsLookalikes(t *testing.T) {
	parent := t.TempDir()
	other := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "keep"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unlocked := mk(".out.tmp-999") // an older version's, or a killed writer's
	kept := []string{
		mk(".out.tmp-notes"),
		mk(".out.tmp-"),
		mk(".other.tmp-123"),
		mk("out.tmp-123"),
		mk(".out.tmp-12.tmp-3"),
	}
	if err := os.WriteFile(filepath.Join(parent, ".out.tmp-456"), []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, filepath.Join(parent, ".out.tmp-456"))
	if err := os.WriteFile(filepath.Join(other, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(parent, ".out.tmp-777")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, link)

	if n := removeStaleTemps(parent, "out"); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	if _, err := os.Stat(unlocked); err == nil {
		t.Errorf("%s survived", unlocked)
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(other, "keep")); err != nil {
		t.Errorf("the sweep followed a symlink: %v", err)
	}
}

// A writer filling an existing directory keeps its temp directory inside
// it: once the writer is killed, the next one removes it, and does not
// take it for content.
func TestKilledWriterInsideTargetRemoved(t *testing.T) {
	dir := t.TempDir()
	killed := startWriterChild(t, dir)
	if filepath.Dir(killed.tmp) != dir {
		t.Fatalf("temp directory %s is not inside the target %s", killed.tmp, dir)
	}
	killed.kill(t)
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatalf("after a killed writer: %v", err)
	}
	if _, err := os.Stat(killed.tmp); err == nil {
		t.Errorf("%s of the killed writer survived the next NewWriter", killed.tmp)
	}
	if err := w.Commit(tree(t)); err != nil {
		t.Fatal(err)
	}
	checkTree(t, dir)
}
