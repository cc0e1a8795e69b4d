package safetree_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Every document cap has its default in the one table, its own LimitID,
// and refuses with a *safetree.LimitError that names it; a set field
// overrides the default.
func TestDocumentCaps(t *testing.T) {
	caps := map[safetree.LimitID]int64{
		safetree.LimitManifestBytes:    safetree.DefaultMaxManifestBytes,
		safetree.LimitIndexBytes:       safetree.DefaultMaxIndexBytes,
		safetree.LimitConfigBytes:      safetree.DefaultMaxConfigBytes,
		safetree.LimitLockBytes:        safetree.DefaultMaxLockBytes,
		safetree.LimitSignatureBytes:   safetree.DefaultMaxSignatureBytes,
		safetree.LimitDeclarationBytes: safetree.DefaultMaxDeclarationBytes,
	}
	for id, def := range caps {
		c := safetree.DefaultCap(id)
		if c.Which != id || c.Max != def {
			t.Errorf("DefaultCap(%s) = %+v, want %d", id, c, def)
		}
		if err := c.Check("x", def); err != nil {
			t.Errorf("%s: a document at the cap refused: %v", id, err)
		}
		err := c.Check("x", def+1)
		var le *safetree.LimitError
		if !errors.As(err, &le) || le.Which != id || le.Limit != def || le.Entry != "x" || !errors.Is(err, safetree.ErrLimit) {
			t.Errorf("%s: over the cap: %v", id, err)
		}
	}
	if c := (safetree.Limits{MaxConfigBytes: 10}).WithDefaults().Cap(safetree.LimitConfigBytes); c.Max != 10 {
		t.Errorf("a set MaxConfigBytes gives a cap of %d", c.Max)
	}
	defer func() {
		if recover() == nil {
			t.Error("Cap of a limit that is no document cap did not panic")
		}
	}()
	safetree.Limits{}.Cap(safetree.LimitEntries)
}

// CleanComponent takes one clean name; JoinInside resolves a relative
// reference and refuses one that leaves the tree.
func TestCleanComponentAndJoinInside(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "chart.yaml": true, "..a": true,
		"": false, ".": false, "..": false, "a/b": false, "a/": false, "/a": false, "a\x00": false,
	} {
		if err := safetree.CleanComponent(name); (err == nil) != ok || (err != nil && !errors.Is(err, safetree.ErrPathEscape)) {
			t.Errorf("CleanComponent(%q) = %v, want ok %v", name, err, ok)
		}
	}
	for _, c := range []struct{ dir, rel, want string }{
		{"overlays/prod", "../../base", "base"},
		{".", "a/./b", "a/b"},
		{"", "a", "a"},
		{"a", "..", "."},
		{"a", "../..", ""},
		{".", "../x", ""},
		{"a", "/etc", ""},
		{"a", "b\x00", ""},
	} {
		got, err := safetree.JoinInside(c.dir, c.rel)
		if got != c.want || (c.want == "") != (err != nil) || (err != nil && !errors.Is(err, safetree.ErrPathEscape)) {
			t.Errorf("JoinInside(%q, %q) = %q, %v; want %q", c.dir, c.rel, got, err, c.want)
		}
	}
}

// The caps on what a diff compares line by line have their defaults in
// the one table; a set field overrides its default.
func TestDiffCaps(t *testing.T) {
	l := safetree.Limits{}.WithDefaults()
	if l.MaxDiffObjectBytes != safetree.DefaultMaxDiffObjectBytes || l.MaxDiffBytes != safetree.DefaultMaxDiffBytes {
		t.Errorf("defaults: %d, %d", l.MaxDiffObjectBytes, l.MaxDiffBytes)
	}
	// Every object the API server stores (1.5 MiB) is diffed line by line.
	if safetree.DefaultMaxDiffObjectBytes < 3<<19 {
		t.Errorf("DefaultMaxDiffObjectBytes %d is under what the API server stores", safetree.DefaultMaxDiffObjectBytes)
	}
	if l := (safetree.Limits{MaxDiffObjectBytes: 10, MaxDiffBytes: 20}).WithDefaults(); l.MaxDiffObjectBytes != 10 || l.MaxDiffBytes != 20 {
		t.Errorf("set fields: %d, %d", l.MaxDiffObjectBytes, l.MaxDiffBytes)
	}
}

// ReadAll takes a document at the cap and refuses one a byte over it,
// naming the entry.
func TestCapReadAll(t *testing.T) {
	c := safetree.Cap{Which: safetree.LimitDeclarationBytes, Max: 4}
	if b, err := c.ReadAll("d", strings.NewReader("abcd")); err != nil || string(b) != "abcd" {
		t.Errorf("at the cap: %q, %v", b, err)
	}
	_, err := c.ReadAll("d", strings.NewReader("abcde"))
	var le *safetree.LimitError
	if !errors.As(err, &le) || le.Which != safetree.LimitDeclarationBytes || !strings.Contains(err.Error(), "d") {
		t.Errorf("over the cap: %v", err)
	}
}
