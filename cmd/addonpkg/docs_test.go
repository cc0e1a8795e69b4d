package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// docsRefDir is the checked-in CLI reference.
const docsRefDir = "../../docs/cli"

const docsRegenerate = "run make docs (go run ./cmd/addonpkg gen-docs --dir docs/cli) and commit docs/cli/"

// docsReadDir reads every file of a flat directory.
func docsReadDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v: %s", err, docsRegenerate)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func docsCompare(t *testing.T, got map[string][]byte) {
	t.Helper()
	want := docsReadDir(t, docsRefDir)
	var names []string
	for n := range got {
		names = append(names, n)
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		g, inGot := got[n]
		w, inWant := want[n]
		switch {
		case !inWant:
			t.Errorf("docs/cli/%s is missing: %s", n, docsRegenerate)
		case !inGot:
			t.Errorf("docs/cli/%s documents no command any more: delete it, then %s", n, docsRegenerate)
		case !bytes.Equal(g, w):
			t.Errorf("docs/cli/%s is out of date: %s", n, docsRegenerate)
		}
	}
}

// The checked-in CLI reference matches the commands.
func TestDocsUpToDate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	// `addonpkg gen-docs` runs inside Execute, which adds cobra's
	// completion command before any command runs; add it here too so
	// that both give the same reference.
	root.InitDefaultCompletionCmd()
	if err := genDocs(root, dir); err != nil {
		t.Fatal(err)
	}
	docsCompare(t, docsReadDir(t, dir))
}

// `addonpkg gen-docs`, what make docs runs, writes the same reference.
func TestGenDocsCommand(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "cli")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"gen-docs", "--dir", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("gen-docs: exit %d: %s", code, stderr.String())
	}
	docsCompare(t, docsReadDir(t, dir))
}

// docsVisibleCommands walks the command tree, leaving out hidden commands and
// cobra's own help and completion commands.
func docsVisibleCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		out = append(out, sub)
		out = append(out, docsVisibleCommands(sub)...)
	}
	return out
}

func TestEveryCommandHasAnExample(t *testing.T) {
	t.Parallel()
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	cmds := append([]*cobra.Command{root}, docsVisibleCommands(root)...)
	if len(cmds) < 10 {
		t.Fatalf("only %d commands found", len(cmds))
	}
	for _, c := range cmds {
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Example", c.CommandPath())
		}
		if strings.TrimSpace(c.Short) == "" {
			t.Errorf("%q has no Short description", c.CommandPath())
		}
		// Examples run the command they document.
		for _, line := range strings.Split(strings.TrimSpace(c.Example), "\n") {
			if !strings.Contains(line, c.CommandPath()) {
				t.Errorf("%q: example line %q does not run %q", c.CommandPath(), strings.TrimSpace(line), c.CommandPath())
			}
		}
	}
}
