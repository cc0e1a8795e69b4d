package addonset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/values"
)

// Format identifiers of the declaration and the lock file.
const (
	APIVersion = "addon.cncf.io/v1alpha1"
	KindSet    = "AddonSet"
	KindLock   = "AddonSetLock"
)

// declCap caps what Load and LoadLock read: a declaration is a short
// list, not a data file.
var declCap = safetree.DefaultCap(safetree.LimitDeclarationBytes)

// Set is a declaration: the add-ons to install together.
type Set struct {
	APIVersion string  `yaml:"apiVersion" json:"apiVersion"`
	Kind       string  `yaml:"kind" json:"kind"`
	Addons     []Addon `yaml:"addons" json:"addons"`

	// File is the declaration's path, for messages ("" when parsed from
	// bytes without a name).
	File string `yaml:"-" json:"-"`
	// Dir is the directory relative folder, oci: and oci-archive: sources
	// are resolved against: the declaration's own directory.
	Dir string `yaml:"-" json:"-"`

	lines map[string]int // member name -> line of its entry
}

// Addon is one member of a set.
type Addon struct {
	// Name is unique in the set: a DNS label (lowercase letters, digits
	// and '-', at most 63 characters).
	Name string `yaml:"name" json:"name"`
	// Source is any SOURCE addonpkg reads that can be pinned: a registry
	// reference with its host (REGISTRY/REPO[:TAG|@DIGEST]), a folder
	// (./DIR, relative to the declaration), oci:DIR, oci-archive:FILE, an
	// https URL or a git+ URL.
	Source string `yaml:"source" json:"source"`
	// Version is a semver range for a registry source written without a
	// tag ("~1.11", ">=1.11 <1.12"): the lock picks the highest matching
	// tag.
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// DependsOn names members that render before this one.
	DependsOn []string `yaml:"dependsOn,omitempty" json:"dependsOn,omitempty"`
	// ContentDir overrides the content directory of an image-form add-on.
	ContentDir string `yaml:"contentDir,omitempty" json:"contentDir,omitempty"`
	// Platform picks an image from an index: os/arch[/variant].
	Platform string `yaml:"platform,omitempty" json:"platform,omitempty"`
	// Values fill in the values the member declares for its installer
	// (package values). They configure the render, not the content: the
	// entry digest leaves them out, so changing one does not make the
	// lock stale.
	Values map[string]string `yaml:"values,omitempty" json:"values,omitempty"`
}

// EntryDigest is the SHA-256 of the member's entry in canonical form (its
// JSON encoding without whitespace or HTML escapes, fields in the order
// above, empty ones and Values left out; spec/addon-set-v1.md section
// 4.2). The lock records it, so a changed entry makes the lock stale.
func (a Addon) EntryDigest() string {
	a.Values = nil
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // ">=1.2 <2" as written, not \u003e
	_ = enc.Encode(a)        // strings and a slice of strings: cannot fail
	h := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(h[:])
}

// Member returns the member named name.
func (s *Set) Member(name string) (Addon, bool) {
	for _, a := range s.Addons {
		if a.Name == name {
			return a, true
		}
	}
	return Addon{}, false
}

// Load reads and checks the declaration in file (see Parse).
func Load(ctx context.Context, file string) (*Set, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := readCapped(file)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	return Parse(b, file, dir)
}

// readCapped reads at most declCap of file.
func readCapped(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := declCap.ReadAll("", f)
	var le *safetree.LimitError
	var pe *fs.PathError
	switch {
	case errors.As(err, &le):
		return nil, &DeclError{File: file, Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	case errors.As(err, &pe):
		return nil, err // "read FILE: is a directory" names the file already
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return b, nil
}

// docKind is the kind a YAML document's top-level mapping names, "" when
// it names none.
func docKind(doc *yaml.Node) string {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return ""
	}
	m := doc.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Value == "kind" && m[i+1].Kind == yaml.ScalarNode {
			return m[i+1].Value
		}
	}
	return ""
}

// Parse decodes and checks a declaration: strict YAML (an unknown field is
// an error), the apiVersion and kind, unique names, sources that parse and
// can be pinned, version ranges, dependencies that exist and do not form a
// cycle. file names the declaration in errors; dir resolves relative
// paths.
func Parse(b []byte, file, dir string) (*Set, error) {
	s := &Set{File: file, Dir: dir, lines: map[string]int{}}
	derr := func(line int, member string, err error) error {
		return &DeclError{File: file, Line: line, Member: member, Err: err}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, derr(0, "", fmt.Errorf("%w: empty", ErrInvalid))
		}
		line, err := yamlErr(err)
		return nil, derr(line, "", err)
	}
	if kind := docKind(&doc); kind != "" && kind != KindSet {
		// Checked first: a manifest is no set, whatever else it holds.
		return nil, derr(0, "", fmt.Errorf("%w: kind %q, want %q", ErrNotASet, kind, KindSet))
	}
	for {
		// A trailing "---" (an empty document) is harmless; another
		// document is not.
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || !emptyDoc(&extra) {
			return nil, derr(extra.Line, "", fmt.Errorf("%w: more than one YAML document", ErrInvalid))
		}
	}
	strict := yaml.NewDecoder(bytes.NewReader(b))
	strict.KnownFields(true)
	if err := strict.Decode(s); err != nil {
		line, err := yamlErr(err)
		return nil, derr(line, "", err)
	}
	if s.APIVersion != APIVersion {
		return nil, derr(0, "", fmt.Errorf("%w: apiVersion %q: want %q", ErrInvalid, s.APIVersion, APIVersion))
	}
	if s.Kind != KindSet {
		return nil, derr(0, "", fmt.Errorf("%w: kind %q: want %q", ErrInvalid, s.Kind, KindSet))
	}
	lines, ok := entryLines(&doc)
	if !ok {
		return nil, derr(0, "", fmt.Errorf("%w: no addons list", ErrInvalid))
	}
	line := func(i int) int {
		if i < len(lines) {
			return lines[i]
		}
		return 0
	}
	for i, a := range s.Addons {
		if err := checkName(a.Name); err != nil {
			return nil, derr(line(i), "", err)
		}
		if prev, dup := s.lines[a.Name]; dup {
			return nil, derr(line(i), a.Name, fmt.Errorf("%w: also declared at line %d", ErrDuplicateName, prev))
		}
		s.lines[a.Name] = line(i)
		if err := s.checkAddon(a); err != nil {
			return nil, derr(line(i), a.Name, err)
		}
	}
	for i, a := range s.Addons {
		seen := map[string]bool{}
		for _, d := range a.DependsOn {
			if _, ok := s.lines[d]; !ok {
				return nil, derr(line(i), a.Name, fmt.Errorf("%w %q: no member has that name", ErrUnknownDependency, d))
			}
			if seen[d] {
				return nil, derr(line(i), a.Name, fmt.Errorf("%w: dependsOn lists %q twice", ErrInvalid, d))
			}
			seen[d] = true
		}
	}
	if _, err := s.Order(); err != nil {
		return nil, derr(0, "", err)
	}
	return s, nil
}

// emptyDoc reports whether a decoded document holds nothing (null).
func emptyDoc(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// entryLines finds the line of each entry of the top-level "addons" list;
// ok is false when there is no such list.
func entryLines(doc *yaml.Node) (lines []int, ok bool) {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "addons" && root.Content[i+1].Kind == yaml.SequenceNode {
			for _, n := range root.Content[i+1].Content {
				lines = append(lines, n.Line)
			}
			return lines, true
		}
	}
	return nil, false
}

var unknownFieldRE = regexp.MustCompile(`line (\d+): field (\S+) not found in type`)

// yamlErr turns a decoder error into one line and the line of the
// document it names (0 if none), an unknown field into ErrUnknownField.
func yamlErr(err error) (int, error) {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		for _, e := range te.Errors {
			if m := unknownFieldRE.FindStringSubmatch(e); m != nil {
				line, _ := strconv.Atoi(m[1])
				return line, fmt.Errorf("%w %q", ErrUnknownField, m[2])
			}
		}
		return 0, fmt.Errorf("%w: %s", ErrInvalid, strings.Join(te.Errors, "; "))
	}
	return 0, fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(err.Error(), "yaml: "))
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func checkName(n string) error {
	if n == "" {
		return fmt.Errorf("%w: an add-on has no name", ErrInvalid)
	}
	if !nameRE.MatchString(n) {
		return fmt.Errorf("%w: name %q: want a DNS label (lowercase letters, digits and '-', at most 63)", ErrInvalid, n)
	}
	return nil
}

func (s *Set) checkAddon(a Addon) error {
	ref, err := s.Ref(a)
	if err != nil {
		return err
	}
	if a.Version != "" {
		if ref.Kind != source.KindRegistry {
			return fmt.Errorf("%w: version %q: only a registry source takes a version range", ErrInvalid, a.Version)
		}
		if hasTagOrDigest(ref.Name) {
			return fmt.Errorf("%w: version %q: the source %q already names a tag or digest", ErrInvalid, a.Version, a.Source)
		}
		if _, err := semver.NewConstraint(a.Version); err != nil {
			return fmt.Errorf("%w: version %q: %w", ErrInvalid, a.Version, err)
		}
	}
	for name := range a.Values {
		if err := values.CheckName(name); err != nil {
			return err
		}
	}
	if a.Platform != "" {
		if _, err := v1.ParsePlatform(a.Platform); err != nil {
			return fmt.Errorf("%w: platform %q: %w", ErrInvalid, a.Platform, err)
		}
	}
	if a.ContentDir != "" && !strings.HasPrefix(a.ContentDir, "/") {
		return fmt.Errorf("%w: contentDir %q: want an absolute path in the image", ErrInvalid, a.ContentDir)
	}
	return nil
}

// Ref parses a member's source. Relative paths of folder, oci: and
// oci-archive: sources are resolved against the declaration's directory.
// A name without a registry host (which would mean a local store) and a
// docker-archive (which has no pinned form) are refused.
func (s *Set) Ref(a Addon) (source.Ref, error) {
	if a.Source == "" {
		return source.Ref{}, fmt.Errorf("%w: no source", ErrInvalid)
	}
	src := a.Source
	// A relative path that exists beside the declaration is a folder even
	// without ./ (which would otherwise read as a store name).
	if !strings.Contains(src, ":") && !filepath.IsAbs(src) && s.Dir != "" {
		if _, err := os.Stat(filepath.Join(s.Dir, src)); err == nil {
			return source.Ref{Kind: source.KindDir, Path: filepath.Join(s.Dir, src)}, nil
		}
	}
	ref, err := source.Parse(src)
	if err != nil {
		return source.Ref{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	switch ref.Kind {
	case source.KindStore:
		return source.Ref{}, fmt.Errorf("%w: source %q names the local store: write REGISTRY/REPO, or ./DIR for a folder", ErrInvalid, a.Source)
	case source.KindDockerArchive:
		return source.Ref{}, fmt.Errorf("%w: source %q: a docker-archive cannot be pinned by digest: copy it to an oci-archive:FILE and declare that", ErrInvalid, a.Source)
	case source.KindHTTP, source.KindGit:
		// A declaration is reviewed and committed: a password or token in
		// it would travel with it (an ssh user name is no secret).
		if u, err := url.Parse(ref.URL); err == nil && u.User != nil && u.Scheme != "ssh" {
			return source.Ref{}, fmt.Errorf("%w: source %s: credentials do not belong in a declaration: use ~/.netrc or $%s", ErrInvalid, ref, source.EnvGitToken)
		}
	case source.KindDir, source.KindLayout, source.KindArchive:
		if !filepath.IsAbs(ref.Path) && s.Dir != "" {
			ref.Path = filepath.Join(s.Dir, ref.Path)
		}
	}
	return ref, nil
}

// hasTagOrDigest reports whether a registry reference names a tag or a
// digest, not only a repository.
func hasTagOrDigest(ref string) bool {
	_, version := reference.Split(ref)
	return version != ""
}

// Order returns the members in dependency order: every member after those
// it depends on, otherwise in declaration order. A cycle is a *CycleError.
func (s *Set) Order() ([]Addon, error) {
	idx := make(map[string]int, len(s.Addons))
	for i, a := range s.Addons {
		idx[a.Name] = i
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]int, len(s.Addons))
	var stack []string
	var out []Addon
	var visit func(i int) error
	visit = func(i int) error {
		switch state[i] {
		case done:
			return nil
		case visiting:
			name := s.Addons[i].Name
			start := 0
			for k, n := range stack {
				if n == name {
					start = k
				}
			}
			cycle := append(append([]string{}, stack[start:]...), name)
			return &CycleError{Cycle: cycle}
		}
		state[i] = visiting
		stack = append(stack, s.Addons[i].Name)
		for _, d := range s.Addons[i].DependsOn {
			j, ok := idx[d]
			if !ok {
				return fmt.Errorf("%w %q of %q", ErrUnknownDependency, d, s.Addons[i].Name)
			}
			if err := visit(j); err != nil {
				return err
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
		out = append(out, s.Addons[i])
		return nil
	}
	for i := range s.Addons {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UninstallOrder names the members in the order to uninstall them: the
// reverse of Order, every member before those it depends on, as they
// were installed the other way round (apply.Client.UninstallAll takes
// it).
func (s *Set) UninstallOrder() ([]string, error) {
	members, err := s.Order()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[len(members)-1-i] = m.Name
	}
	return names, nil
}

// LockPath is the lock file of a declaration: addons.yaml -> addons.lock.
func LockPath(declaration string) string {
	ext := filepath.Ext(declaration)
	return strings.TrimSuffix(declaration, ext) + ".lock"
}
