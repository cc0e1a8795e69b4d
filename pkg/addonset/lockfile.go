package addonset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
)

// LockFile pins every member of a set. Its bytes (Marshal) are
// deterministic: members sorted by name, no times.
type LockFile struct {
	APIVersion string   `yaml:"apiVersion" json:"apiVersion"`
	Kind       string   `yaml:"kind" json:"kind"`
	Addons     []Locked `yaml:"addons" json:"addons"`
}

// Locked is one member's pin.
type Locked struct {
	// Name is the member's name.
	Name string `yaml:"name" json:"name"`
	// Entry is the EntryDigest of the declaration entry that was locked.
	Entry string `yaml:"entry" json:"entry"`
	// Source is the entry's source, as declared.
	Source string `yaml:"source" json:"source"`
	// Tag is the tag a registry source was read at: the highest tag in
	// the version range, the tag written in the source, or "latest".
	// Render checks that it still points at Digest.
	Tag string `yaml:"tag,omitempty" json:"tag,omitempty"`
	// Pinned is the SOURCE that yields exactly this content:
	// REPO@sha256:..., a git URL with ?ref=COMMIT, an https URL with
	// ?checksum=sha256:..., oci:DIR@sha256:...; a folder's own path (its
	// identity pins it).
	Pinned string `yaml:"pinned" json:"pinned"`
	// Digest is the manifest digest of an OCI source, or the SHA-256 of an
	// https download.
	Digest string `yaml:"digest,omitempty" json:"digest,omitempty"`
	// Identity is the add-on's content identity (spec/addon-v1.md).
	Identity string `yaml:"identity" json:"identity"`
}

// Member returns the pin of the member named name.
func (l *LockFile) Member(name string) (Locked, bool) {
	for _, m := range l.Addons {
		if m.Name == name {
			return m, true
		}
	}
	return Locked{}, false
}

// lockHeader opens every lock file.
const lockHeader = "# Written by 'addonpkg lock'. Do not edit: run 'addonpkg lock' again.\n"

// Marshal returns the lock file's bytes: a comment, then YAML with the
// members sorted by name.
func (l *LockFile) Marshal() ([]byte, error) {
	c := *l
	c.APIVersion, c.Kind = APIVersion, KindLock
	c.Addons = append([]Locked{}, l.Addons...)
	sort.Slice(c.Addons, func(i, j int) bool { return c.Addons[i].Name < c.Addons[j].Name })
	if c.Addons == nil {
		c.Addons = []Locked{}
	}
	return encodeYAML(lockHeader, &c)
}

// encodeYAML is header followed by v as YAML: the bytes of the lock files
// and declarations addonpkg writes.
func encodeYAML(header string, v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ParseLock decodes a lock file strictly (see LockFile); file names it in
// errors.
func ParseLock(b []byte, file string) (*LockFile, error) {
	derr := func(member string, err error) error { return &DeclError{File: file, Member: member, Err: err} }
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var l LockFile
	if err := dec.Decode(&l); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, derr("", fmt.Errorf("%w: empty", ErrInvalid))
		}
		_, err := yamlErr(err)
		return nil, derr("", err)
	}
	if l.APIVersion != APIVersion || l.Kind != KindLock {
		return nil, derr("", fmt.Errorf("%w: apiVersion %q kind %q: want %q %q", ErrInvalid, l.APIVersion, l.Kind, APIVersion, KindLock))
	}
	seen := map[string]bool{}
	for _, m := range l.Addons {
		if err := checkName(m.Name); err != nil {
			return nil, derr("", err)
		}
		if seen[m.Name] {
			return nil, derr(m.Name, ErrDuplicateName)
		}
		seen[m.Name] = true
		for what, d := range map[string]string{"entry": m.Entry, "identity": m.Identity} {
			if !digestRE.MatchString(d) {
				return nil, derr(m.Name, fmt.Errorf("%w: %s %q: want sha256:HEX", ErrInvalid, what, d))
			}
		}
		if m.Digest != "" && !digestRE.MatchString(m.Digest) {
			return nil, derr(m.Name, fmt.Errorf("%w: digest %q: want sha256:HEX", ErrInvalid, m.Digest))
		}
		if m.Pinned == "" {
			return nil, derr(m.Name, fmt.Errorf("%w: no pinned source", ErrInvalid))
		}
	}
	return &l, nil
}

// LoadLock reads a lock file. A missing file is an error that
// errors.Is(err, fs.ErrNotExist).
func LoadLock(file string) (*LockFile, error) {
	b, err := readCapped(file)
	if err != nil {
		return nil, err
	}
	return ParseLock(b, file)
}

// WriteLock writes the lock's bytes to file atomically (a temp file beside
// it, renamed into place).
func WriteLock(l *LockFile, file string) error {
	b, err := l.Marshal()
	if err != nil {
		return err
	}
	return writeAtomic(file, b)
}

func writeAtomic(file string, b []byte) error {
	return atomicfile.WriteBytes(file, "."+filepath.Base(file)+".tmp-", 0o644, b)
}

// Stale compares a lock with the declaration and returns a *StaleError
// for the first member (in declaration order, then the lock's extras)
// that is missing, changed or no longer declared; nil when the lock pins
// the declaration as it is.
func (l *LockFile) Stale(s *Set) error {
	for _, a := range s.Addons {
		m, ok := l.Member(a.Name)
		if !ok {
			return &StaleError{Member: a.Name, Reason: "not in the lock"}
		}
		if m.Entry != a.EntryDigest() {
			return &StaleError{Member: a.Name, Reason: "its entry in the declaration changed"}
		}
	}
	for _, m := range l.Addons {
		if _, ok := s.Member(m.Name); !ok {
			return &StaleError{Member: m.Name, Reason: "no longer declared"}
		}
	}
	return nil
}

// Change is what a new lock changes for one member: Old is nil for a
// member added, New nil for one removed.
type Change struct {
	Name string
	Old  *Locked
	New  *Locked
}

func (c Change) String() string {
	pin := func(m *Locked) string {
		if m.Tag != "" {
			return m.Tag + " (" + m.Pinned + ")"
		}
		return m.Pinned
	}
	switch {
	case c.Old == nil:
		return "added " + c.Name + ": " + pin(c.New)
	case c.New == nil:
		return "removed " + c.Name
	case c.Old.Pinned == c.New.Pinned && c.Old.Identity == c.New.Identity:
		return "changed " + c.Name + ": its declaration entry"
	}
	return "changed " + c.Name + ": " + pin(c.Old) + " -> " + pin(c.New)
}

// Diff lists the members whose pin differs between two locks, sorted by
// name; prev may be nil (every member is added).
func Diff(prev, next *LockFile) []Change {
	var out []Change
	if prev == nil {
		prev = &LockFile{}
	}
	for i := range next.Addons {
		n := &next.Addons[i]
		o, ok := prev.Member(n.Name)
		switch {
		case !ok:
			out = append(out, Change{Name: n.Name, New: n})
		case o != *n:
			out = append(out, Change{Name: n.Name, Old: &o, New: n})
		}
	}
	for i := range prev.Addons {
		if _, ok := next.Member(prev.Addons[i].Name); !ok {
			out = append(out, Change{Name: prev.Addons[i].Name, Old: &prev.Addons[i]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
