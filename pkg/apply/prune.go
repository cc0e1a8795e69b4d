package apply

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// prune deletes doomed objects in reverse apply order, only those that
// carry addon's owner label, and, when wait, waits until they are gone
// (reporting the "deleting" stage before and "gone" after). It keeps an object that
// pruneExclusions keep (pruneKeptBy: AnnotationPrune=PruneDisabled,
// Flux's prune: disabled, an Ignore key), and (unless
// PruneNonEmpty) a CRD or Namespace that still holds objects other than
// those being deleted; retained lists the entries to keep in the
// inventory (the non-empty ones, to be pruned once empty). ds comes in
// reverse apply order (sortDoomed), the order its changes are listed in.
func (c *Client) prune(ctx context.Context, addon string, ds []*doomed, opts Options, wait bool) (changes []Change, retained []InventoryEntry, err error) {
	going := c.pruneGoing(addon, ds)
	// The changes are listed in ds's order, as a dry-run lists them: an
	// object kept where it stands, a deletion where ssa's result is.
	var listed []pruneSlot
	var del []*unstructured.Unstructured
	for _, d := range ds {
		if d.live == nil {
			continue // gone already
		}
		ch, deleted, retain, err := c.judge(ctx, addon, d, going, opts.PruneNonEmpty)
		if err != nil {
			return inOrder(listed, nil), retained, err
		}
		if retain {
			retained = append(retained, d.entry)
		}
		if !deleted && d.letGo && c.owns(addon, d.live.GetLabels()) && d.keptBy() == "" {
			let, err := c.letGo(ctx, addon, d.obj)
			if err != nil {
				return inOrder(listed, nil), retained, err
			}
			if !let {
				ch.Reason = "kept: it is no longer this add-on's to let go of (it changed since the plan was read)"
			}
		}
		if !deleted {
			listed = append(listed, pruneSlot{kept: &ch})
			continue
		}
		// The version read when the plan was made may be one the
		// add-on's CRD no longer serves: the API server answers 404 for
		// it, which the delete takes for done.
		m, err := c.servedAs(d.obj)
		if err != nil {
			return inOrder(listed, nil), retained, err
		}
		if m == nil {
			continue // its kind is gone, and it with it
		}
		del = append(del, d.obj)
		listed = append(listed, pruneSlot{id: d.entry.ID})
	}
	if len(del) == 0 {
		return inOrder(listed, nil), retained, nil
	}
	res, deleted, err := c.deleteAll(ctx, del, ssa.DeleteOptions{
		PropagationPolicy: metav1.DeletePropagationBackground,
		Inclusions:        map[string]string{LabelAddon: addon, LabelApplySetPartOf: c.setID(addon)},
		Exclusions:        pruneExclusions,
	})
	changes = inOrder(listed, res)
	if err != nil {
		return changes, retained, wrap(err)
	}
	if !wait {
		return changes, retained, nil
	}
	if res != nil {
		opts.report(addon, "deleting", changesOf(res))
	}
	if err := c.waitGone(ctx, deleted, opts.timeout()); err != nil {
		return changes, retained, err
	}
	if res != nil {
		opts.report(addon, "gone", changesOf(res))
	}
	return changes, retained, nil
}

// A pruneSlot is one change of a prune, in its place: an object kept
// (its Skipped change), or the ID of one deleted, whose change ssa's
// result holds.
type pruneSlot struct {
	kept *Change
	id   string
}

// inOrder is the changes of slots in their order, a deletion's from res
// (matched by ID; one res does not hold, because the delete did not
// happen, is left out); what res holds beyond them comes last.
func inOrder(slots []pruneSlot, res *ssa.ChangeSet) []Change {
	byID := map[string][]Change{}
	var ids []string
	if res != nil {
		for _, ch := range changesOf(res) {
			if byID[ch.ID] == nil {
				ids = append(ids, ch.ID)
			}
			byID[ch.ID] = append(byID[ch.ID], ch)
		}
	}
	var out []Change
	for _, s := range slots {
		switch {
		case s.kept != nil:
			out = append(out, *s.kept)
		case len(byID[s.id]) > 0:
			out = append(out, byID[s.id][0])
			byID[s.id] = byID[s.id][1:]
		}
	}
	for _, id := range ids {
		out = append(out, byID[id]...)
	}
	return out
}

// A deletion is an object a prune or an uninstall asked the API server
// to delete: its identity, and the uid of the object deleted. The wait
// for it to be gone is a wait for that uid, as kubectl wait
// --for=delete's: an object someone made again under its name since is
// another object, not the one still going.
type deletion struct {
	obj *unstructured.Unstructured
	uid types.UID
}

// deleteAll is ssa's DeleteAll, in its order (reverse apply order), with
// three differences: each delete is of the uid it read and checked
// (deleteOne), and deleted lists those; a delete that finds its object
// gone already is done, not a failure (ssa reads the object, then
// deletes it: a Namespace that finished terminating in between answered
// 404, and the uninstall failed); and the first failure is wrapped, so
// that errors.Is tells a forbidden delete from an unreachable server,
// where ssa joins them all into one string.
func (c *Client) deleteAll(ctx context.Context, objs []*unstructured.Unstructured, opts ssa.DeleteOptions) (*ssa.ChangeSet, []deletion, error) {
	sort.Sort(sort.Reverse(ssa.SortableUnstructureds(objs)))
	cs := ssa.NewChangeSet()
	var (
		deleted []deletion
		first   error
		msgs    []string
	)
	for _, o := range objs {
		e, uid, err := c.deleteOne(ctx, o, opts)
		if err != nil && c.gone(ctx, o) {
			err, e.Action = nil, ssa.DeletedAction
		}
		cs.Add(e)
		if uid != "" {
			deleted = append(deleted, deletion{obj: o, uid: uid})
		}
		if err != nil {
			first = cmp.Or(first, err)
			msgs = append(msgs, err.Error())
		}
	}
	if first != nil {
		// The errors say "Kind/ns/name delete failed: ..." already.
		return cs, deleted, fmt.Errorf("%w%s", first, strings.TrimPrefix(strings.Join(msgs, "; "), first.Error()))
	}
	return cs, deleted, nil
}

// deleteOne is ssa's Delete: it reads o, skips it unless it carries
// every label of opts.Inclusions and none of opts.Exclusions, and
// deletes it; but the delete is conditional on the uid read
// (metav1.Preconditions), so what is deleted is what was checked, not
// an object made since under its name (whose delete the server refuses
// as a conflict: it is read and checked again). uid is that of the
// object deleted, "" when none was (skipped, or gone already).
func (c *Client) deleteOne(ctx context.Context, o *unstructured.Unstructured, opts ssa.DeleteOptions) (e ssa.ChangeSetEntry, uid types.UID, err error) {
	e = ssa.ChangeSetEntry{ObjMetadata: object.UnstructuredToObjMetadata(o), GroupVersion: o.GroupVersionKind().Version,
		Subject: utils.FmtUnstructured(o), Action: ssa.UnknownAction}
	for range 3 {
		live, err := c.get(ctx, o)
		switch {
		case err != nil:
			return e, "", fmt.Errorf("%s query failed: %w", e.Subject, err)
		case live == nil:
			e.Action = ssa.DeletedAction
			return e, "", nil
		case !labels.SelectorFromSet(opts.Inclusions).Matches(labels.Set(live.GetLabels())), utils.AnyInMetadata(live, opts.Exclusions):
			e.Action = ssa.SkippedAction
			return e, "", nil
		}
		uid := live.GetUID()
		err = c.kube.Delete(ctx, live, client.PropagationPolicy(opts.PropagationPolicy), client.Preconditions{UID: &uid})
		if apierrors.IsConflict(err) {
			continue // another object of its name now: read it again
		}
		if err != nil {
			return e, "", fmt.Errorf("%s delete failed: %w", e.Subject, err)
		}
		e.Action = ssa.DeletedAction
		return e, uid, nil
	}
	return e, "", fmt.Errorf("%s delete failed: %w: it was made again under its name each time it was read", e.Subject, ErrConflict)
}

// gone reports whether o is no longer in the cluster.
func (c *Client) gone(ctx context.Context, o *unstructured.Unstructured) bool {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.GroupVersionKind())
	return apierrors.IsNotFound(c.kube.Get(ctx, client.ObjectKeyFromObject(o), live))
}

// pruneGoing is what prune deletes of ds: what is deleted with a
// Namespace or CRD. Not what it leaves (kept by AnnotationPrune, or
// carrying another's label), which the Namespace still holds.
func (c *Client) pruneGoing(addon string, ds []*doomed) map[string]bool {
	going := map[string]bool{}
	for _, d := range ds {
		if d.live != nil && c.owns(addon, d.live.GetLabels()) && d.keptBy() == "" {
			going[d.entry.key()] = true
		}
	}
	return going
}

// judge says what prune does with d, which exists: deleted, or left with
// the Skipped change that says why; retain when the inventory keeps its
// entry (a CRD or Namespace that still holds objects, to be pruned once
// empty). Apply, Diff and Uninstall, dry-run or not, judge alike.
func (c *Client) judge(ctx context.Context, addon string, d *doomed, going map[string]bool, pruneNonEmpty bool) (ch Change, deleted, retain bool, err error) {
	ch = Change{Object: describe(d.obj), ID: d.entry.ID, Version: d.obj.GetAPIVersion(), Action: Skipped}
	switch {
	case d.live.GetLabels()[LabelAddon] != addon:
		ch.Reason = "not deleted: it does not carry this add-on's owner label"
	case d.live.GetLabels()[LabelApplySetPartOf] == "":
		ch.Reason = "not deleted: it does not carry this add-on's " + LabelApplySetPartOf + " label"
	case !c.owns(addon, d.live.GetLabels()):
		ch.Reason = "not deleted: it belongs to the add-on of this name of another inventory namespace"
	case d.keptBy() != "":
		ch.Reason = "kept: " + d.keptBy()
	case isSystemNamespace(d.live):
		ch.Reason = "kept: the API server makes namespace " + d.live.GetName() + " itself; the add-on lets go of it (its labels and fields come off)"
	case d.letGo:
		ch.Reason = "kept: namespace " + d.live.GetName() + " holds add-on inventories; the add-on lets go of it (its labels and fields come off)"
	case d.unlisted != "":
		ch.Reason = "kept: cannot list its Secrets, so cannot tell whether it holds add-on inventories (" + d.unlisted + ")"
		return ch, false, true, nil
	case pruneNonEmpty:
		ch.Action, deleted = Deleted, true
	default:
		held, err := c.holds(ctx, d.live, going)
		if err != nil {
			return ch, false, false, err
		}
		if held != "" {
			ch.Reason = "kept: it still holds " + held
			return ch, false, true, nil
		}
		ch.Action, deleted = Deleted, true
	}
	return ch, deleted, false, nil
}

// holds says what a Namespace or CRD still holds besides the objects
// being deleted ("ConfigMap/ns/x and 2 more"); empty when nothing, or
// when o is neither. What it cannot list counts as held: keeping is the
// safe side. What the cluster's controllers made for the objects being
// deleted, and delete with them, is not held: an object whose owners
// (metadata.ownerReferences) are all going, or owned in turn by such
// objects (a Deployment's ReplicaSets and their Pods, a Service's
// EndpointSlices, a DaemonSet's ControllerRevisions, a Job's Pods).
// Otherwise no Namespace holding a workload would ever be pruned on a
// cluster that runs it. Endpoints are not listed: the API deprecates
// them, and the EndpointSlices mirror them. Nor are Leases: the ones a
// controller takes for its leader election (Kyverno's, ingress-nginx's,
// a CSI sidecar's) have no owner and outlive it, so the Namespace of an
// add-on whose controllers ever ran was never deleted; a Lease holds no
// one's data, only who led last.
func (c *Client) holds(ctx context.Context, o *unstructured.Unstructured, going map[string]bool) (string, error) {
	var (
		found []string
		deps  []dependent
	)
	switch {
	case isNamespace(o):
		lists, err := c.typed.Discovery().ServerPreferredNamespacedResources()
		if err != nil && len(lists) == 0 {
			return "objects it may hold (discovery failed)", nil
		}
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil {
				continue
			}
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") || r.Kind == "Event" {
					continue
				}
				if gv.Group == "" && r.Kind == "Endpoints" {
					// Deprecated (listing them warns on the user's
					// terminal) and mirrored by the EndpointSlices.
					continue
				}
				if gv.Group == "coordination.k8s.io" && r.Kind == "Lease" {
					continue // leader election's, left by the controllers
				}
				fs, ds, err := c.listHeld(ctx, gv.WithKind(r.Kind), o.GetName(), going)
				if err != nil {
					return "objects it may hold (cannot list " + r.Name + ")", nil
				}
				found = append(found, fs...)
				deps = append(deps, ds...)
			}
		}
	case isCRD(o):
		gvk, ok := crdListKind(o)
		if !ok {
			return "", nil
		}
		fs, ds, err := c.listHeld(ctx, gvk, "", going)
		if err != nil {
			return "custom resources it may hold (cannot list " + gvk.Kind + ")", nil
		}
		found, deps = fs, ds
	default:
		return "", nil
	}
	if len(found) == 0 {
		found = c.stayingDependents(ctx, deps, going)
	}
	if len(found) == 0 {
		return "", nil
	}
	sort.Strings(found)
	if len(found) == 1 {
		return found[0], nil
	}
	return fmt.Sprintf("%s and %d more", found[0], len(found)-1), nil
}

// crdListKind is the kind and version in which the custom resources of
// the CRD o are listed; false when it serves no version. The storage
// version when it is served: objects stored in it are read without the
// CRD's conversion webhook, which may not answer (its server is the
// add-on's, and broken or gone), and a list that fails keeps the CRD.
// MetalLB's bgppeers serves v1beta1 first and stores v1beta2.
func crdListKind(o *unstructured.Unstructured) (schema.GroupVersionKind, bool) {
	group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
	version := ""
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["served"] == true {
			if name, _ := m["name"].(string); version == "" || m["storage"] == true {
				version = name
			}
		}
	}
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}, version != ""
}

// A dependent is an object with owners, which goes when they all do.
type dependent struct {
	key    string // its entry key
	what   string // describeMeta
	ns     string
	owners []metav1.OwnerReference
}

// stayingDependents are the dependents that do not go with the objects
// being deleted: those with an owner that stays. An owner goes when it
// is being deleted, or is a dependent that goes (a Pod's ReplicaSet,
// whose Deployment is deleted); so does one that is no longer there or
// is being deleted, unless with its dependents orphaned (the garbage
// collector deletes its dependents). What cannot be read counts as
// staying.
func (c *Client) stayingDependents(ctx context.Context, deps []dependent, going map[string]bool) []string {
	listed := map[string]bool{}
	for _, d := range deps {
		listed[d.key] = true
	}
	leaving := map[types.UID]bool{}
	ownerGone := func(d dependent, ref metav1.OwnerReference, gone map[string]bool) bool {
		ns, cluster := ownerKeys(d.ns, ref)
		switch {
		case gone[ns] || gone[cluster]:
			return true
		case listed[ns]:
			return false // a dependent in turn, not known to go yet
		}
		if was, ok := leaving[ref.UID]; ok {
			return was
		}
		leaving[ref.UID] = c.ownerLeaving(ctx, d.ns, ref)
		return leaving[ref.UID]
	}
	gone := maps.Clone(going)
	for changed := true; changed; {
		changed = false
		for _, d := range deps {
			if gone[d.key] {
				continue
			}
			all := true
			for _, ref := range d.owners {
				if !ownerGone(d, ref, gone) {
					all = false
					break
				}
			}
			if all {
				gone[d.key], changed = true, true
			}
		}
	}
	var out []string
	for _, d := range deps {
		if !gone[d.key] {
			out = append(out, d.what)
		}
	}
	return out
}

// ownerLeaving reports whether the owner ref names, of an object in ns,
// is not in the cluster (or is another object of its name), or is being
// deleted: the garbage collector deletes its dependents. Not one being
// deleted with its dependents orphaned (its "orphan" finalizer: kubectl
// delete --cascade=orphan), whose dependents stay. False when that
// cannot be told.
func (c *Client) ownerLeaving(ctx context.Context, ns string, ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	m, err := c.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		return false
	}
	stub := &unstructured.Unstructured{}
	stub.SetGroupVersionKind(m.GroupVersionKind)
	stub.SetName(ref.Name)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		stub.SetNamespace(ns)
	}
	live, err := c.getMeta(ctx, stub)
	if err != nil {
		return false
	}
	return live == nil || live.UID != ref.UID ||
		(live.DeletionTimestamp != nil && !slices.Contains(live.Finalizers, metav1.FinalizerOrphanDependents))
}

// ownerKeys are the entry keys the owner ref names may have, of an
// object in ns: the owner in ns, and the owner cluster-scoped (a
// reference does not say which).
func ownerKeys(ns string, ref metav1.OwnerReference) (namespaced, cluster string) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return "", "" // names nothing
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	return entryFor(object.ObjMetadata{Namespace: ns, Name: ref.Name, GroupKind: gk}).key(),
		entryFor(object.ObjMetadata{Name: ref.Name, GroupKind: gk}).key()
}

// listHeld lists objects of gvk in ns (all namespaces when empty),
// leaving out those being deleted or already terminating, and what every
// namespace gets from controllers (the default ServiceAccount, the
// kube-root-ca.crt ConfigMap). Objects with owners come back apart, as
// dependents, for holds to tell whether their owners go. It reads page
// after page (of 100) until one holds an object without owners, or there
// are no more: a first page of nothing but the objects being deleted
// says nothing of the next (an add-on's 100 dashboards, and someone's
// ConfigMap after them). The lists are of the pages read.
func (c *Client) listHeld(ctx context.Context, gvk schema.GroupVersionKind, ns string, going map[string]bool) ([]string, []dependent, error) {
	var (
		out  []string
		deps []dependent
	)
	for cont := ""; ; {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		opts := []client.ListOption{client.Limit(100), client.Continue(cont)}
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := c.kube.List(ctx, l, opts...); err != nil {
			return nil, nil, err
		}
		for _, it := range l.Items {
			e := entryFor(object.ObjMetadata{Namespace: it.Namespace, Name: it.Name, GroupKind: gvk.GroupKind()})
			owners := it.OwnerReferences
			switch {
			case going[e.key()], it.DeletionTimestamp != nil:
			case gvk.Group == "" && gvk.Kind == "ServiceAccount" && it.Name == "default":
			case gvk.Group == "" && gvk.Kind == "ConfigMap" && it.Name == "kube-root-ca.crt":
			case len(owners) > 0:
				deps = append(deps, dependent{key: e.key(), what: describeMeta(gvk.Kind, it.Namespace, it.Name), ns: it.Namespace, owners: owners})
			default:
				out = append(out, describeMeta(gvk.Kind, it.Namespace, it.Name))
			}
		}
		if cont = l.GetContinue(); cont == "" || len(out) > 0 {
			return out, deps, nil
		}
	}
}

// systemNamespaces are the namespaces the API server makes itself: it
// refuses to delete the first three (its NamespaceLifecycle admission),
// and makes kube-node-lease again after a delete that took every node's
// lease with it.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// isSystemNamespace reports whether o is one of systemNamespaces. An
// add-on may hold one (a kustomization's namespace: kube-system renames
// its Namespace so): prune and uninstall, which could never delete it
// (or should not), let go of it instead of keeping it in the inventory
// for ever.
func isSystemNamespace(o *unstructured.Unstructured) bool {
	return isNamespace(o) && slices.Contains(systemNamespaces, o.GetName())
}

// holdsInventories reports whether live is a Namespace that holds
// add-on inventories, or the API server makes itself (isSystemNamespace):
// this client's inventory namespace (an installer's own, which an add-on
// may hold too), or one where a Secret is labelled LabelInventory
// (another client's). Prune and uninstall let go of it: it was kept for
// the inventories it held (this add-on's own among them, so the add-on
// could never be uninstalled), and PruneNonEmpty deleted it with every
// other add-on's inventory, whose objects then stayed, recorded nowhere.
// unlisted says why a Namespace's Secrets could not be listed: whether
// it holds inventories is not known, so it is neither deleted nor let go
// of, and stays in the inventory (a failed list counted as holding them,
// and the add-on let go of its own Namespace, left recorded nowhere).
func (c *Client) holdsInventories(ctx context.Context, live *unstructured.Unstructured) (letGo bool, unlisted string) {
	switch {
	case !isNamespace(live):
		return false, ""
	case isSystemNamespace(live), live.GetName() == c.opts.InventoryNamespace:
		return true, ""
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "SecretList"})
	if err := c.kube.List(ctx, l, client.InNamespace(live.GetName()), client.HasLabels{LabelInventory}, client.Limit(1)); err != nil {
		return false, oneLine(wrap(err).Error())
	}
	return len(l.Items) > 0, ""
}

// letGo takes off obj what the add-on applied (the fields FieldManager
// holds, its owner and ApplySet labels among them) with a server-side
// apply of nothing under that manager, leaving the object to others. Every
// add-on applies under FieldManager: another one that took obj over since
// the plan was read (Force) holds its own fields under it now, and a
// blind apply of nothing took them off. So obj is read again, and let go
// of only while it is still addon's (and not kept by AnnotationPrune), on
// the version read (a conflict reads it again); let is false when it is
// not.
func (c *Client) letGo(ctx context.Context, addon string, obj *unstructured.Unstructured) (let bool, err error) {
	for range 3 {
		live, err := c.get(ctx, obj)
		if err != nil {
			return false, fmt.Errorf("let go of %s: %w", describe(obj), err)
		}
		if live == nil || live.GetDeletionTimestamp() != nil || !c.owns(addon, live.GetLabels()) || pruneDisabled(live) {
			return false, nil
		}
		none := &unstructured.Unstructured{}
		none.SetGroupVersionKind(obj.GroupVersionKind())
		none.SetNamespace(obj.GetNamespace())
		none.SetName(obj.GetName())
		none.SetResourceVersion(live.GetResourceVersion())
		err = c.kube.Patch(ctx, none, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("let go of %s: %w", describe(obj), wrap(err))
		}
		return true, nil
	}
	return false, fmt.Errorf("let go of %s: %w: it changed each time it was read", describe(obj), ErrConflict)
}

// fluxPruneAnnotation is Flux's garbage-collection policy: an object of
// an add-on authored for Flux that says disabled (a Namespace, a PVC it
// protects) is kept, as Flux keeps it.
const fluxPruneAnnotation = "kustomize.toolkit.fluxcd.io/prune"

// pruneExclusions keep an object from ssa's delete: it reads them as
// labels and as annotations, in any case (strings.EqualFold), as Flux
// reads its own kustomize.toolkit.fluxcd.io/prune. Besides the prune
// keys, an object in the cluster that the apply leaves alone
// (ignoreSelector) is kept: its add-on has let go of it.
var pruneExclusions = func() map[string]string {
	m := map[string]string{AnnotationPrune: PruneDisabled, fluxPruneAnnotation: PruneDisabled}
	maps.Copy(m, ignoreSelector)
	return m
}()

// pruneKeys are pruneExclusions' keys, ours first, so a reason names
// ours when an object carries both.
var pruneKeys = append([]string{AnnotationPrune, fluxPruneAnnotation}, ignoreKeys...)

// pruneKeptBy is "KEY=VALUE" of the pair of pruneExclusions that keeps
// o as ssa's delete keeps it, "" when none: what prune reports and waits
// for must be what ssa does, or it waits for an object ssa kept to be
// gone until the timeout.
func pruneKeptBy(o *unstructured.Unstructured) string {
	for _, k := range pruneKeys {
		if utils.AnyInMetadata(o, map[string]string{k: pruneExclusions[k]}) {
			return k + "=" + pruneExclusions[k]
		}
	}
	return ""
}

// keptBy says what keeps d from prune and uninstall: a pair of
// pruneExclusions on the object in the cluster (pruneKeptBy), or its
// entry's InventoryEntry.Ignored (the add-on's own Ignore, which the
// object in the cluster need not carry); "" when nothing does.
func (d *doomed) keptBy() string {
	if k := pruneKeptBy(d.live); k != "" {
		return k
	}
	if d.entry.Ignored {
		return "the add-on left it alone (Ignore) when it was last applied"
	}
	return ""
}

// pruneDisabled reports whether o is kept as ssa's delete keeps it
// (pruneKeptBy).
func pruneDisabled(o *unstructured.Unstructured) bool {
	return pruneKeptBy(o) != ""
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

func isNamespace(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1"
}

func isCRD(o *unstructured.Unstructured) bool {
	return o.GetKind() == "CustomResourceDefinition" && strings.HasPrefix(o.GetAPIVersion(), "apiextensions.k8s.io/")
}
