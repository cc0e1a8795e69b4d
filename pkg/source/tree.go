package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/ignore"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Tree is a SOURCE read as a plain tree rather than an OCI image: a local
// folder or file, an http download, or a git commit.
type Tree struct {
	Ref Ref
	// FS is the add-on tree, read the way folder.LoadDir reads a folder:
	// .addonignore and the default ignore rules applied, symlinks inside
	// the tree stored as their targets' content.
	FS *filetree.FS
	// Name is the default add-on name (the folder's, file's, archive's,
	// repository's or subdirectory's name).
	Name string
	// Pinned is a SOURCE that resolves to exactly this tree; empty for
	// local folders and files.
	Pinned string
	// Digest is the SHA-256 of an http body.
	Digest v1.Hash
	// Source is the URL the tree came from, credentials removed: the
	// download URL, or the repository URL; empty for local sources.
	Source string
	// Revision is a git source's full commit hash.
	Revision string
	// Time is a git source's commit time (committer date, UTC).
	Time time.Time
	// ContentDir is where the tree was: the folder, or "/SUBDIR" of an
	// archive or repository ("/" for its root).
	ContentDir string
}

// LoadTree reads a folder, file, http or git source into memory. limits
// bound the tree as they bound an unpacked image (zero fields take the
// defaults); opts.MaxDownloadBytes bounds an http body.
func LoadTree(ctx context.Context, ref Ref, opts Options, limits safetree.Limits) (*Tree, error) {
	loc := opts.location(ref.Kind)
	if loc == nil {
		return nil, notEnabled(ref)
	}
	l, ok := loc.(TreeLoader)
	if !ok {
		return nil, fmt.Errorf("%s: a %s source is an OCI image, not a tree: use Open", ref, ref.Kind)
	}
	return l.LoadTree(ctx, ref, opts, limits.WithDefaults())
}

// Error is the error of an http or git source (their LoadTree wraps
// every failure in one): one line that names the source (credentials
// removed) and the problem.
type Error struct {
	Source string
	Err    error
}

func (e *Error) Error() string {
	return oneLine(e.Source + ": " + e.Err.Error())
}

func (e *Error) Unwrap() error { return e.Err }

func sourceErr(ref Ref, err error) error {
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	return &Error{Source: ref.String(), Err: err}
}

// oneLine folds a message that a server or library spread over lines.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// treeBuilder assembles a raw tree from archive entries or git objects,
// enforcing the unpack limits and the safety rules of the unpacker: no
// absolute or climbing paths, no links that leave the tree, nothing but
// files, directories and symlinks. Paths outside the content directory
// (the //SUBDIR) are skipped.
type TreeBuilder struct {
	what    string // "the archive", "commit abc123"
	content string // "" = the root
	limits  safetree.Limits
	b       *filetree.Builder
	// seen is set once an entry at or below the content directory was
	// found; contentIsFile when the content directory is a file.
	seen, contentIsFile bool
}

// NewTreeBuilder starts a tree; what names its origin in messages ("the
// archive", "commit abc123"), content is the directory kept ("" = all),
// limits hold their defaults. Each method takes tp, the entry's path in
// the tree, and (where it differs) name, its name in messages.
func NewTreeBuilder(what, content string, limits safetree.Limits) *TreeBuilder {
	return &TreeBuilder{what: what, content: content, limits: limits, b: filetree.NewBuilder()}
}

// rel maps a clean archive path into the content directory; ok is false
// outside it. It also notes that the content directory exists.
func (t *TreeBuilder) rel(p string) (string, bool) {
	if t.content == "" {
		t.seen = t.seen || p != "."
		return p, true
	}
	if p == t.content {
		t.seen = true
		return ".", true
	}
	if strings.HasPrefix(p, t.content+"/") {
		t.seen = true
		return p[len(t.content)+1:], true
	}
	return "", false
}

// Check applies the path and count limits to a tree path.
func (t *TreeBuilder) Check(tp string) error {
	if err := t.limits.CheckPath(tp); err != nil {
		return err
	}
	return t.limits.CheckEntries(t.b.Count() + 1)
}

// Rel maps a clean path of the archive or repository into the content
// directory; in is false outside it (the entry is skipped).
func (t *TreeBuilder) Rel(p string) (tp string, in bool) { return t.rel(p) }

// ContentIsFile records that the content directory is a file, which
// Done refuses.
func (t *TreeBuilder) ContentIsFile() { t.contentIsFile = true }

// Lookup reports the mode of the entry at tp, if there is one.
func (t *TreeBuilder) Lookup(tp string) (fs.FileMode, bool) { return t.b.Lookup(tp) }

// ReadFile returns the bytes of the file at tp, if it is one (a hard
// link's target).
func (t *TreeBuilder) ReadFile(tp string) ([]byte, bool) { return t.b.ReadFile(tp) }

// safetree.Limits are the builder's limits.
func (t *TreeBuilder) Limits() safetree.Limits { return t.limits }

// CheckSize applies the file and total size limits to a file of size.
func (t *TreeBuilder) CheckSize(tp string, size int64) error {
	return t.limits.CheckFile(tp, size, t.b.Size())
}

// Mkdir adds a directory.
func (t *TreeBuilder) Mkdir(tp, name string) error {
	if err := t.Check(tp); err != nil {
		return err
	}
	if mode, ok := t.b.Lookup(tp); ok {
		if mode.IsDir() {
			return nil
		}
		return &safetree.Error{Entry: name, Reason: "duplicate entry", Err: safetree.ErrPathEscape}
	}
	return t.wrap(name, t.b.Mkdir(tp, 0o755))
}

// File adds a file with data.
func (t *TreeBuilder) File(tp, name string, data []byte, mode fs.FileMode) error {
	if err := t.Check(tp); err != nil {
		return err
	}
	if err := t.CheckSize(tp, int64(len(data))); err != nil {
		return err
	}
	if _, ok := t.b.Lookup(tp); ok {
		return &safetree.Error{Entry: name, Reason: "duplicate entry", Err: safetree.ErrPathEscape}
	}
	return t.wrap(name, t.b.WriteFile(tp, data, archive.NormalMode(mode)))
}

// Symlink adds a link whose target stays inside the tree.
func (t *TreeBuilder) Symlink(tp, name, target string) error {
	if err := t.Check(tp); err != nil {
		return err
	}
	if err := safetree.CheckLinkText(tp, target); err != nil {
		return err
	}
	if _, ok := t.b.Lookup(tp); ok {
		return &safetree.Error{Entry: name, Reason: "duplicate entry", Err: safetree.ErrPathEscape}
	}
	return t.wrap(name, t.b.Symlink(target, tp))
}

func (t *TreeBuilder) wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, filetree.ErrNotDir) {
		return &safetree.Error{Entry: name, Reason: "path passes through a symlink or file", Err: safetree.ErrLinkEscape}
	}
	return &safetree.Error{Entry: name, Reason: err.Error(), Err: safetree.ErrPathEscape}
}

// Done checks the content directory was found and finishes the tree.
func (t *TreeBuilder) Done() (*filetree.FS, error) {
	if t.contentIsFile {
		return nil, fmt.Errorf("%s in %s is a file, not a directory", t.content, t.what)
	}
	if t.content != "" && !t.seen {
		return nil, fmt.Errorf("no directory %s in %s", t.content, t.what)
	}
	raw := t.b.FS()
	// The links are judged together, through each other, before they are
	// read as their targets' content.
	if err := safetree.CheckLinks(raw); err != nil {
		return nil, err
	}
	return finishTree(raw, t.limits)
}

// maxLinkDepth bounds directory symlinks followed while finishing a tree.
const maxLinkDepth = 32

// finishTree reads a raw tree the way folder.LoadDir reads a folder:
// .addonignore and the default ignore rules apply, and symlinks (already
// known to stay inside) are replaced by their targets' content.
func finishTree(raw *filetree.FS, limits safetree.Limits) (*filetree.FS, error) {
	var rules []byte
	if st, err := raw.Lstat(ignore.FileName); err == nil && st.Mode().IsRegular() {
		rules, _ = raw.ReadFile(ignore.FileName)
	}
	m, err := ignore.Parse(rules)
	if err != nil {
		return nil, err
	}
	f := &finisher{raw: raw, ignore: m, limits: limits, b: filetree.NewBuilder()}
	if err := f.walk(".", ".", 0); err != nil {
		return nil, err
	}
	if f.files == 0 {
		return nil, fmt.Errorf("%w (the tree is empty or every file is ignored)", folder.ErrEmpty)
	}
	return f.b.FS(), nil
}

type finisher struct {
	raw    *filetree.FS
	ignore *ignore.Matcher
	limits safetree.Limits
	b      *filetree.Builder
	files  int
}

func (f *finisher) walk(src, dst string, depth int) error {
	entries, err := f.raw.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		s, d := path.Join(src, e.Name()), path.Join(dst, e.Name())
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			// As a folder's walk: a link the ignore rules leave out,
			// whatever it points to, is not read (Emacs' lock files,
			// .#a.yaml, are links that lead nowhere).
			if f.ignore.Match(d, false) && f.ignore.Match(d, true) {
				continue
			}
			st, err := f.raw.Stat(s)
			if err != nil {
				target, _ := f.raw.ReadLink(s)
				return fmt.Errorf("%s -> %s: broken symlink", safetree.Sanitize(s), safetree.Sanitize(target))
			}
			mode = st.Mode().Type()
		}
		if f.ignore.Match(d, mode.IsDir()) {
			continue
		}
		if err := f.limits.CheckEntries(f.b.Count() + 1); err != nil {
			return err
		}
		switch {
		case mode.IsDir():
			if e.Type()&fs.ModeSymlink != 0 {
				depth++
				if depth > maxLinkDepth {
					return fmt.Errorf("%s: too many levels of directory symlinks", safetree.Sanitize(s))
				}
			}
			if err := f.b.Mkdir(d, 0o755); err != nil {
				return err
			}
			if err := f.walk(s, d, depth); err != nil {
				return err
			}
		case mode.IsRegular():
			st, err := f.raw.Stat(s)
			if err != nil {
				return err
			}
			data, err := f.raw.ReadFile(s)
			if err != nil {
				return err
			}
			if err := f.limits.CheckFile(d, int64(len(data)), f.b.Size()); err != nil {
				return err
			}
			if err := f.b.WriteFile(d, data, st.Mode().Perm()); err != nil {
				return err
			}
			f.files++
		default:
			return fmt.Errorf("%s: unsupported file type (%v)", safetree.Sanitize(s), mode)
		}
	}
	return nil
}

func identity(fsys fs.FS) (string, error) {
	id, err := archive.Identity(fsys)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}
