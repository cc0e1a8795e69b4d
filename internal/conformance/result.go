package conformance

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Result values.
const (
	ResultOK     = "ok"
	ResultRefuse = "refuse"
)

// Refusal classes, as spec/addon-v1.md section 14 defines them.
const (
	// ReasonPathEscape: an entry name that is absolute or has a ".."
	// segment, or an entry placed through a symbolic link or a file.
	ReasonPathEscape = "path-escape"
	// ReasonLinkEscape: a symbolic link that is absolute, empty or leads
	// out of the tree (resolved through the tree's other links), or a
	// hard link whose target is outside the tree or not a present file.
	ReasonLinkEscape = "link-escape"
	// ReasonEntryType: a device, FIFO or unknown tar entry type.
	ReasonEntryType = "entry-type"
	// ReasonDigestMismatch: a blob that does not match its descriptor's
	// digest or size, or a layer that does not match its DiffID.
	ReasonDigestMismatch = "digest-mismatch"
	// ReasonIdentityMismatch: an artifact config whose identity is not
	// the content's.
	ReasonIdentityMismatch = "identity-mismatch"
	// ReasonMalformed: a layer that does not decode (truncated, bad
	// compression, bad tar), a config that does not parse or lacks a
	// required field, metadata that contradicts the content otherwise.
	ReasonMalformed = "malformed"
	// ReasonLimit: one of the limits of section 9.5.
	ReasonLimit = "limit"
	// ReasonUnsupportedVersion: a config specVersion the reader does not
	// know.
	ReasonUnsupportedVersion = "unsupported-version"
	// ReasonUnsupportedType: a manifest, config or layer media type that
	// is not one of an add-on.
	ReasonUnsupportedType = "unsupported-type"
	// ReasonNoContent: an image without its content directory, or an
	// empty index.
	ReasonNoContent = "no-content"
	// ReasonNoPlatform: an index with no entry for the requested
	// platform.
	ReasonNoPlatform = "no-platform"
	// ReasonOther: a refusal that fits no class. No vector expects it.
	ReasonOther = "other"
)

// Reasons lists every refusal class a vector may expect.
var Reasons = []string{
	ReasonPathEscape, ReasonLinkEscape, ReasonEntryType, ReasonDigestMismatch,
	ReasonIdentityMismatch, ReasonMalformed, ReasonLimit, ReasonUnsupportedVersion,
	ReasonUnsupportedType, ReasonNoContent, ReasonNoPlatform,
}

// Result is what a reader reports for one add-on: the JSON object of
// expected.json and of a reader command's stdout.
type Result struct {
	// Result is "ok" or "refuse".
	Result string `json:"result"`
	// Reason is the refusal class, for "refuse".
	Reason string `json:"reason,omitempty"`
	// Form is "image" or "artifact", for "ok".
	Form string `json:"form,omitempty"`
	// Identity is the content identity, sha256:<hex>, for "ok".
	Identity string `json:"identity,omitempty"`
	// Files maps the path of every regular file of the tree (hard links
	// included) to its digest and mode, for "ok".
	Files map[string]File `json:"files,omitempty"`
	// Links maps the path of every symbolic link to its target, for "ok".
	Links map[string]string `json:"links,omitempty"`
}

// File is one regular file of a Result.
type File struct {
	// SHA256 is the lowercase hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
	// Mode is "0644" or "0755", the MODE of spec section 7.2.
	Mode string `json:"mode"`
}

// Refusal is the Result of a refused add-on.
func Refusal(err error) Result { return Result{Result: ResultRefuse, Reason: Classify(err)} }

// Classify maps a reader error onto a refusal class, by the sentinels it
// wraps, never by its text. The most specific class is checked first.
func Classify(err error) string {
	var le *safetree.LimitError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &le), errors.Is(err, safetree.ErrLimit):
		return ReasonLimit
	case errors.Is(err, addon.ErrUnsupportedVersion):
		return ReasonUnsupportedVersion
	case errors.Is(err, unpack.ErrIdentityMismatch):
		return ReasonIdentityMismatch
	case errors.Is(err, errdef.ErrDigestMismatch), errors.Is(err, unpack.ErrDiffIDMismatch):
		return ReasonDigestMismatch
	case errors.Is(err, safetree.ErrLinkEscape):
		return ReasonLinkEscape
	case errors.Is(err, safetree.ErrUnsupportedType):
		return ReasonEntryType
	case errors.Is(err, safetree.ErrUnsafe):
		return ReasonPathEscape
	case errors.Is(err, unpack.ErrNoPlatform):
		return ReasonNoPlatform
	case errors.Is(err, unpack.ErrNoContent):
		return ReasonNoContent
	case errors.Is(err, unpack.ErrUnsupported):
		return ReasonUnsupportedType
	case errors.Is(err, unpack.ErrCorrupt):
		return ReasonMalformed
	}
	return ReasonOther
}

// Describe is the "ok" Result of an unpacked add-on.
func Describe(a *unpack.Addon) (Result, error) {
	r, err := describeTree(a.FS, func(p string) (string, error) { return fileSum(a.FS, p) })
	if err != nil {
		return Result{}, err
	}
	r.Form, r.Identity = string(a.Form), a.Identity
	return r, nil
}

// DescribeDir describes a tree that a reader wrote to the directory root
// (as `unpack -o` does), in the form form: what a reader under test that
// writes to disk is compared by.
func DescribeDir(root, form string) (Result, error) {
	fsys := os.DirFS(root)
	id, err := archive.Identity(fsys)
	if err != nil {
		return Result{}, fmt.Errorf("describe %s: %w", root, err)
	}
	r, err := describeTree(fsys, func(p string) (string, error) {
		f, err := fsys.Open(p)
		if err != nil {
			return "", err
		}
		defer f.Close()
		return hashReader(f)
	})
	if err != nil {
		return Result{}, err
	}
	r.Form, r.Identity = form, id.String()
	return r, nil
}

// describeTree lists a tree's files (digest and mode) and links; sum
// gives a file's hex SHA-256.
func describeTree(fsys fs.FS, sum func(string) (string, error)) (Result, error) {
	r := Result{Result: ResultOK, Files: map[string]File{}, Links: map[string]string{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		switch t := d.Type(); {
		case t.IsDir():
		case t&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, p)
			if err != nil {
				return err
			}
			r.Links[p] = target
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			s, err := sum(p)
			if err != nil {
				return err
			}
			mode := "0644"
			if info.Mode().Perm()&0o111 != 0 {
				mode = "0755"
			}
			r.Files[p] = File{SHA256: s, Mode: mode}
		default:
			return fmt.Errorf("%s: unexpected file type %v", p, t)
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("describe tree: %w", err)
	}
	return r, nil
}

// fileSum is the hex SHA-256 of a file of the tree, from the digest the
// tree keeps when its bytes were let go.
func fileSum(fsys *filetree.FS, p string) (string, error) {
	if s, ok := fsys.SHA256(p); ok {
		return hex.EncodeToString(s[:]), nil
	}
	f, err := fsys.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return hashReader(f)
}

// Encode writes r as expected.json holds it: two-space indented JSON,
// keys in a fixed order, one trailing newline.
func Encode(w io.Writer, r Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Decode reads one Result, refusing unknown fields and trailing data.
func Decode(b []byte) (Result, error) {
	var r Result
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Result{}, fmt.Errorf("decode result: %w", err)
	}
	if dec.More() {
		return Result{}, errors.New("decode result: more than one JSON value")
	}
	switch r.Result {
	case ResultOK, ResultRefuse:
	default:
		return Result{}, fmt.Errorf("decode result: \"result\" is %q, want \"ok\" or \"refuse\"", r.Result)
	}
	return r, nil
}

// Compare lists how got differs from want, one line per difference; an
// empty list means they agree.
func Compare(want, got Result) []string {
	var d []string
	if want.Result != got.Result {
		d = append(d, fmt.Sprintf("result %q, want %q", got.Result, want.Result))
		if got.Result == ResultRefuse {
			d = append(d, fmt.Sprintf("(refused as %q)", got.Reason))
		}
		return d
	}
	if want.Result == ResultRefuse {
		if want.Reason != got.Reason {
			d = append(d, fmt.Sprintf("reason %q, want %q", got.Reason, want.Reason))
		}
		return d
	}
	if want.Form != got.Form {
		d = append(d, fmt.Sprintf("form %q, want %q", got.Form, want.Form))
	}
	if want.Identity != got.Identity {
		d = append(d, fmt.Sprintf("identity %s, want %s", got.Identity, want.Identity))
	}
	for _, p := range unionKeys(want.Files, got.Files) {
		w, wok := want.Files[p]
		g, gok := got.Files[p]
		switch {
		case !gok:
			d = append(d, fmt.Sprintf("file %q missing", p))
		case !wok:
			d = append(d, fmt.Sprintf("file %q not expected", p))
		case w != g:
			d = append(d, fmt.Sprintf("file %q: sha256 %s mode %s, want sha256 %s mode %s", p, g.SHA256, g.Mode, w.SHA256, w.Mode))
		}
	}
	for _, p := range unionKeys(want.Links, got.Links) {
		w, wok := want.Links[p]
		g, gok := got.Links[p]
		switch {
		case !gok:
			d = append(d, fmt.Sprintf("link %q missing", p))
		case !wok:
			d = append(d, fmt.Sprintf("link %q not expected", p))
		case w != g:
			d = append(d, fmt.Sprintf("link %q -> %q, want -> %q", p, g, w))
		}
	}
	return d
}

func unionKeys[V any](a, b map[string]V) []string {
	var ks []string
	for k := range a {
		ks = append(ks, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return slices.Compact(ks)
}
