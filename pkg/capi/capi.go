package capi

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Limits of the API server and of the ClusterResourceSet schema.
const (
	// MaxDataBytes is the most data a ConfigMap or a Secret holds: the API
	// server refuses an object whose data values add up to more (keys do
	// not count; a Secret's values count decoded).
	MaxDataBytes = 1 << 20
	// MaxResources is the most resources a ClusterResourceSet lists (its
	// CRD's maxItems).
	MaxResources = 100
)

const labelDomain = "addonpkg.io"

// The label and annotations of every ConfigMap and Secret.
const (
	// LabelClusterResourceSet is the name of the ClusterResourceSet that
	// lists the object, so that 'kubectl delete -l' finds every part.
	LabelClusterResourceSet = labelDomain + "/cluster-resource-set"
	// AnnotationMember is the set member the object holds.
	AnnotationMember = labelDomain + "/set-member"
	// AnnotationPinned, AnnotationIdentity, AnnotationDigest and
	// AnnotationVersion record the member as the lock pins it: its pinned
	// source, content identity, manifest digest (OCI sources) and version
	// (when its config has one).
	AnnotationPinned   = labelDomain + "/pinned"
	AnnotationIdentity = labelDomain + "/identity"
	AnnotationDigest   = labelDomain + "/digest"
	AnnotationVersion  = labelDomain + "/version"
	// AnnotationPart is "K/N": the object is the K-th of the N that hold
	// the member's stream.
	AnnotationPart = labelDomain + "/part"
)

// Strategy is how Cluster API applies a ClusterResourceSet's resources.
type Strategy = addonsv1.ClusterResourceSetStrategy

// The strategies of a ClusterResourceSet.
const (
	// ApplyOnce creates each object once in a cluster and never touches
	// it again. It is Cluster API's default.
	ApplyOnce = addonsv1.ClusterResourceSetStrategyApplyOnce
	// Reconcile applies a resource again whenever its data changes.
	Reconcile = addonsv1.ClusterResourceSetStrategyReconcile
)

// Member is one rendered member of a set.
type Member struct {
	// Name is its name in the set (a DNS label).
	Name string
	// Pinned, Identity, Digest and Version are recorded as annotations
	// (see FromRendered); empty ones are left out.
	Pinned, Identity, Digest, Version string
	// Result is its rendered stream.
	Result *render.Result
}

// FromRendered is the Member an unpacked, rendered add-on of a set makes
// (addonset.Member's fields): its content identity, manifest digest and
// version come from ad, which may be nil.
func FromRendered(name, pinned string, ad *unpack.Addon, res *render.Result) Member {
	m := Member{Name: name, Pinned: pinned, Result: res}
	if ad != nil {
		m.Identity = ad.Identity
		if ad.Digest.Hex != "" {
			m.Digest = ad.Digest.String()
		}
		if ad.Config != nil {
			m.Version = ad.Config.Version
		}
	}
	return m
}

// Options describe the ClusterResourceSet.
type Options struct {
	// Name is the ClusterResourceSet's name, a DNS label (at most 63
	// characters, no dots): it prefixes the name of each ConfigMap and
	// Secret, and is the value of LabelClusterResourceSet.
	Name string
	// Namespace is where every object goes, the namespace of the Clusters
	// it selects; empty leaves it out, for kubectl's namespace.
	Namespace string
	// ClusterSelector are the labels a Cluster must have to be selected
	// (matchLabels). It must not be empty: Cluster API refuses a selector
	// that selects nothing.
	ClusterSelector map[string]string
	// Strategy is ApplyOnce (the default) or Reconcile. It is always
	// written: Cluster API's controller refuses an empty one when its
	// defaulting webhook did not run.
	Strategy Strategy
	// MaxDataBytes is the most data each ConfigMap or Secret holds; 0
	// means MaxDataBytes, the API server's limit, and more is refused.
	MaxDataBytes int
}

// Result are the objects that install a set through Cluster API.
type Result struct {
	// Resources hold the members' streams, in order: a *corev1.ConfigMap
	// per part, or a *corev1.Secret for a member whose stream holds a
	// Secret.
	Resources []runtime.Object
	// ClusterResourceSet lists Resources in the same order.
	ClusterResourceSet *addonsv1.ClusterResourceSet
}

// Objects are Resources then the ClusterResourceSet: the order to apply
// them in, so that the controller finds every resource it is told of.
func (r *Result) Objects() []runtime.Object {
	return append(slices.Clone(r.Resources), r.ClusterResourceSet)
}

// ClusterResourceSet makes the ClusterResourceSet that installs members,
// in the order given (addonset.Render's dependency order), into every
// workload cluster opts.ClusterSelector selects, with the ConfigMaps and
// Secrets that hold their streams:
//
//   - A member's stream goes into the ConfigMap NAME-MEMBER; a member
//     whose stream holds a v1 Secret goes into a Secret of type
//     addons.cluster.x-k8s.io/resource-set instead, so that its Secrets
//     are not stored in a ConfigMap.
//   - Each document is one data key, numbered in stream order
//     (0001.yaml, 0002.yaml, ...): Cluster API applies a resource's keys
//     in name order and re-sorts the objects within one key by kind, so
//     one object per key keeps the order render gives.
//   - A member whose stream is larger than opts.MaxDataBytes is split at
//     document boundaries, in order, into NAME-MEMBER, NAME-MEMBER.2,
//     NAME-MEMBER.3, ... (member names have no dots, so no split name is
//     another member's). A document larger than that alone is refused
//     (SizeError).
//   - A member that renders no object gets no resource.
//
// Member names must be DNS labels and unique. More than MaxResources
// resources are refused (ErrTooManyResources), and so is a set with none
// (ErrNoResources).
func ClusterResourceSet(members []Member, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	limit := opts.MaxDataBytes
	if limit == 0 {
		limit = MaxDataBytes
	}
	strategy := opts.Strategy
	if strategy == "" {
		strategy = ApplyOnce
	}
	seen := map[string]bool{}
	var res Result
	var refs []addonsv1.ResourceRef
	for _, m := range members {
		if err := checkName("member name", m.Name); err != nil {
			return nil, err
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("%w: member %s appears twice", ErrInvalid, m.Name)
		}
		seen[m.Name] = true
		parts, secret, err := split(m, limit)
		if err != nil {
			return nil, err
		}
		for k, data := range parts {
			meta := opts.objectMeta(m, k, len(parts))
			if secret {
				res.Resources = append(res.Resources, &corev1.Secret{
					TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
					ObjectMeta: meta,
					Type:       addonsv1.ClusterResourceSetSecretType,
					Data:       data,
				})
				refs = append(refs, addonsv1.ResourceRef{Name: meta.Name, Kind: string(addonsv1.SecretClusterResourceSetResourceKind)})
				continue
			}
			cm := &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: meta,
				Data:       map[string]string{},
			}
			for key, v := range data {
				cm.Data[key] = string(v)
			}
			res.Resources = append(res.Resources, cm)
			refs = append(refs, addonsv1.ResourceRef{Name: meta.Name, Kind: string(addonsv1.ConfigMapClusterResourceSetResourceKind)})
		}
	}
	switch {
	case len(refs) == 0:
		return nil, fmt.Errorf("%w: no member of the set renders an object", ErrNoResources)
	case len(refs) > MaxResources:
		return nil, fmt.Errorf("%w: the set needs %d ConfigMaps and Secrets, over the %d one ClusterResourceSet lists: divide it between several", ErrTooManyResources, len(refs), MaxResources)
	}
	res.ClusterResourceSet = &addonsv1.ClusterResourceSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: addonsv1.GroupVersion.String(), Kind: "ClusterResourceSet"},
		ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: opts.Namespace},
		Spec: addonsv1.ClusterResourceSetSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: maps.Clone(opts.ClusterSelector)},
			Resources:       refs,
			Strategy:        string(strategy),
		},
	}
	return &res, nil
}

// split packs the member's documents, one data key each, into parts of at
// most limit bytes, in order; secret says the stream holds a Secret.
func split(m Member, limit int) (parts []map[string][]byte, secret bool, err error) {
	if m.Result == nil {
		return nil, false, fmt.Errorf("%w: member %s has no rendered stream", ErrInvalid, m.Name)
	}
	docs := m.Result.Documents
	texts := make([][]byte, len(docs))
	total := 0
	for i, d := range docs {
		// Text reads back what a render with DropText let go.
		t, err := m.Result.Text(d)
		if err != nil {
			return nil, false, fmt.Errorf("member %s: %w", m.Name, err)
		}
		texts[i] = t
		total += len(t)
		secret = secret || (d.Object.APIVersion == "v1" && d.Object.Kind == "Secret")
	}
	width := max(4, len(strconv.Itoa(len(docs))))
	size := 0
	for i, t := range texts {
		if len(t) > limit {
			return nil, false, &SizeError{Member: m.Name, MemberBytes: total, Object: docs[i].Object.String(), Bytes: len(t), Limit: limit}
		}
		if len(parts) == 0 || size+len(t) > limit {
			parts = append(parts, map[string][]byte{})
			size = 0
		}
		parts[len(parts)-1][fmt.Sprintf("%0*d.yaml", width, i+1)] = t
		size += len(t)
	}
	return parts, secret, nil
}

// ResourceName is the name of the k-th (from 0) ConfigMap or Secret that
// holds member's stream in the ClusterResourceSet name.
func ResourceName(name, member string, k int) string {
	if k == 0 {
		return name + "-" + member
	}
	return name + "-" + member + "." + strconv.Itoa(k+1)
}

func (o Options) objectMeta(m Member, k, n int) metav1.ObjectMeta {
	ann := map[string]string{
		AnnotationMember: m.Name,
		AnnotationPart:   strconv.Itoa(k+1) + "/" + strconv.Itoa(n),
	}
	for key, v := range map[string]string{AnnotationPinned: m.Pinned, AnnotationIdentity: m.Identity, AnnotationDigest: m.Digest, AnnotationVersion: m.Version} {
		if v != "" {
			ann[key] = v
		}
	}
	return metav1.ObjectMeta{
		Name:        ResourceName(o.Name, m.Name, k),
		Namespace:   o.Namespace,
		Labels:      map[string]string{LabelClusterResourceSet: o.Name},
		Annotations: ann,
	}
}

// Validate refuses options ClusterResourceSet would refuse (ErrInvalid),
// so that a caller can check them before it renders the set.
func (o Options) Validate() error {
	if err := checkName("name", o.Name); err != nil {
		return err
	}
	if o.Namespace != "" {
		if err := checkName("namespace", o.Namespace); err != nil {
			return err
		}
	}
	if len(o.ClusterSelector) == 0 {
		return fmt.Errorf("%w: no cluster selector: Cluster API refuses an empty one, which selects no cluster", ErrInvalid)
	}
	for _, k := range slices.Sorted(maps.Keys(o.ClusterSelector)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("%w: cluster selector key %q: %s", ErrInvalid, k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(o.ClusterSelector[k]); len(errs) > 0 {
			return fmt.Errorf("%w: cluster selector %s=%q: %s", ErrInvalid, k, o.ClusterSelector[k], strings.Join(errs, "; "))
		}
	}
	switch o.Strategy {
	case "", ApplyOnce, Reconcile:
	default:
		return fmt.Errorf("%w: strategy %q: want %s or %s", ErrInvalid, o.Strategy, ApplyOnce, Reconcile)
	}
	if o.MaxDataBytes < 0 || o.MaxDataBytes > MaxDataBytes {
		return fmt.Errorf("%w: %d bytes of data per ConfigMap: the API server holds 1 to %d", ErrInvalid, o.MaxDataBytes, MaxDataBytes)
	}
	return nil
}

// checkName refuses what is not a DNS label.
func checkName(what, s string) error {
	if errs := validation.IsDNS1123Label(s); len(errs) > 0 {
		return fmt.Errorf("%w: %s %q: %s", ErrInvalid, what, s, strings.Join(errs, "; "))
	}
	return nil
}
