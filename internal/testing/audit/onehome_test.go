package audit_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/audit"
)

// budgets are the byte sizes declared in pkg/ outside safetree that are
// not caps on untrusted input, each with the reason.
var budgets = map[string]string{
	"pkg/source/netrc.go:maxNetrcSize":         "the user's own credentials file, not untrusted input; a larger one is ignored, not refused",
	"pkg/source/unpack.go:SpilledMemoryBudget": "memory budget: file bytes held in memory before they wait on disk",
	"pkg/render/render.go:readBuffer":          "a worker's reusable read buffer",
	"pkg/output/output.go:maxQueued":           "memory budget: bytes queued for the disk writers",
	"pkg/unpack/readahead.go:readAheadBudget":  "memory budget: read-ahead of the lower layers",
	"pkg/unpack/readahead.go:spillBudget":      "memory budget: read-ahead held in memory when the rest spills",
	"pkg/unpack/readahead.go:slabSize":         "allocation unit of small files",
	"pkg/unpack/readahead.go:maxSlabAlloc":     "largest file that shares a slab",
	"pkg/unpack/flatten.go:maxShadowBytes":     "memory budget: hidden bytes kept for hardlinks (the image's limits bound the rest)",
	"pkg/unpack/flatten.go:shadowMemBytes":     "memory budget: hidden bytes in memory before they spill",
	"pkg/unpack/flatten.go:small":              "files up to this size take a pooled buffer",
	"pkg/unpack/flatten.go:trustedSize":        "how much of a header's claimed size is allocated before the bytes arrive",
	"pkg/unpack/prefetch.go:chunkSize":         "read-ahead unit",
	"pkg/unpack/unpack.go:SpillThreshold":      "memory budget: the size over which a file goes to the spill directory",
	"pkg/archive/layer.go:SpillBytes":          "memory budget: a layer being built past this goes to a temporary file",
	"pkg/archive/layer.go:chunkSize":           "allocation unit of a layer being built",
	"pkg/archive/layer.go:gzipBlockSize":       "a format parameter: layer digests depend on it",
	"pkg/archive/xz.go:MaxDecoderWindow":       "memory budget: a decoder's window or dictionary (zstd, xz), claimed by a header before any data",
	"pkg/archive/xz.go:xzWindow":               "read-ahead unit of the xz container walk",
	"pkg/archive/xz.go:xzChunkBytes":           "work budget: the output each LZMA2 chunk after XzChunkSlack must follow (a ratio of decoder work to output, not a cap on input; one home: the xz walk)",
	"pkg/capi/capi.go:MaxDataBytes":            "the API server's limit on a ConfigMap's data, which output is split to fit: not a cap on input",
	"pkg/apply/inventory.go:maxInventoryBytes": "the API server's limit on a Secret's data, which an inventory must fit: not a cap on input",
}

// Outside safetree.Limits, no file under pkg/ declares a byte size that
// is not on the budgets list: a cap on untrusted input is a field of
// safetree.Limits, with its LimitID and its default in the one table.
func TestOneHomeForSizeCaps(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, err := audit.ByteSizes([]string{filepath.Join(root, "pkg", "safetree")}, filepath.Join(root, "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range found {
		k := f.Key(root)
		keys = append(keys, k)
		if _, ok := budgets[k]; !ok {
			t.Errorf("%s: %s %s declares a byte size: a cap on untrusted input belongs in safetree.Limits (a field, a LimitID, a default); a memory budget goes on the list with its reason as %q", f.Pos, f.Call, f.Func, k)
		}
	}
	for k := range budgets {
		if !slices.Contains(keys, k) {
			t.Errorf("budget entry %q matches nothing: remove it", k)
		}
	}
}

// The check itself: it finds sizes declared at package level and in a
// function, through conversions, and passes counts and durations.
func TestCheckSizesSource(t *testing.T) {
	src := `package x
import "time"
const MaxThing = 4 << 20
var cap2 int64 = int64(8 * 1024)
const (
	count = 10_000
	wait  = 2 * time.Second
)
func f() { const local = (1 << 10); _ = local }
`
	found, err := audit.CheckSizesSource("x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, f.Call+" "+f.Func)
	}
	want := []string{"const MaxThing", "var cap2", "const local"}
	if !slices.Equal(got, want) {
		t.Fatalf("found %q, want %q", got, want)
	}
}

// pathLiterals are the ".." and "../" literals in pkg/ outside safetree
// that are not path checks, each with the reason.
var pathLiterals = map[string]string{
	"pkg/source/dir.go:dirLocation.Claims": "source syntax: \"..\" and \"../DIR\" name a folder",
	"pkg/source/url.go:parseGit":           "a git ref name may not hold \"..\" (git check-ref-format), not a path",
	"pkg/reference/mirror.go:CheckMirror":  "a registry repository path may not hold \".\" or \"..\" components (distribution's name grammar), not a file path",
}

// Outside safetree no file under pkg/ spells ".." or "../": a path is
// checked by safetree.CleanName (an entry name), CleanComponent (one
// name) or JoinInside (a relative reference such as "../base"), so a fix
// to the rule lands once.
func TestOneHomeForPathChecks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, err := audit.Literals([]string{filepath.Join(root, "pkg", "safetree")}, []string{"..", "../"}, filepath.Join(root, "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range found {
		k := f.Key(root)
		keys = append(keys, k)
		if _, ok := pathLiterals[k]; !ok {
			t.Errorf("%s: %s in %s: check paths with safetree.CleanName, CleanComponent or JoinInside (or list %q with the reason)", f.Pos, f.Call, f.Func, k)
		}
	}
	for k := range pathLiterals {
		if !slices.Contains(keys, k) {
			t.Errorf("path literal entry %q matches nothing: remove it", k)
		}
	}
}

// referenceCuts are the cuts at ':' or '@' outside pkg/reference that
// are not a reference taken apart, each with the reason.
var referenceCuts = map[string]string{
	"pkg/source/layout.go:resplit":                            "oci:DIR:NAME, a path cut from a ref name at one of its colons",
	"pkg/source/url.go:redactURL":                             "a URL's user information",
	"pkg/layout/store.go:Store.Resolve":                       "the store's own keys: a tag, sha256:HEX or NAME@sha256:HEX",
	"pkg/addonset/decl.go:Set.Ref":                            "source syntax: a colon means a kind or a tag, not a folder beside the declaration",
	"pkg/source/dockerarchive.go:dockerArchiveLocation.Parse": "source syntax: docker-archive:PATH[:NAME]",
}

// Outside pkg/reference, nothing in pkg/, internal/ or cmd/ cuts a
// string at ':' or '@' unless listed with its reason: a reference is
// taken apart by pkg/reference (over go-containerregistry's name), once.
func TestOneHomeForReferences(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, err := audit.ReferenceSlicing([]string{filepath.Join(root, "pkg", "reference")},
		filepath.Join(root, "pkg"), filepath.Join(root, "internal"), filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range found {
		k := f.Key(root)
		keys = append(keys, k)
		if _, ok := referenceCuts[k]; !ok {
			t.Errorf("%s: %s in %s: take references apart with pkg/reference (or list %q with the reason)", f.Pos, f.Call, f.Func, k)
		}
	}
	for k := range referenceCuts {
		if !slices.Contains(keys, k) {
			t.Errorf("reference cut entry %q matches nothing: remove it", k)
		}
	}
}

// Outside pkg/mediatypes, nothing in pkg/, internal/ or cmd/ compares a
// media type with the config types that tell an add-on's form: which
// form an image is, is mediatypes.Classify's to say (ClassifyManifest,
// unpack.ReadHeader), and what a manifest's bytes are, Sniff's.
func TestOneHomeForClassification(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, err := audit.Comparisons([]string{filepath.Join(root, "pkg", "mediatypes")}, "mediatypes",
		[]string{"AddonConfig", "FluxConfig", "HelmConfig", "OCIConfig", "DockerConfig", "HelmChartContent"},
		filepath.Join(root, "pkg"), filepath.Join(root, "internal"), filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: %s compared in %s: classify with mediatypes (Classify, ClassifyManifest, IsImageConfig)", f.Pos, f.Call, f.Func)
	}
}

// No package under pkg/ or internal/ gives another's declaration a
// second name (unpack.Limits was safetree.Limits, build.Format was
// pack.Format) or renames another's error:
// errors.Is(err, unpack.ErrLimit) and errors.Is(err, safetree.ErrLimit)
// were one test under two names, and a reader had to learn that they
// are. A shared sentinel lives in pkg/errdef.
func TestNoReexports(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, err := audit.Reexports(nil, filepath.Join(root, "pkg"), filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: %s %s: a second name for another package's declaration; use the owner's (a sentinel several packages return goes in pkg/errdef)", f.Pos, f.Func, f.Call)
	}
}

// The check itself: it finds a re-exported sentinel and a type alias at
// package level and the module's declarations renamed, and passes a
// package's own sentinels, aliases of other modules' types, a
// function's locals, unexported shorthands and other selectors.
func TestCheckReexportsSource(t *testing.T) {
	src := `package x
import ("errors"; "os"; "other"; "github.com/addonpkg/addonpkg/pkg/pack"; st "github.com/addonpkg/addonpkg/pkg/safetree")
var ErrOwn = errors.New("own")
var ErrAgain = other.ErrLimit
var out = os.Stdout
type LimitError = other.LimitError
type local = int
type Limits = other.Limits
type Format = pack.Format
const FormatImage = pack.FormatImage
type Tree = st.Limits
const maxDepth = st.MaxIndexDepth
func f() { var e = other.ErrLimit; _ = e; const g = pack.FormatImage }
`
	found, err := audit.CheckReexportsSource("x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, f.Func+" "+f.Call)
	}
	want := []string{"ErrAgain var = other.ErrLimit", "LimitError type = other.LimitError", "Format type = pack.Format", "FormatImage const = pack.FormatImage", "Tree type = st.Limits"}
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
}
