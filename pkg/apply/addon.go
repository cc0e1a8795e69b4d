package apply

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Addon is one add-on to install: who it is, where it came from, and its
// rendered objects.
type Addon struct {
	// Name identifies the add-on in the cluster: its inventory and its
	// owner label. A DNS label (lowercase, at most 63 characters).
	Name string
	// Version is the add-on's version, as its config says.
	Version string
	// Source is the pinned SOURCE it was read from (for example
	// registry.example.com/addon@sha256:...), the path of a local
	// source absolute (oci:/abs/dir@sha256:...); a folder has no pinned
	// form: its absolute path (source.Ref.Abs), which the inventory can
	// be read back against from anywhere. FromRendered takes it from
	// unpack.Addon.Source, which package source sets.
	Source string
	// Digest is its manifest digest.
	Digest string
	// Identity is its content identity (archive.Identity).
	Identity string
	// Values are the installer's values it was rendered with
	// (render.Result.Values), recorded in the inventory.
	Values map[string]string
	// Objects are the rendered objects, in any order: Apply stages them.
	Objects []*unstructured.Unstructured
	// NameFromConfig marks a Name that FromRendered took from the
	// add-on's own config, the installer having given none. A config's
	// name is a claim any package can make, not the installer's choice
	// (as Helm's release name is): so that an unrelated add-on that
	// calls itself "coredns" does not upgrade the installed coredns and
	// prune what it does not hold, Apply and Diff refuse such a name
	// (*NameClaimError) when the add-on installed under it came from
	// another origin (reference.Origin of the two Sources). A name the
	// installer gives, NameFromConfig false, is never refused so: it is
	// how a user replaces an add-on from another source on purpose.
	NameFromConfig bool
}

// FromRendered is the Addon an unpacked add-on and its rendering install:
// the rendered objects, with the version, source, manifest digest and
// content identity its inventory records. The source is ad.Source (what
// source.Resolve and source.Unpack give: the pinned SOURCE, a local path
// absolute, a folder's path), else ad.Pinned. name, when not empty,
// overrides the name the add-on's config gives; when empty, the config's
// name is taken and the Addon is marked NameFromConfig.
func FromRendered(name string, ad *unpack.Addon, res *render.Result) (Addon, error) {
	objs, err := DecodeObjects(res.YAML())
	if err != nil {
		return Addon{}, err
	}
	a := Addon{Name: name, Source: cmp.Or(ad.Source, ad.Pinned), Identity: ad.Identity, Values: res.Values, Objects: objs}
	if ad.Config != nil {
		a.Version = ad.Config.Version
		if a.Name == "" {
			a.Name, a.NameFromConfig = ad.Config.Name, true
		}
	}
	if ad.Digest.Hex != "" {
		a.Digest = ad.Digest.String()
	}
	if a.Name == "" {
		return Addon{}, fmt.Errorf("%w: the add-on's config names no add-on", ErrInvalid)
	}
	return a, nil
}

// SetMember is one rendered member of an add-on set: addonset.Member is
// one. Package apply does not import addonset, which compiles the
// registry client, the builder and the source resolver that an installer
// of rendered streams has no use for.
type SetMember interface {
	// Rendered is the member's name in the set, the source its inventory
	// records (the lock's pin, a local path absolute: a folder member
	// has no pinned form of its own), the unpacked add-on and its
	// rendering.
	Rendered() (name, source string, ad *unpack.Addon, res *render.Result)
}

// FromSet is what a rendered add-on set installs, members in the order
// given (addonset.Result's is dependency order: hand it to ApplyAll),
// each under its name in the set and recorded with its source. An error
// names the member.
func FromSet[M SetMember](members []M) ([]Addon, error) {
	out := make([]Addon, len(members))
	for i, m := range members {
		name, source, ad, res := m.Rendered()
		a, err := FromRendered(name, ad, res)
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", name, err)
		}
		a.Source = source
		out[i] = a
	}
	return out, nil
}

// DecodeObjects decodes a YAML (or JSON) stream of Kubernetes objects,
// such as render.Result.YAML() or `addonpkg unpack`'s output. Empty
// documents are dropped, Lists are replaced by their items (a document
// whose kind ends in "List" and that has items, spec/addon-v1.md 6.4),
// and an object without apiVersion, kind or metadata.name, or with a
// top-level items field and a kind that is not a List, is refused, named
// by its position.
func DecodeObjects(stream []byte) ([]*unstructured.Unstructured, error) {
	dec := yamlutil.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode document %d: %w: %s", doc, ErrInvalid, oneLine(err.Error()))
		}
		if len(raw) == 0 {
			continue
		}
		var err error
		if out, err = appendObjects(out, &unstructured.Unstructured{Object: raw}, 0); err != nil {
			return nil, fmt.Errorf("decode document %d: %w", doc, err)
		}
	}
}

// maxListDepth bounds Lists nested in Lists, as render does.
const maxListDepth = 16

// appendObjects appends u to out, or its items when it is a List, Lists
// among them flattened in turn. apimachinery (and kubectl's decoder)
// reads any object with a top-level items field as a list: a ConfigMap
// holding items: [a Deployment], which render lists as a ConfigMap
// without images, installed the Deployment, whose image no relocation
// rewrote. Only a kind ending in "List" may hold items.
func appendObjects(out []*unstructured.Unstructured, u *unstructured.Unstructured, depth int) ([]*unstructured.Unstructured, error) {
	items, has := u.Object["items"]
	if !has {
		if err := checkObject(u); err != nil {
			return nil, err
		}
		return append(out, u), nil
	}
	if !strings.HasSuffix(u.GetKind(), "List") {
		return nil, fmt.Errorf("%w: object %s has a top-level items field, which kubectl reads as a list of objects to apply in its place (only a kind ending in List may hold items)", ErrInvalid, describe(u))
	}
	if depth >= maxListDepth {
		return nil, fmt.Errorf("%w: Lists nested over %d deep", ErrInvalid, maxListDepth)
	}
	if items == nil {
		return out, nil // an empty List
	}
	list, ok := items.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: the items of a %s are not a list", ErrInvalid, safetree.Sanitize(u.GetKind()))
	}
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: item %d of a %s is not an object", ErrInvalid, i+1, safetree.Sanitize(u.GetKind()))
		}
		var err error
		if out, err = appendObjects(out, &unstructured.Unstructured{Object: m}, depth+1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func checkObject(u *unstructured.Unstructured) error {
	var missing []string
	if u.GetAPIVersion() == "" {
		missing = append(missing, "apiVersion")
	}
	if u.GetKind() == "" {
		missing = append(missing, "kind")
	}
	if u.GetName() == "" {
		missing = append(missing, "metadata.name")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: object %s has no %s", ErrInvalid, describe(u), strings.Join(missing, ", "))
	}
	for _, f := range serverWritten {
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", f); ok && v != nil {
			return fmt.Errorf("%w: object %s sets metadata.%s, which the API server writes (exported with kubectl get -o yaml?): remove it", ErrInvalid, describe(u), f)
		}
	}
	return nil
}

// serverWritten are the fields of metadata that only the API server
// writes and that an apply does not ignore: a resourceVersion installs
// once and then makes every upgrade conflict, a uid or managedFields
// fails the first apply, a deletionTimestamp the second. (A
// creationTimestamp, a generation or a selfLink is ignored.)
var serverWritten = []string{"resourceVersion", "uid", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds"}

func (a *Addon) validate() error {
	if errs := validation.IsDNS1123Label(a.Name); len(errs) > 0 {
		return &NameError{Name: a.Name, Reasons: errs}
	}
	if len(a.Objects) == 0 {
		// As kubectl apply refuses "no objects passed to apply": an
		// upgrade to nothing would prune everything the add-on owns.
		return fmt.Errorf("%w: it holds no object (to remove the add-on, uninstall it)", ErrInvalid)
	}
	for i, o := range a.Objects {
		// The caller names the add-on (Apply: "apply NAME: ").
		if o == nil {
			return fmt.Errorf("%w: object %d is nil", ErrInvalid, i)
		}
		if err := checkObject(o); err != nil {
			return err
		}
		if err := checkApplyPolicy(o); err != nil {
			return err
		}
	}
	return nil
}

// describe is Kind/namespace/name, or Kind/name for a cluster-scoped
// object, as kubectl and Flux print objects. The names are an add-on's,
// so they are sanitized: one line, no terminal escapes.
func describe(u *unstructured.Unstructured) string {
	kind := u.GetKind()
	if kind == "" {
		kind = "(no kind)"
	}
	return describeMeta(kind, u.GetNamespace(), u.GetName())
}
