// Package values fills the values an add-on declares for its installer
// (spec/addon-v1.md section 6.6): the declaration file at the root of
// the tree, the values an installer gives, and the substitution of
// ${NAME} and ${NAME:=default} in rendered documents, with the syntax
// and strictness of Flux's post-build substitution
// (github.com/fluxcd/pkg/envsubst).
//
// An add-on that declares nothing is never substituted: "${" in its
// documents is text. One that declares values renders only with every
// declared value given or defaulted, and refers to no value it does not
// declare.
package values

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/envsubst"
	"go.yaml.in/yaml/v3"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// File is the declaration's name at the root of the add-on's tree. Its
// name does not end in .yaml, so it is never read as a manifest.
const File = ".addonvalues"

// Format identifiers of the declaration.
const (
	APIVersion = "addon.cncf.io/v1alpha1"
	Kind       = "AddonValues"
)

// Errors, for errors.Is.
var (
	// ErrInvalid marks a declaration or a value that breaks the rules.
	ErrInvalid = errors.New("invalid values")
	// ErrMissing marks a declared value without a default that was not
	// given (MissingError says which).
	ErrMissing = errors.New("missing value")
	// ErrUnknown marks a value given, or referred to by a document, that
	// the add-on does not declare (UnknownError says which).
	ErrUnknown = errors.New("undeclared value")
)

// Value is one declared value.
type Value struct {
	// Name is what documents refer to as ${NAME}: a letter or '_', then
	// letters, digits or '_'.
	Name string `yaml:"name" json:"name"`
	// Description says what an installer should give, in one sentence.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Default is used when the installer gives nothing; nil: the value
	// is required.
	Default *string `yaml:"default,omitempty" json:"default,omitempty"`
}

// Declaration is the values an add-on declares.
type Declaration struct {
	APIVersion string  `yaml:"apiVersion" json:"apiVersion"`
	Kind       string  `yaml:"kind" json:"kind"`
	Values     []Value `yaml:"values" json:"values"`
}

// declCap caps the declaration and a values file: short lists.
var declCap = safetree.DefaultCap(safetree.LimitDeclarationBytes)

var nameRE = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

// Load reads the declaration of the tree fsys; nil (and no error) when
// the tree declares no values.
func Load(fsys fs.FS) (*Declaration, error) {
	f, err := fsys.Open(File)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", File, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", File, ErrInvalid)
	}
	b, err := declCap.ReadAll(File, f)
	if err != nil {
		return nil, readError(File, err)
	}
	return Parse(b)
}

// Parse parses a declaration.
func Parse(b []byte) (*Declaration, error) {
	var d Declaration
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", File, ErrInvalid, oneLine(err.Error()))
	}
	if d.APIVersion != APIVersion || d.Kind != Kind {
		return nil, fmt.Errorf("%s: %w: apiVersion %q, kind %q: want %q, %q", File, ErrInvalid, d.APIVersion, d.Kind, APIVersion, Kind)
	}
	if err := checkDefaults(b); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, v := range d.Values {
		if !nameRE.MatchString(v.Name) {
			return nil, fmt.Errorf("%s: %w: value name %q: want a letter or '_', then letters, digits or '_'", File, ErrInvalid, v.Name)
		}
		if seen[v.Name] {
			return nil, fmt.Errorf("%s: %w: value %s declared twice", File, ErrInvalid, v.Name)
		}
		seen[v.Name] = true
	}
	return &d, nil
}

// checkDefaults refuses a default written as null ("default:" or
// "default: ~"): decoded, it is no default, which would make the value
// required when its author wrote one; "" is the empty default.
func checkDefaults(b []byte) error {
	var d struct {
		Values []struct {
			Name    string    `yaml:"name"`
			Default yaml.Node `yaml:"default"`
		} `yaml:"values"`
	}
	if err := yaml.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("%s: %w: %s", File, ErrInvalid, oneLine(err.Error()))
	}
	for _, v := range d.Values {
		if v.Default.Kind == yaml.ScalarNode && v.Default.Tag == "!!null" {
			return fmt.Errorf("%s:%d: %w: value %s: default is null: write default: \"\" for an empty one, or leave it out for a required value", File, v.Default.Line, ErrInvalid, v.Name)
		}
	}
	return nil
}

// Names are the declared names, in declaration order.
func (d *Declaration) Names() []string {
	names := make([]string, len(d.Values))
	for i, v := range d.Values {
		names[i] = v.Name
	}
	return names
}

// MissingError lists the required values that were not given.
type MissingError struct {
	Missing []Value
}

func (e *MissingError) Error() string {
	var parts []string
	for _, v := range e.Missing {
		p := v.Name
		if v.Description != "" {
			p += " (" + v.Description + ")"
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("%s: %s", plural(len(e.Missing), "missing value", "missing values"), strings.Join(parts, "; "))
}

func (e *MissingError) Unwrap() error { return ErrMissing }

// UnknownError names values the add-on does not declare: given by the
// installer (Where is empty) or referred to by a document (Where names
// it).
type UnknownError struct {
	Names    []string
	Declared []string
	Where    string
}

func (e *UnknownError) Error() string {
	what := "it declares none"
	if len(e.Declared) > 0 {
		what = "it declares " + strings.Join(e.Declared, ", ")
	}
	if e.Where != "" {
		return fmt.Sprintf("%s: ${%s} is not a declared value (%s in %s)", e.Where, strings.Join(e.Names, "}, ${"), what, File)
	}
	return fmt.Sprintf("%s %s: the add-on does not declare %s (%s)", plural(len(e.Names), "value", "values"), strings.Join(e.Names, ", "), pronoun(len(e.Names)), what)
}

func (e *UnknownError) Unwrap() error { return ErrUnknown }

// Resolve is the values documents are filled with: each declared value
// as given, else its default. A required value not given is a
// MissingError, a given value not declared an UnknownError; d nil
// declares nothing.
func Resolve(d *Declaration, given map[string]string) (map[string]string, error) {
	declared := map[string]bool{}
	var names []string
	if d != nil {
		names = d.Names()
		for _, n := range names {
			declared[n] = true
		}
	}
	var unknown []string
	for n := range given {
		if !declared[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &UnknownError{Names: unknown, Declared: names}
	}
	if d == nil {
		return nil, nil
	}
	out := make(map[string]string, len(d.Values))
	var missing []Value
	for _, v := range d.Values {
		switch val, ok := given[v.Name]; {
		case ok:
			out[v.Name] = val
		case v.Default != nil:
			out[v.Name] = *v.Default
		default:
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return nil, &MissingError{Missing: missing}
	}
	return out, nil
}

// Expand substitutes the resolved values in a document's text, as
// Flux's post-build substitution does: ${NAME}, ${NAME:=default} and
// the other shell forms; $${NAME} is the text ${NAME}; $NAME without
// braces is left alone. where names the document in errors. A
// reference to a name not in vals is an UnknownError, with an inline
// default too: the declaration is the one list of what an installer
// can set. Only a text without '$' is left as it is: Flux also turns
// "$$" into "$" in a text that refers to no value.
func Expand(where string, text []byte, vals map[string]string) ([]byte, error) {
	if bytes.IndexByte(text, '$') < 0 {
		return text, nil
	}
	unknown := map[string]bool{}
	out, err := envsubst.Eval(string(text), func(name string) (string, bool) {
		v, ok := vals[name]
		if !ok {
			unknown[name] = true
		}
		return v, ok
	})
	if len(unknown) > 0 {
		names := slices.Sorted(maps.Keys(unknown))
		return nil, &UnknownError{Names: names, Declared: slices.Sorted(maps.Keys(vals)), Where: where}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", where, ErrInvalid, oneLine(err.Error()))
	}
	return []byte(out), nil
}

// CheckName refuses what cannot be a value's name.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: value name %q: want a letter or '_', then letters, digits or '_'", ErrInvalid, name)
	}
	return nil
}

// ParseAssignment reads NAME=VALUE, as a --set flag gives it.
func ParseAssignment(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || !nameRE.MatchString(name) {
		return "", "", fmt.Errorf("%w: %q: want NAME=VALUE, NAME a letter or '_', then letters, digits or '_'", ErrInvalid, s)
	}
	return name, value, nil
}

// ReadFile reads the values file at path (ParseFile), at most the
// declaration cap of it.
func ReadFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := declCap.ReadAll(path, f)
	if err != nil {
		return nil, readError(path, err)
	}
	return ParseFile(path, b)
}

// ParseFile reads a values file: a YAML mapping of names to scalars
// ("DNS_SERVER_IP: 10.96.0.10"); a number or a boolean is taken as its
// text. file names it in errors.
func ParseFile(file string, b []byte) (map[string]string, error) {
	if err := declCap.Check(file, int64(len(b))); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", file, ErrInvalid, oneLine(err.Error()))
	}
	out := map[string]string{}
	if doc.Kind == 0 {
		return out, nil // an empty file
	}
	m := doc.Content[0]
	if m.Kind == yaml.ScalarNode && m.Tag == "!!null" {
		return out, nil
	}
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: %w: want a mapping of names to values", file, ErrInvalid)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !nameRE.MatchString(k.Value) {
			return nil, fmt.Errorf("%s:%d: %w: value name %q", file, k.Line, ErrInvalid, k.Value)
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return nil, fmt.Errorf("%s:%d: %w: %s: want a string, a number or a boolean", file, v.Line, ErrInvalid, k.Value)
		}
		if _, dup := out[k.Value]; dup {
			return nil, fmt.Errorf("%s:%d: %w: %s given twice", file, k.Line, ErrInvalid, k.Value)
		}
		out[k.Value] = v.Value
	}
	return out, nil
}

// readError names the file of a failed read; a limit error names it
// already.
func readError(file string, err error) error {
	var le *safetree.LimitError
	if errors.As(err, &le) {
		return err
	}
	return fmt.Errorf("read %s: %w", file, err)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func pronoun(n int) string { return plural(n, "it", "them") }
