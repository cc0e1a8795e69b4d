package apply

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

const labelDomain = "addonpkg.io"

// Labels and annotations addonpkg reads and writes.
const (
	// LabelAddon is the owner label of every object an add-on applies:
	// its value is the add-on's name. Prune and uninstall delete only
	// objects that carry it with their add-on's name.
	LabelAddon = labelDomain + "/name"
	// LabelInventory marks an inventory Secret.
	LabelInventory = labelDomain + "/inventory"

	// AnnotationPrune set to PruneDisabled on an object (in the add-on or
	// in the cluster) keeps it when prune or uninstall would delete it;
	// as Flux reads its own, a label does too, and the value's case does
	// not matter. Flux's kustomize.toolkit.fluxcd.io/prune: disabled, and
	// AnnotationApply=ApplyIgnore (or Flux's ssa: Ignore) on the object in
	// the cluster, keep it alike.
	AnnotationPrune = labelDomain + "/prune"
	PruneDisabled   = "disabled"
	// AnnotationWait set to WaitDisabled on an object excludes it from
	// the readiness wait.
	AnnotationWait = labelDomain + "/wait"
	WaitDisabled   = "disabled"
	// AnnotationRecreate set to RecreateEnabled on an object lets Apply
	// delete and create it again when a change of an immutable field is
	// refused, as Options.Recreate does for every object but the
	// definitions (CRDs, Namespaces, ClusterRoles), never recreated.
	AnnotationRecreate = labelDomain + "/recreate"
	RecreateEnabled    = "enabled"
	// AnnotationApply set to ApplyIfNotPresent on an object of the add-on
	// makes Apply create it when it is absent and never change it once
	// it is there (a Secret or a ConfigMap that a controller or an admin
	// fills in after the install), as Flux's
	// kustomize.toolkit.fluxcd.io/ssa: IfNotPresent, which an object may
	// carry instead, does. As ssa reads it, a label does too. Set to
	// ApplyIgnore (as Flux's kustomize.toolkit.fluxcd.io/ssa: Ignore), on
	// the object of the add-on or on the one in the cluster, Apply leaves
	// the object alone: it neither creates nor changes it, waits for it or
	// records it in the inventory, and prune and uninstall keep it. Any
	// other value is refused (ErrInvalid), not guessed at.
	AnnotationApply   = labelDomain + "/apply"
	ApplyIfNotPresent = "IfNotPresent"
	ApplyIgnore       = "Ignore"

	// The ApplySet labels and annotations of KEP-3659, so that kubectl
	// sees which objects an add-on owns: the inventory Secret is the
	// ApplySet's parent, every object its member.
	LabelApplySetID              = "applyset.kubernetes.io/id"
	LabelApplySetPartOf          = "applyset.kubernetes.io/part-of"
	AnnotationApplySetTooling    = "applyset.kubernetes.io/tooling"
	AnnotationApplySetGroupKinds = "applyset.kubernetes.io/contains-group-kinds"
	AnnotationApplySetNamespaces = "applyset.kubernetes.io/additional-namespaces"
	// Tooling is the ApplySet tooling annotation's value: kubectl refuses
	// to prune a set another tool manages.
	Tooling = "addonpkg/v1"

	// InventorySecretType is the type of inventory Secrets.
	InventorySecretType corev1.SecretType = labelDomain + "/inventory"
	// InventoryKey is the inventory's key in the Secret's data.
	InventoryKey = "inventory.json"
)

// The phases of an inventory.
const (
	// PhasePending: an apply started and did not finish. The inventory
	// lists the objects of the last finished apply and of the one that
	// started, so the next apply finishes it, or prunes what it left.
	PhasePending = "pending"
	// PhaseApplied: the last apply finished.
	PhaseApplied = "applied"
	// PhaseInvalid: Status and List's word for a corrupt inventory
	// (ErrCorruptInventory), which no inventory records itself.
	PhaseInvalid = "invalid"
)

// Inventory is what the cluster records of an installed add-on, as JSON
// under InventoryKey in the Secret InventoryName(name) of the inventory
// namespace.
type Inventory struct {
	Record
	Objects []InventoryEntry `json:"objects"`
}

// Record is what an inventory says of its add-on, beside the objects:
// who it is, where it came from, the values it was rendered with, and
// whether its last apply finished.
type Record struct {
	Name     string `json:"name"`
	Version  string `json:"version,omitempty"`
	Source   string `json:"source,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Identity string `json:"identity,omitempty"`
	// Content is the digest of the objects applied ("sha256:" and the
	// hex of their JSON, in the order given), recorded when the Addon
	// names neither Digest nor Identity: what tells a re-apply of the
	// same objects from a change under the same version.
	Content string            `json:"content,omitempty"`
	Values  map[string]string `json:"values,omitempty"`
	// Namespace is the namespace the add-on's namespaced objects that
	// name none were given (ClientOptions.Namespace): an upgrade that
	// names none keeps it.
	Namespace string `json:"namespace,omitempty"`
	Phase     string `json:"phase"`
	// Updated is when the inventory was last written; zero (and left
	// out of the JSON) for an inventory that does not decode
	// (PhaseInvalid), whose time is unknown.
	Updated time.Time `json:"updated,omitzero"`
}

// InventoryEntry is one object: ID is "<namespace>_<name>_<group>_<kind>"
// (cli-utils' inventory format; a cluster-scoped object's namespace and
// the core group are empty), Version its API version. Name is the
// object's name when the ID does not give it back: the format writes an
// RBAC name's ':' as "__", and reads every "__" as ':', so a ClusterRole
// named a__b would be read back as a:b, and never found again.
type InventoryEntry struct {
	ID      string `json:"id"`
	Version string `json:"v"`
	Name    string `json:"name,omitempty"`
	// Transient marks a Job with spec.ttlSecondsAfterFinished: the TTL
	// controller deletes it once it has finished, so gone is where it
	// ends, and Status counts it ready then, not NotFound. (An apply
	// creates it again, as Flux does: the inventory cannot tell a Job
	// that finished from one deleted before it ran.)
	Transient bool `json:"transient,omitempty"`
	// Ignored marks an object the add-on leaves alone (an Ignore key,
	// on its object or the one in the cluster) that carries the add-on's
	// labels, from an earlier apply: recorded, so that the inventory
	// lists every object that says it is the add-on's (kubectl reads the
	// ApplySet's members by that label) and another add-on is refused it
	// as this one's; but never deleted or let go of by prune or
	// uninstall (the add-on let go of it), and counted ready by Status.
	Ignored bool `json:"ignored,omitempty"`
}

// InventoryName is the name of an add-on's inventory Secret.
func InventoryName(addon string) string { return "addonpkg-" + addon }

// ApplySetID is the ApplySet id (KEP-3659) of the inventory Secret
// name/namespace: base64url(sha256("name.namespace.Secret.")) in
// "applyset-%s-v1".
func ApplySetID(name, namespace string) string {
	return applySetID(name, namespace, schema.GroupKind{Kind: "Secret"})
}

// applySetID is the ApplySet id of the parent name/namespace of kind gk:
// base64url(sha256("name.namespace.Kind.group")) in "applyset-%s-v1".
func applySetID(name, namespace string, gk schema.GroupKind) string {
	sum := sha256.Sum256([]byte(name + "." + namespace + "." + gk.Kind + "." + gk.Group))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// applySetParent looks for the parent of the ApplySet set among the
// Secrets and ConfigMaps of the namespaces nss (where kubectl keeps a
// parent: the namespace of its set's namespaced members), one whose
// name and namespace give that id, and describes it with the tool that
// manages it. It is "" when none is found or the credentials may not
// list them: the id alone names the set. inventory reports whether the
// parent is the inventory Secret of the add-on addon (in another
// inventory namespace than this client's).
func (c *Client) applySetParent(ctx context.Context, set, addon string, nss []string) (desc string, inventory bool) {
	seen := map[string]bool{}
	for _, ns := range nss {
		if ns == "" || seen[ns] {
			continue
		}
		if len(seen) == 3 {
			break
		}
		seen[ns] = true
		for _, kind := range []string{"Secret", "ConfigMap"} {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: kind + "List"})
			if err := c.kube.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{LabelApplySetID: set}, client.Limit(10)); err != nil {
				continue
			}
			for _, o := range list.Items {
				if applySetID(o.Name, o.Namespace, schema.GroupKind{Kind: kind}) != set {
					continue
				}
				d := describeMeta(kind, o.Namespace, o.Name)
				if t := o.Annotations[AnnotationApplySetTooling]; t != "" {
					d += fmt.Sprintf(" (tooling %q)", safetree.SanitizeN(t, 100))
				}
				return d, kind == "Secret" && o.Name == InventoryName(addon)
			}
		}
	}
	return "", false
}

// helmReleasePrefix begins the names of the Secrets (and ConfigMaps)
// where Helm stores its releases: another tool's inventory.
const helmReleasePrefix = "sh.helm.release.v1."

// notAnInventory refuses an object that is, or may be read as, an
// add-on's inventory: applied, it would overwrite the record of what it
// (or, forced, another add-on) owns. That is a Secret named addonpkg-* in
// this client's inventory namespace or in the default one (which other
// clients read), or a Secret of the inventory type anywhere (an inventory
// namespace another client uses: an inventory of another type is not
// read, and a Secret's type never changes), or one labelled
// LabelInventory (status and list read every such Secret of their
// namespace, and reported this one corrupt as long as it was there).
// Nor Helm's record of a release (helmReleasePrefix): Helm's objects are
// taken over, its record of them is not; an add-on's would rewrite the
// release's history, and uninstalling the add-on deleted it, so that
// helm forgot the release.
func (c *Client) notAnInventory(o *unstructured.Unstructured, gvr schema.GroupVersionResource) error {
	if gvr.Group == "" && (gvr.Resource == "secrets" || gvr.Resource == "configmaps") && strings.HasPrefix(o.GetName(), helmReleasePrefix) {
		return fmt.Errorf("%w: %s: the names %s* are Helm's release records, which an add-on may not hold", ErrInvalid, describe(o), helmReleasePrefix)
	}
	if gvr.Group != "" || gvr.Resource != "secrets" {
		return nil
	}
	for _, ns := range []string{c.opts.InventoryNamespace, DefaultInventoryNamespace} {
		if o.GetNamespace() == ns && strings.HasPrefix(o.GetName(), InventoryName("")) {
			return fmt.Errorf("%w: %s: the names %s* in %s are add-on inventories, which an add-on may not hold", ErrInvalid, describe(o), InventoryName(""), ns)
		}
	}
	if t, _, _ := unstructured.NestedString(o.Object, "type"); t == string(InventorySecretType) {
		return fmt.Errorf("%w: %s: a Secret of type %s is an add-on inventory, which an add-on may not hold", ErrInvalid, describe(o), InventorySecretType)
	}
	if _, ok := o.GetLabels()[LabelInventory]; ok {
		return fmt.Errorf("%w: %s: a Secret labelled %s is read as an add-on inventory, which an add-on may not hold", ErrInvalid, describe(o), LabelInventory)
	}
	return nil
}

// liveInventory refuses, forced or not, a Secret that is an inventory in
// the cluster (it carries LabelInventory), whatever the add-on's manifest
// says of it: server-side apply keeps a Secret's type, so a Secret that
// names none, applied over the inventory of another client's inventory
// namespace (which notAnInventory cannot tell by its name), rewrote the
// record of what that add-on owns.
func (pl *planned) liveInventory() error {
	if pl.live == nil || pl.resource.Group != "" || pl.resource.Resource != "secrets" {
		return nil
	}
	if _, ok := pl.live.Labels[LabelInventory]; ok {
		return fmt.Errorf("%w: %s: it is an add-on inventory (label %s), which an add-on may not hold", ErrInvalid, describe(pl.obj), LabelInventory)
	}
	return nil
}

// owns reports whether labels are those of an object the add-on addon
// of this client's inventory namespace applied: its owner label and its
// ApplySet. The owner label names an add-on, and an add-on of that name
// may be installed under another inventory namespace too: an inventory
// there (copied, or written by whoever may write its Secrets) pruned and
// uninstalled this one's objects.
func (c *Client) owns(addon string, labels map[string]string) bool {
	return labels[LabelAddon] == addon && labels[LabelApplySetPartOf] == c.setID(addon)
}

// setID is the ApplySet id of the add-on addon's inventory.
func (c *Client) setID(addon string) string {
	return ApplySetID(InventoryName(addon), c.opts.InventoryNamespace)
}

func entryOf(u *unstructured.Unstructured) InventoryEntry {
	e := entryFor(object.UnstructuredToObjMetadata(u))
	e.Version = u.GroupVersionKind().Version
	if u.GroupVersionKind().GroupKind() == jobKind {
		// Any number: a decoded stream's numbers are float64, not int64.
		ttl, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "ttlSecondsAfterFinished")
		e.Transient = ttl != nil
	}
	return e
}

// jobKind is the kind whose objects may delete themselves
// (InventoryEntry.Transient).
var jobKind = schema.GroupKind{Group: "batch", Kind: "Job"}

// entryFor is the entry of m, without a version: its name is recorded
// when the ID does not give it back.
func entryFor(m object.ObjMetadata) InventoryEntry {
	e := InventoryEntry{ID: m.String()}
	if back, err := object.ParseObjMetadata(e.ID); err != nil || back.Name != m.Name {
		e.Name = m.Name
	}
	return e
}

// key tells the entries of two objects apart where their IDs do not
// (ClusterRoles a:b and a__b share one): sets of entries are keyed by it.
func (e InventoryEntry) key() string { return e.ID + "\x00" + e.Name }

// object returns a stub with the entry's identity, for get and delete.
func (e InventoryEntry) object() (*unstructured.Unstructured, error) {
	m, err := object.ParseObjMetadata(e.ID)
	if err != nil {
		return nil, fmt.Errorf("entry %q: %s", e.ID, oneLine(err.Error()))
	}
	if e.Version == "" {
		return nil, fmt.Errorf("entry %q: no version", e.ID)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: m.GroupKind.Group, Version: e.Version, Kind: m.GroupKind.Kind})
	u.SetName(m.Name)
	if e.Name != "" {
		// The name may only say which of the names the ID stands for.
		if (object.ObjMetadata{Namespace: m.Namespace, Name: e.Name, GroupKind: m.GroupKind}).String() != e.ID {
			return nil, fmt.Errorf("entry %q: its name %q is not one of the id", e.ID, e.Name)
		}
		u.SetName(e.Name)
	}
	u.SetNamespace(m.Namespace)
	if e.Transient && m.GroupKind != jobKind {
		// Status would count it ready once gone: only a Job goes so.
		return nil, fmt.Errorf("entry %q: transient, but not a Job", e.ID)
	}
	return u, nil
}

// readInventory reads and decodes the inventory of the add-on name:
// nil, nil, nil when there is none.
func (c *Client) readInventory(ctx context.Context, name string) (*Inventory, *corev1.Secret, error) {
	s, err := c.inventorySecret(ctx, name)
	if s == nil || err != nil {
		return nil, nil, err
	}
	inv, err := decodeInventory(s)
	if err != nil {
		return nil, nil, err
	}
	return inv, s, nil
}

// inventorySecret reads the inventory Secret of the add-on name, without
// decoding it: nil, nil when there is none.
func (c *Client) inventorySecret(ctx context.Context, name string) (*corev1.Secret, error) {
	s, err := c.typed.CoreV1().Secrets(c.opts.InventoryNamespace).Get(ctx, InventoryName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read inventory %s/%s: %w", c.opts.InventoryNamespace, InventoryName(name), wrap(err))
	}
	return s, nil
}

// decodeInventory decodes an inventory Secret and checks what the
// record says against its rules, so that no apply or uninstall starts
// on a record it cannot finish: a corrupt one is ErrCorruptInventory,
// with what to do about it.
func decodeInventory(s *corev1.Secret) (*Inventory, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w %s/%s: %s (fix the Secret, or delete it to forget the add-on: its objects stay)",
			ErrCorruptInventory, s.Namespace, s.Name, oneLine(fmt.Sprintf(format, args...)))
	}
	if s.Type != InventorySecretType {
		return nil, corrupt("it is a Secret of type %q, not %q", s.Type, InventorySecretType)
	}
	var inv Inventory
	if err := json.Unmarshal(s.Data[InventoryKey], &inv); err != nil {
		return nil, corrupt("%s: %v", InventoryKey, err)
	}
	if InventoryName(inv.Name) != s.Name {
		return nil, corrupt("it records the add-on %q", inv.Name)
	}
	if inv.Phase != PhaseApplied && inv.Phase != PhasePending {
		return nil, corrupt("unknown phase %q", inv.Phase)
	}
	if inv.Namespace != "" {
		if errs := validation.IsDNS1123Label(inv.Namespace); len(errs) > 0 {
			return nil, corrupt("namespace %q: %s", inv.Namespace, errs[0])
		}
	}
	for _, e := range inv.Objects {
		if _, err := e.object(); err != nil {
			return nil, corrupt("%v", err)
		}
	}
	return &inv, nil
}

// writeInventory creates or updates the inventory Secret. An update
// carries the resourceVersion read, so two applies of one add-on at once
// conflict instead of overwriting each other's record.
func (c *Client) writeInventory(ctx context.Context, inv *Inventory, prev *corev1.Secret) (*corev1.Secret, error) {
	inv.Updated = time.Now().UTC().Truncate(time.Second)
	data, err := c.encodeFitting(inv)
	if err != nil {
		return nil, err
	}
	ns, name := c.opts.InventoryNamespace, InventoryName(inv.Name)
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels: map[string]string{
				LabelInventory: "true", LabelAddon: inv.Name,
				LabelApplySetID: ApplySetID(name, ns),
			},
			Annotations: map[string]string{
				AnnotationApplySetTooling:    Tooling,
				AnnotationApplySetGroupKinds: groupKinds(inv.Objects),
				AnnotationApplySetNamespaces: otherNamespaces(inv.Objects, ns),
			},
		},
		Type: InventorySecretType,
		Data: map[string][]byte{InventoryKey: data},
	}
	secrets := c.typed.CoreV1().Secrets(ns)
	var out *corev1.Secret
	if prev == nil {
		out, err = secrets.Create(ctx, s, metav1.CreateOptions{FieldManager: FieldManager})
	} else {
		s.ResourceVersion = prev.ResourceVersion
		out, err = secrets.Update(ctx, s, metav1.UpdateOptions{FieldManager: FieldManager})
	}
	if err != nil {
		return nil, fmt.Errorf("write inventory %s/%s: %w", ns, name, wrap(err))
	}
	return out, nil
}

// encodeFitting is the JSON inv is recorded as, or an
// *InventoryTooLargeError when it does not fit the Secret. The API
// server's own answer ("data: Too long") names neither the add-on's
// objects nor what to do, and comes only after the apply's dry-run of
// every object: Apply asks before it.
func (c *Client) encodeFitting(inv *Inventory) ([]byte, error) {
	data, err := encodeInventory(inv)
	if err != nil {
		return nil, err
	}
	if len(data) > maxInventoryBytes {
		secret := c.opts.InventoryNamespace + "/" + InventoryName(inv.Name)
		return nil, &InventoryTooLargeError{Addon: inv.Name, Secret: secret, Objects: len(inv.Objects), Bytes: len(data), Limit: maxInventoryBytes}
	}
	return data, nil
}

// encodeInventory is the JSON inv is recorded as, its objects sorted.
func encodeInventory(inv *Inventory) ([]byte, error) {
	sortEntries(inv.Objects)
	// Compact: a Secret holds 1 MiB, and indentation took 10-30% of it.
	// Every reader (decodeInventory, of every addonpkg version) decodes
	// JSON, so the records written indented before read as they did.
	data, err := json.Marshal(inv)
	if err != nil {
		return nil, fmt.Errorf("encode inventory: %w", err)
	}
	return data, nil
}

// upgradeTooLarge is err, the pending write of inv refused as too large
// (*InventoryTooLargeError), with Installed set when the add-on's own
// objects fit a record alone: it is the installed ones the pending
// record lists beside them that do not. Any other err as it is.
func upgradeTooLarge(err error, inv *Inventory, p *plan) error {
	var tl *InventoryTooLargeError
	if p.prev == nil || !errors.As(err, &tl) {
		return err
	}
	alone := *inv
	alone.Objects = p.entries()
	if data, eerr := encodeInventory(&alone); eerr == nil && len(data) <= maxInventoryBytes {
		tl.Installed = len(p.prev.Objects)
	}
	return err
}

// maxInventoryBytes is what a Secret's data may hold (the API server's
// validation: 1 MiB).
const maxInventoryBytes = 1 << 20

func sortEntries(es []InventoryEntry) {
	sort.Slice(es, func(i, j int) bool { return es[i].key() < es[j].key() })
}

// groupKinds is the contains-group-kinds value: "Kind.group" (or "Kind"
// for the core group), sorted, comma-separated.
func groupKinds(es []InventoryEntry) string {
	var gks []string
	for _, e := range es {
		m, err := object.ParseObjMetadata(e.ID)
		if err != nil {
			continue
		}
		gk := m.GroupKind.Kind
		if m.GroupKind.Group != "" {
			gk += "." + m.GroupKind.Group
		}
		if !slices.Contains(gks, gk) {
			gks = append(gks, gk)
		}
	}
	sort.Strings(gks)
	return strings.Join(gks, ",")
}

func otherNamespaces(es []InventoryEntry, parent string) string {
	var nss []string
	for _, e := range es {
		m, err := object.ParseObjMetadata(e.ID)
		if err != nil || m.Namespace == "" || m.Namespace == parent {
			continue
		}
		if !slices.Contains(nss, m.Namespace) {
			nss = append(nss, m.Namespace)
		}
	}
	sort.Strings(nss)
	return strings.Join(nss, ",")
}

// union is a's entries and b's, b's version winning.
func union(a, b []InventoryEntry) []InventoryEntry {
	seen := map[string]int{}
	var out []InventoryEntry
	for _, list := range [][]InventoryEntry{a, b} {
		for _, e := range list {
			if i, ok := seen[e.key()]; ok {
				out[i] = e
				continue
			}
			seen[e.key()] = len(out)
			out = append(out, e)
		}
	}
	return out
}

// subset reports whether every entry of a is in b (same version).
func subset(a, b []InventoryEntry) bool {
	in := map[InventoryEntry]bool{}
	for _, e := range b {
		in[e] = true
	}
	for _, e := range a {
		if !in[e] {
			return false
		}
	}
	return true
}

// sameRecord reports whether prev, an applied record, already says what
// inv says (but for the time), so a no-op apply need not write it.
func sameRecord(inv, prev *Inventory) bool {
	if prev == nil || prev.Phase != PhaseApplied {
		return false
	}
	a, b := *inv, *prev
	a.Updated, b.Updated = time.Time{}, time.Time{}
	a.Objects, b.Objects = slices.Clone(a.Objects), slices.Clone(b.Objects)
	sortEntries(a.Objects)
	sortEntries(b.Objects)
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
