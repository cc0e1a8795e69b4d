package conformance_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/conformance"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Errors map onto classes by the sentinels they wrap, the most specific
// first: an error that is both corrupt and a digest mismatch is the
// latter.
func TestClassify(t *testing.T) {
	entry := func(err error) error {
		return fmt.Errorf("layer 1: %w", &unpack.EntryError{Layer: 1, Entry: "x", Reason: "r", Err: err})
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{&safetree.LimitError{Name: "entry count", Limit: 1, Which: safetree.LimitEntries}, conformance.ReasonLimit},
		{fmt.Errorf("read manifest: %w", safetree.DefaultCap(safetree.LimitManifestBytes).Exceeded("")), conformance.ReasonLimit},
		{fmt.Errorf("%w: %w", unpack.ErrCorrupt, fmt.Errorf("add-on config: %w", addon.ErrUnsupportedVersion)), conformance.ReasonUnsupportedVersion},
		{fmt.Errorf("%w: x", unpack.ErrIdentityMismatch), conformance.ReasonIdentityMismatch},
		{fmt.Errorf("%w: %w", unpack.ErrCorrupt, fmt.Errorf("blob: %w", errdef.ErrSizeMismatch)), conformance.ReasonDigestMismatch},
		{fmt.Errorf("%w: x", unpack.ErrDiffIDMismatch), conformance.ReasonDigestMismatch},
		{entry(safetree.ErrLinkEscape), conformance.ReasonLinkEscape},
		{entry(safetree.ErrUnsupportedType), conformance.ReasonEntryType},
		{entry(safetree.ErrUnsafe), conformance.ReasonPathEscape},
		{&unpack.PlatformError{Want: "linux/amd64"}, conformance.ReasonNoPlatform},
		{fmt.Errorf("%w: nothing under /addon", unpack.ErrNoContent), conformance.ReasonNoContent},
		{fmt.Errorf("%w: layer media type", unpack.ErrUnsupported), conformance.ReasonUnsupportedType},
		{fmt.Errorf("%w: read tar: unexpected EOF", unpack.ErrCorrupt), conformance.ReasonMalformed},
		{errors.New("disk full"), conformance.ReasonOther},
	} {
		if got := conformance.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	// The finer sentinels are still their parents.
	if !errors.Is(entry(safetree.ErrLinkEscape), safetree.ErrUnsafe) || !errors.Is(unpack.ErrIdentityMismatch, unpack.ErrCorrupt) {
		t.Error("a finer sentinel is not its parent")
	}
}

func TestDecodeRefusesOtherShapes(t *testing.T) {
	for _, in := range []string{
		`{"result":"maybe"}`,
		`{"result":"ok","extra":1}`,
		`{"result":"ok"} {"result":"ok"}`,
		`not json`,
	} {
		if _, err := conformance.Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%s): no error", in)
		}
	}
}

func TestCompare(t *testing.T) {
	want := conformance.Result{Result: "ok", Form: "image", Identity: "sha256:1",
		Files: map[string]conformance.File{"a": {SHA256: "aa", Mode: "0644"}, "b": {SHA256: "bb", Mode: "0755"}},
		Links: map[string]string{"l": "a"}}
	got := conformance.Result{Result: "ok", Form: "artifact", Identity: "sha256:2",
		Files: map[string]conformance.File{"a": {SHA256: "aa", Mode: "0755"}, "c": {SHA256: "cc", Mode: "0644"}},
		Links: map[string]string{"l": "b"}}
	d := conformance.Compare(want, got)
	for _, frag := range []string{`form "artifact"`, "identity sha256:2", `file "a"`, `file "b" missing`, `file "c" not expected`, `link "l" -> "b"`} {
		if !slices.ContainsFunc(d, func(s string) bool { return strings.Contains(s, frag) }) {
			t.Errorf("no difference mentions %s: %q", frag, d)
		}
	}
	if d := conformance.Compare(want, want); len(d) != 0 {
		t.Errorf("a result differs from itself: %q", d)
	}
	if d := conformance.Compare(conformance.Result{Result: "refuse", Reason: "limit"}, conformance.Result{Result: "refuse", Reason: "malformed"}); len(d) != 1 {
		t.Errorf("reasons: %q", d)
	}
}

// A reader's output is compared with what a vector expects.
func ExampleCompare() {
	want := conformance.Result{Result: conformance.ResultRefuse, Reason: conformance.ReasonPathEscape}
	got, err := conformance.Decode([]byte(`{"result":"refuse","reason":"link-escape"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(conformance.Compare(want, got))
	// Output: [reason "link-escape", want "path-escape"]
}

// A reader error maps onto the spec's refusal classes by its sentinels.
func ExampleClassify() {
	err := fmt.Errorf("layer 1: %w", &safetree.LimitError{Name: "entry count", Limit: 100_000, Which: safetree.LimitEntries})
	fmt.Println(conformance.Classify(err))
	// Output: limit
}
