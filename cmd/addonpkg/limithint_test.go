package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Every limit a reader refuses with is a *safetree.LimitError with its
// LimitID; the hint names --max-ID on the commands that have that flag,
// and nothing on the others (the document caps have no flag, so their
// defaults hold everywhere).
func TestLimitHintNamesOnlyTheCommandsFlags(t *testing.T) {
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	unpack, _, err := root.Find([]string{"unpack"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []safetree.LimitID{
		safetree.LimitAddonBytes, safetree.LimitImageBytes, safetree.LimitEntries, safetree.LimitFileBytes,
		safetree.LimitPathLength, safetree.LimitDepth, safetree.LimitLayers, safetree.LimitDownloadBytes,
		safetree.LimitManifestBytes, safetree.LimitIndexBytes, safetree.LimitConfigBytes, safetree.LimitLockBytes,
		safetree.LimitSignatureBytes, safetree.LimitDeclarationBytes,
	} {
		err := fmt.Errorf("read: %w", &safetree.LimitError{Name: "x", Limit: 1, Which: id})
		hint := flagHint(unpack, err)
		has := unpack.Flags().Lookup("max-"+string(id)) != nil
		if want := " (raise it with --max-" + string(id) + ")"; has && hint != want {
			t.Errorf("%s: hint %q on unpack, which has the flag; want %q", id, hint, want)
		}
		if !has && hint != "" {
			t.Errorf("%s: hint %q on unpack, which has no such flag", id, hint)
		}
	}
}
