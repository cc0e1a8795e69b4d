package addonset

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/output"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// MemberMarker starts the first document of each member in the stream
// that Result.WriteTo writes, followed by the member's name: a script
// splits the stream at lines that begin with it. Being a YAML comment, it
// changes nothing for kubectl.
const MemberMarker = "# addonpkg-set-member: "

// RenderOptions change Render.
type RenderOptions struct {
	Options
	// Lock, when set, is what the set renders from: exactly its pinned
	// sources, checked against it (a stale lock or a mismatch is an
	// error). nil resolves the declaration afresh.
	Lock *LockFile
	// AllowRemote lets a member's kustomization load remote resources.
	AllowRemote bool
	// MaxMappingKeys caps the keys of one YAML mapping in a member's
	// kustomize tree (render.Options.MaxMappingKeys); 0 means the default.
	MaxMappingKeys int
	// MaxKustomizeObjects and MaxPatchTargets cap what a member's
	// kustomize tree makes kustomize do (render.Options'); 0 means the
	// default.
	MaxKustomizeObjects, MaxPatchTargets int
}

// Member is one rendered member.
type Member struct {
	Name string `json:"name"`
	// Pinned is the source it was read from, as the lock pins it (a
	// local path relative to the declaration).
	Pinned string `json:"pinned"`
	// Source is Pinned as an inventory records it: a local path made
	// absolute, so that it names the same place read back from anywhere.
	Source   string `json:"-"`
	Identity string `json:"identity"`
	// Addon is the unpacked add-on; Result its rendered stream.
	Addon  *unpack.Addon  `json:"-"`
	Result *render.Result `json:"-"`
}

// Rendered is what apply.FromSet installs of m: its name, the source its
// inventory records (Source, else Pinned), the add-on and its rendering.
func (m Member) Rendered() (name, source string, ad *unpack.Addon, res *render.Result) {
	return m.Name, cmp.Or(m.Source, m.Pinned), m.Addon, m.Result
}

// Result is a rendered set: its members in dependency order.
type Result struct {
	Members []Member
}

// Render fetches every member (in parallel, at most opts.Concurrency at
// once), checks it against opts.Lock when set, and renders it. The members
// come back in dependency order (Set.Order); each member's stream is in the
// order package render gives it.
func Render(ctx context.Context, s *Set, opts RenderOptions) (*Result, error) {
	order, err := s.Order()
	if err != nil {
		return nil, err
	}
	if opts.Lock != nil {
		if err := opts.Lock.Stale(s); err != nil {
			return nil, err
		}
	}
	out := make([]Member, len(order))
	err = forEach(ctx, len(order), opts.Concurrency, func(ctx context.Context, i int) error {
		a := order[i]
		var (
			ad     *unpack.Addon
			pinned string
			err    error
		)
		if opts.Lock != nil {
			m, _ := opts.Lock.Member(a.Name)
			pinned = m.Pinned
			ad, err = s.fetchPinned(ctx, a, m, opts.Options)
		} else {
			var m Locked
			m, ad, err = s.resolve(ctx, a, opts.Options)
			pinned = m.Pinned
		}
		if err != nil {
			return &MemberError{Member: a.Name, Err: err}
		}
		vals := a.Values
		if vals == nil {
			vals = map[string]string{} // a member installs: its declared values are filled in
		}
		res, err := render.Addon(ctx, ad, render.Options{AllowRemote: opts.AllowRemote, MaxMappingKeys: opts.MaxMappingKeys, MaxKustomizeObjects: opts.MaxKustomizeObjects, MaxPatchTargets: opts.MaxPatchTargets, Values: vals})
		if err != nil {
			return &MemberError{Member: a.Name, Err: fmt.Errorf("render: %w", err)}
		}
		out[i] = Member{Name: a.Name, Pinned: pinned, Source: s.recorded(pinned), Identity: ad.Identity, Addon: ad, Result: res}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Result{Members: out}, nil
}

// WriteTo writes one YAML stream for 'kubectl apply -f -': the members in
// order, separated by "---", the first document of each member preceded by
// the line MemberMarker+NAME.
func (r *Result) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	cw := &countWriter{w: bw}
	for i, m := range r.Members {
		if i > 0 {
			io.WriteString(cw, "---\n")
		}
		io.WriteString(cw, MemberMarker+m.Name+"\n")
		if _, err := m.Result.WriteTo(cw); err != nil {
			return cw.n, err
		}
		if cw.err != nil {
			return cw.n, cw.err
		}
	}
	if cw.err != nil {
		return cw.n, cw.err
	}
	return cw.n, bw.Flush()
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// FileNames are the names WriteDir gives the members' streams, in order:
// NN-NAME.yaml, NN counting from 01 with as many digits as the count
// needs, so that 'kubectl apply -f DIR' (which reads a directory in name
// order) applies them in dependency order.
func (r *Result) FileNames() []string {
	width := max(2, len(strconv.Itoa(len(r.Members))))
	names := make([]string, len(r.Members))
	for i, m := range r.Members {
		names[i] = fmt.Sprintf("%0*d-%s.yaml", width, i+1, m.Name)
	}
	return names
}

// WriteDir writes each member's stream to its own file in dir (see
// FileNames). dir must not exist or be empty; it appears complete or not
// at all.
func (r *Result) WriteDir(dir string) error {
	b := filetree.NewBuilder()
	for i, n := range r.FileNames() {
		if err := b.WriteFile(n, r.Members[i].Result.YAML(), 0o644); err != nil {
			return err
		}
	}
	// output's errors name dir (ErrNotEmpty as "write DIR: output
	// directory is not empty"): wrapped again, it was named twice.
	return output.WriteDir(b.FS(), dir)
}

// recorded is the pinned source of a member with the path of a local
// source (a folder, an OCI layout or archive) absolute, no longer
// relative to the declaration; other sources are as pinned.
func (s *Set) recorded(pinned string) string {
	ref, err := s.Ref(Addon{Source: pinned})
	if err != nil {
		return pinned
	}
	switch ref.Kind {
	case source.KindDir, source.KindLayout, source.KindArchive:
		if abs, err := ref.Abs(); err == nil {
			return abs.String()
		}
	}
	return pinned
}
