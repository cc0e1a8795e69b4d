// Package addon holds the add-on config document of spec/addon-v1.md: the
// metadata, inventory and content identity that both forms carry; what
// kind a tree is (KindOf: plain manifests or kustomize, one kustomization
// at most); and how a Helm chart is recognised (ErrHelmChart), which
// addonpkg does not render.
package addon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Kind says how an add-on's tree turns into Kubernetes objects.
type Kind string

const (
	// KindManifests is a tree of plain YAML or JSON manifests.
	KindManifests Kind = "manifests"
	// KindKustomize is a kustomize tree with a kustomization at its root.
	KindKustomize Kind = "kustomize"
)

// ParseKind checks s names a known kind.
func ParseKind(s string) (Kind, error) {
	switch Kind(s) {
	case KindManifests, KindKustomize:
		return Kind(s), nil
	}
	return "", fmt.Errorf("unknown add-on kind %q (want %q or %q)", s, KindManifests, KindKustomize)
}

// Config is the add-on config: the artifact form's config blob, and the
// image form's io.cncf.addon.config label.
type Config struct {
	// SpecVersion is the format version, "v1".
	SpecVersion string `json:"specVersion"`
	// Name of the add-on, for example "coredns".
	Name string `json:"name"`
	// Version of the add-on, free form (semver recommended).
	Version string `json:"version,omitempty"`
	// Description is one human sentence.
	Description string `json:"description,omitempty"`
	// Kind is manifests or kustomize.
	Kind Kind `json:"kind"`
	// ContentRoot is the content directory: "/addon" in the image form,
	// "/" in the artifact form (the layers hold the tree at their root).
	ContentRoot string `json:"contentRoot"`
	// Source is where the add-on came from, usually a repository URL.
	Source string `json:"source,omitempty"`
	// Revision is the source revision, usually a commit.
	Revision string `json:"revision,omitempty"`
	// Created is the RFC 3339 build time (SOURCE_DATE_EPOCH or the commit time).
	Created string `json:"created,omitempty"`
	// Identity is the content identity of the tree: "sha256:<hex>".
	Identity string `json:"identity"`
	// Inventory lists what the add-on installs.
	Inventory Inventory `json:"inventory"`
}

// Inventory lists the objects an add-on renders to.
type Inventory struct {
	// Objects in render order.
	Objects []Object `json:"objects"`
	// CRDs are the names of the CustomResourceDefinitions the add-on provides.
	CRDs []string `json:"crds,omitempty"`
	// Images are the container images its workloads reference, sorted, unique.
	Images []string `json:"images,omitempty"`
}

// Object identifies one Kubernetes object.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String is apiVersion/kind namespace/name, how objects are named in
// messages and diffs.
func (o Object) String() string {
	if o.Namespace == "" {
		return fmt.Sprintf("%s/%s %s", o.APIVersion, o.Kind, o.Name)
	}
	return fmt.Sprintf("%s/%s %s/%s", o.APIVersion, o.Kind, o.Namespace, o.Name)
}

// Subject is Kind/namespace/name (Kind/name when cluster-scoped), control
// characters replaced (safetree.Sanitize): how Flux's ssa names an object
// in a change set, and how a change of apply, uninstall and diff names it.
func (o Object) Subject() string {
	if o.Namespace == "" {
		return safetree.Sanitize(o.Kind) + "/" + safetree.Sanitize(o.Name)
	}
	return safetree.Sanitize(o.Kind) + "/" + safetree.Sanitize(o.Namespace) + "/" + safetree.Sanitize(o.Name)
}

// Marshal encodes c as compact, deterministic JSON.
func (c *Config) Marshal() ([]byte, error) { return json.Marshal(c) }

// Sentinel errors of a config that contradicts its content.
var (
	// ErrIdentityMismatch marks a config whose identity is not the one
	// computed from the content.
	ErrIdentityMismatch = errors.New("identity does not match the content")
	// ErrKindMismatch marks a config whose kind is not the content's.
	ErrKindMismatch = errors.New("kind does not match the content")
)

// Parse decodes and checks a config document. It accepts a config that
// omits what a reader can derive: specVersion (the media type says v1;
// Parse sets it), kind, contentRoot, identity and inventory (computed from
// the content by Complete). It refuses only what is present and wrong: a
// specVersion other than v1, an unknown kind, and a missing name, which
// nothing can derive; a document with nothing in it (no bytes, null, {})
// is ErrEmptyConfig. A third-party tool can thus write a config as small
// as {"name":"coredns","version":"1.11.3"}.
func Parse(b []byte) (*Config, error) {
	if err := safetree.DefaultCap(safetree.LimitConfigBytes).Check("", int64(len(b))); err != nil {
		return nil, fmt.Errorf("add-on config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		if isEmptyJSON(b) {
			return nil, ErrEmptyConfig
		}
		return nil, fmt.Errorf("decode add-on config: %w", err)
	}
	switch c.SpecVersion {
	case "":
		c.SpecVersion = mediatypes.SpecVersion
	case mediatypes.SpecVersion:
	default:
		return nil, fmt.Errorf("add-on config: %w %q (this addonpkg reads %q)", ErrUnsupportedVersion, c.SpecVersion, mediatypes.SpecVersion)
	}
	if c.Name == "" {
		if isEmptyJSON(b) {
			return nil, ErrEmptyConfig
		}
		return nil, fmt.Errorf("add-on config: missing name")
	}
	if c.Kind != "" {
		if _, err := ParseKind(string(c.Kind)); err != nil {
			return nil, fmt.Errorf("add-on config: %w", err)
		}
	}
	return &c, nil
}

// isEmptyJSON reports whether b holds no JSON value, null or {}: it is
// asked only of a document that failed to decode or has no name.
func isEmptyJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || string(t) == "null" {
		return true
	}
	if t[0] != '{' {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(t, &m) == nil && len(m) == 0
}

// HasInventory reports whether the config carries an inventory (its
// objects array is present); a reader renders the tree to derive one
// when it does not.
func (c *Config) HasInventory() bool { return c.Inventory.Objects != nil }

// Complete fills in what the config omits from the content it describes
// (the kind and identity computed from the tree, its content root), and
// checks what it states: an identity or kind that differs from the
// content's is an error (ErrIdentityMismatch, ErrKindMismatch). The
// inventory, which takes rendering, is left to the caller (HasInventory).
func (c *Config) Complete(kind Kind, identity, contentRoot string) error {
	switch c.Identity {
	case "":
		c.Identity = identity
	case identity:
	default:
		return fmt.Errorf("%w: the content's identity is %s, the config claims %s", ErrIdentityMismatch, identity, c.Identity)
	}
	switch c.Kind {
	case "":
		c.Kind = kind
	case kind:
	default:
		return fmt.Errorf("%w: the config says the add-on is %s, its content is %s", ErrKindMismatch, c.Kind, kind)
	}
	if c.ContentRoot == "" {
		c.ContentRoot = contentRoot
	}
	return nil
}
