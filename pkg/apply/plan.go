package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// planned is one object of the add-on, resolved against the cluster.
type planned struct {
	obj      *unstructured.Unstructured
	entry    InventoryEntry
	resource schema.GroupVersionResource
	// live is the object's metadata in the cluster, nil when it does
	// not exist: ownership and permissions need no more, and a CRD's
	// whole body is megabytes.
	live *metav1.PartialObjectMetadata
	// crdPending: its kind is defined by a CRD of this add-on that the
	// cluster does not serve yet.
	crdPending bool
	// nsPending: its namespace is created by this add-on.
	nsPending bool
	// unrecorded: an IfNotPresent object that exists and is not this
	// add-on's (forced past another's, or nobody's), or an ignored one:
	// it is left as it is and the inventory does not record it, so that
	// neither prune nor uninstall, nor a later apply, takes it for this
	// add-on's.
	unrecorded bool
}

// doomed is an object of the previous inventory that is not in the new
// set (or, for Uninstall, every object of the inventory).
type doomed struct {
	entry    InventoryEntry
	obj      *unstructured.Unstructured // a stub: identity only
	resource schema.GroupVersionResource
	live     *unstructured.Unstructured
	// letGo: prune and uninstall let go of it rather than delete it (a
	// system namespace, or one that holds inventories).
	letGo bool
	// unlisted says why it is not known whether a Namespace holds
	// inventories (its Secrets could not be listed): prune and uninstall
	// neither delete it nor let go of it, and the inventory keeps it.
	unlisted string
}

type plan struct {
	addon   *Addon
	objects []*planned
	// prune is what the previous inventory holds and the new set does
	// not, in reverse apply order.
	prune      []*doomed
	prev       *Inventory
	prevSecret *corev1.Secret
	setID      string
	// namespace is given to the namespaced objects that name none
	// (Client.namespaceFor).
	namespace string
	// unread are the reads the credentials were refused: the pre-flight
	// reports them (and all else missing); if it does not, the first is
	// the error.
	unread []error
	// byKey is objects by their entry's key (find).
	byKey map[string]*planned
	// madeSince: ssa made an IfNotPresent object that the plan found in
	// the cluster and not this add-on's (madeAfterPlan): the pending
	// record does not list it.
	madeSince bool
}

// crdKind is what a CRD of the add-on defines, for objects of kinds the
// cluster does not know yet.
type crdKind struct {
	crd        string
	plural     string
	namespaced bool
	// served are the versions the definition serves, in its order; nil
	// for a definition without spec.versions, which the API server's
	// validation answers for. unserved are those it lists as not served.
	served, unserved []string
}

// addonCRDs is what the add-on's CRDs define, by kind; not an ignored
// one's (ignoredInAddon): the apply never makes it, so what the cluster
// serves is all its kind's objects have.
func addonCRDs(objs []*unstructured.Unstructured) map[schema.GroupKind]crdKind {
	out := map[schema.GroupKind]crdKind{}
	for _, o := range objs {
		if ignoredInAddon(o) {
			continue
		}
		if gk, ck, ok := crdKindOf(o); ok {
			out[gk] = ck
		}
	}
	return out
}

// crdKindOf is the kind o defines; ok is false when o is no CRD.
func crdKindOf(o *unstructured.Unstructured) (gk schema.GroupKind, ck crdKind, ok bool) {
	if o.GetKind() != "CustomResourceDefinition" || !strings.HasPrefix(o.GetAPIVersion(), "apiextensions.k8s.io/") {
		return gk, ck, false
	}
	group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
	ck = crdKind{crd: o.GetName(), plural: plural, namespaced: scope == "Namespaced"}
	versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
	if len(versions) > 0 {
		ck.served = []string{}
	}
	for _, v := range versions {
		v, _ := v.(map[string]any)
		name, _, _ := unstructured.NestedString(v, "name")
		if name == "" {
			continue
		}
		if served, _, _ := unstructured.NestedBool(v, "served"); served {
			ck.served = append(ck.served, name)
		} else {
			ck.unserved = append(ck.unserved, name)
		}
	}
	return schema.GroupKind{Group: group, Kind: kind}, ck, true
}

// namespaceFor is the namespace an apply gives the namespaced objects
// that name none (see ClientOptions.Namespace): the one asked for, else
// the one the installed add-on's inventory records, else the default.
func (c *Client) namespaceFor(prev *Inventory) string {
	switch {
	case c.opts.Namespace != "":
		return c.opts.Namespace
	case prev != nil && prev.Namespace != "":
		return prev.Namespace
	}
	return c.defaultNS
}

// resolve finds an object's resource and scope, from the cluster or from
// the add-on's own CRDs, and fixes its namespace as kubectl does: ns for
// a namespaced object without one, none for a cluster-scoped one.
func (c *Client) resolve(o *unstructured.Unstructured, crds map[schema.GroupKind]crdKind, ns string) (schema.GroupVersionResource, bool, error) {
	gvk := o.GroupVersionKind()
	var (
		gvr        schema.GroupVersionResource
		namespaced bool
		pending    bool
	)
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		gvr, namespaced = m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace
	case meta.IsNoMatchError(err):
		ck, ok := crds[gvk.GroupKind()]
		if !ok {
			// An old manifest (extensions/v1beta1 Ingress, say) names a
			// version the cluster stopped serving: say which it serves.
			if others, _ := c.mapper.RESTMappings(gvk.GroupKind()); len(others) > 0 {
				return gvr, false, fmt.Errorf("%w: %s: %s is not served by the cluster, which serves %s as %s", ErrInvalid, describe(o), gvk.GroupVersion(), gvk.Kind, servedAs(others))
			}
			return gvr, false, fmt.Errorf("%w: %s: kind %s is not served by the cluster and no CustomResourceDefinition of the add-on defines it", ErrInvalid, describe(o), gvk.GroupKind())
		}
		if ck.served != nil && !slices.Contains(ck.served, gvk.Version) {
			return gvr, false, fmt.Errorf("%w: %s: the add-on's CustomResourceDefinition %s serves no version %s (it serves %s)", ErrInvalid, describe(o), ck.crd, gvk.Version, orNone(ck.served))
		}
		gvr = gvk.GroupVersion().WithResource(ck.plural)
		namespaced, pending = ck.namespaced, true
	default:
		return gvr, false, fmt.Errorf("discover %s: %w", gvk.GroupKind(), wrap(err))
	}
	if namespaced && o.GetNamespace() == "" {
		o.SetNamespace(ns)
	}
	if !namespaced {
		o.SetNamespace("")
	}
	return gvr, pending, nil
}

// servedAs lists the group-versions of mappings: "apps/v1", or
// "networking.k8s.io/v1, networking.k8s.io/v1beta1".
func servedAs(ms []*meta.RESTMapping) string {
	var gvs []string
	for _, m := range ms {
		if gv := m.GroupVersionKind.GroupVersion().String(); !slices.Contains(gvs, gv) {
			gvs = append(gvs, gv)
		}
	}
	return strings.Join(gvs, ", ")
}

// orNone joins versions, or says there are none.
func orNone(vs []string) string {
	if len(vs) == 0 {
		return "none"
	}
	return strings.Join(vs, ", ")
}

// checkClaim refuses an add-on whose name is the one its config claims
// (Addon.NameFromConfig) when the add-on installed under that name, prev,
// came from another origin: the apply would upgrade another add-on and
// prune what it does not hold. It is checked on the inventory makePlan
// reads anyway, before anything else is read.
func checkClaim(a *Addon, prev *Inventory) error {
	if !a.NameFromConfig || prev == nil || prev.Source == "" {
		// A name the installer gave is its choice. An inventory that
		// records no source (written for an Addon that named none, such
		// as a rendered stream) gives no origin to compare: refusing
		// would make every later apply by the config's name name the
		// add-on; this apply records its source, so the next one has an
		// origin to compare.
		return nil
	}
	installed, claimant := reference.Origin(prev.Source), reference.Origin(a.Source)
	if installed == claimant || reference.IsRelativeOrigin(installed) {
		// A relative path, recorded by an addonpkg that recorded local
		// sources as given, names no one place: no origin to compare,
		// as for none recorded.
		return nil
	}
	// An Addon that names no source while the installed one records one
	// is refused too: nothing shows it comes from the same place.
	return &NameClaimError{Addon: a.Name, Installed: installed, Claimant: claimant}
}

// makePlan resolves the add-on's objects, reads the inventory and the
// objects in the cluster, and refuses objects other add-ons own.
func (c *Client) makePlan(ctx context.Context, a *Addon, force bool) (*plan, error) {
	p := &plan{addon: a}
	var err error
	p.prev, p.prevSecret, err = c.readInventory(ctx, a.Name)
	if err != nil {
		// A read the credentials may not do is the pre-flight's to
		// report, with everything else they may not do.
		if !errors.Is(err, ErrForbidden) {
			return nil, err
		}
		p.unread = append(p.unread, err)
	}
	if err := checkClaim(a, p.prev); err != nil {
		return nil, err
	}
	p.setID = c.setID(a.Name)
	p.namespace = c.namespaceFor(p.prev)
	crds := addonCRDs(a.Objects)
	addonNS := map[string]bool{} // not an ignored one: the apply never makes it
	for _, o := range a.Objects {
		if o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1" && !ignoredInAddon(o) {
			addonNS[o.GetName()] = true
		}
	}
	seen := map[string]bool{}
	for _, o := range a.Objects {
		// ssa leaves out of a CRD the conversion webhook's caBundle
		// that is no certificate (upstream's placeholders: MetalLB's
		// "this is not a cert", which its controller replaces), which
		// the API server refuses: left out here, what the diff shows
		// and the immutability dry-run sends is what is applied.
		utils.RemoveCABundleFromCRD(o)
		gvr, pending, err := c.resolve(o, crds, p.namespace)
		if err != nil {
			return nil, err
		}
		if err := c.notAnInventory(o, gvr); err != nil {
			return nil, err
		}
		e := entryOf(o)
		if seen[e.key()] {
			return nil, fmt.Errorf("%w: add-on %s holds %s twice", ErrInvalid, a.Name, describe(o))
		}
		seen[e.key()] = true
		p.objects = append(p.objects, &planned{obj: o, entry: e, resource: gvr, crdPending: pending})
	}

	// In apply order, so changes are listed as they are made.
	objs := make([]*unstructured.Unstructured, len(p.objects))
	byObj := map[*unstructured.Unstructured]*planned{}
	for i, pl := range p.objects {
		objs[i], byObj[pl.obj] = pl.obj, pl
	}
	sort.Stable(ssa.SortableUnstructureds(objs))
	for i, o := range objs {
		p.objects[i] = byObj[o]
	}

	// The objects in the cluster, and the namespaces that do not exist yet.
	// A Namespace the credentials may not read is taken to exist: nothing
	// the apply does needs that read (a tenant's Role in its namespace
	// seldom grants it, and the pre-flight does not ask for it), and
	// the server says so if it does not.
	nsExists := map[string]bool{}
	for _, pl := range p.objects {
		if ns := pl.obj.GetNamespace(); ns != "" {
			nsExists[ns] = false
		}
	}
	for ns := range nsExists {
		var n corev1.Namespace
		err := c.kube.Get(ctx, client.ObjectKey{Name: ns}, &n)
		switch {
		case err == nil:
			nsExists[ns] = true
		case apierrors.IsNotFound(err):
		case apierrors.IsForbidden(err):
			nsExists[ns] = true
		default:
			return nil, fmt.Errorf("read namespace %s: %w", ns, wrap(err))
		}
	}
	if err := missingNamespaces(p.objects, nsExists, addonNS); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.opts.Concurrency * 2)
	for _, pl := range p.objects {
		if ns := pl.obj.GetNamespace(); ns != "" && !nsExists[ns] {
			pl.nsPending = addonNS[ns]
			continue
		}
		read := pl.obj
		if pl.crdPending {
			// Its kind may be served already, in another version (the
			// add-on's CRD adds the one it names): it is read there, or
			// another add-on's object would be taken without Force.
			read = &unstructured.Unstructured{}
			read.SetGroupVersionKind(pl.obj.GroupVersionKind())
			read.SetNamespace(pl.obj.GetNamespace())
			read.SetName(pl.obj.GetName())
			if m, err := c.servedAs(read); m == nil || err != nil {
				continue
			}
		}
		g.Go(func() error {
			live, err := c.getMeta(gctx, read)
			if errors.Is(err, ErrForbidden) {
				mu.Lock()
				p.unread = append(p.unread, err)
				mu.Unlock()
				return nil
			}
			pl.live = live
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, pl := range p.objects {
		if err := pl.liveInventory(); err != nil {
			return nil, err
		}
	}
	// Every object of another add-on is counted, not only the first, so
	// that the user knows what --force would adopt.
	var owned *OwnershipError
	var ownedSet string              // the ApplySet of owned's object
	foreign := map[string][]string{} // another ApplySet: its members' namespaces
	for _, pl := range p.objects {
		// An ignored object is never written: it is taken from no one.
		if pl.live == nil || force || pl.ignored() {
			continue
		}
		var e *OwnershipError
		l := pl.live.GetLabels()
		if owner := l[LabelAddon]; owner != "" && owner != a.Name {
			e = &OwnershipError{Object: describe(pl.obj), Owner: owner, Addon: a.Name}
		} else if set := l[LabelApplySetPartOf]; set != "" && set != p.setID && owner == a.Name {
			// The add-on's name, applied from another inventory namespace
			// (or applied again by another tool: see below).
			e = &OwnershipError{Object: describe(pl.obj), Owner: a.Name, Addon: a.Name, Elsewhere: true}
			foreign[set] = append(foreign[set], pl.obj.GetNamespace())
		} else if set != "" && set != p.setID {
			// A member of another tool's ApplySet (kubectl's): taking it
			// would move it out of that set, whose next prune no longer
			// sees it.
			e = &OwnershipError{Object: describe(pl.obj), Addon: a.Name, Set: set}
			foreign[set] = append(foreign[set], pl.obj.GetNamespace())
		} else if ctl := reconciledBy(pl.live); ctl != "" && owner != a.Name {
			// Another controller's (Flux, Timoni, kapp, Argo CD): it
			// applies the object again from its own source, and the two
			// would take its fields from each other on every round.
			e = &OwnershipError{Object: describe(pl.obj), Addon: a.Name, Controller: ctl}
		} else if id := l[LabelApplySetID]; id != "" && set != p.setID && id == applySetID(pl.obj.GetName(), pl.obj.GetNamespace(), pl.obj.GroupVersionKind().GroupKind()) {
			// The parent of another tool's ApplySet: its record of what
			// it applied, as an inventory is ours (unless a forced apply
			// made it this add-on's already). Take-over removed the id
			// label kubectl wrote, and an uninstall deleted it.
			e = &OwnershipError{Object: describe(pl.obj), Addon: a.Name, Set: id, Parent: describe(pl.obj)}
			if t := pl.live.Annotations[AnnotationApplySetTooling]; t != "" {
				e.Parent += fmt.Sprintf(" (tooling %q)", safetree.SanitizeN(t, 100))
			}
		}
		switch {
		case e != nil && owned == nil:
			owned, ownedSet = e, l[LabelApplySetPartOf]
		case e != nil:
			owned.More++
			if e.Owner != owned.Owner || e.Elsewhere != owned.Elsewhere || e.Set != owned.Set || e.Controller != owned.Controller {
				owned.Others++
			}
		}
	}
	if owned != nil {
		switch {
		case owned.Controller != "":
		case owned.Set != "" && owned.Parent != "":
		case owned.Set != "":
			owned.Parent, _ = c.applySetParent(ctx, owned.Set, a.Name, foreign[owned.Set])
		case owned.Elsewhere:
			// The add-on's label, and another set's: an inventory of this
			// name in another namespace, unless the set's parent is found
			// and is another tool's (kubectl apply --applyset of objects
			// this add-on once applied keeps its label).
			if parent, inventory := c.applySetParent(ctx, ownedSet, a.Name, foreign[ownedSet]); parent != "" && !inventory {
				owned.Owner, owned.Elsewhere, owned.Set, owned.Parent = "", false, ownedSet, parent
			}
		}
		return nil, owned
	}
	// An IfNotPresent object is recorded only while it is this add-on's:
	// one in the way that the checks above let through (forced, or
	// nobody's) stays as it is, and is not adopted by being listed. An
	// ignored one is recorded only while it carries the add-on's labels
	// (an earlier apply made it), marked Ignored so that no prune or
	// uninstall deletes what the add-on let go of: the record and the
	// labels agree.
	for _, pl := range p.objects {
		ours := pl.live != nil && c.owns(a.Name, pl.live.GetLabels())
		pl.unrecorded = (pl.ignored() && !ours) || (pl.leftAsIs() && !ours)
		pl.entry.Ignored = pl.ignored() && ours
	}

	// What the previous inventory holds and the new set does not. An
	// object is one uid, whatever its entry: an Event is served in two
	// groups (v1 and events.k8s.io/v1), and an upgrade that names it in
	// the other pruned the object it had just applied.
	held := map[types.UID]bool{}
	for _, pl := range p.objects {
		if pl.live != nil {
			held[pl.live.UID] = true
		}
	}
	if p.prev != nil {
		for _, e := range p.prev.Objects {
			if seen[e.key()] {
				continue
			}
			d, err := c.doomedOf(ctx, e)
			if errors.Is(err, ErrForbidden) {
				p.unread = append(p.unread, err)
				continue
			}
			if err != nil {
				return nil, err
			}
			if d != nil && (d.live == nil || !held[d.live.GetUID()]) {
				p.prune = append(p.prune, d)
			}
		}
		sortDoomed(p.prune)
	}
	return p, nil
}

// missingNamespaces refuses objects in a namespace that neither the
// cluster nor the add-on has, as resolve refuses a kind that neither
// defines: the server refuses every one of them, but only in its stage,
// after the stages before it changed the cluster. Argo CD's install.yaml
// names no namespace and ships none (upstream says `kubectl create
// namespace argocd` first): applied into argocd before that, it made its
// CRDs and ClusterRoles, failed on its first ServiceAccount, and left an
// install half made and its inventory pending.
func missingNamespaces(ps []*planned, exists, addonNS map[string]bool) error {
	var (
		first   *planned
		more    int
		missing []string
	)
	for _, pl := range ps {
		ns := pl.obj.GetNamespace()
		if ns == "" || exists[ns] || addonNS[ns] {
			continue
		}
		if first == nil {
			first = pl
		} else {
			more++
		}
		if ns := safetree.Sanitize(ns); !slices.Contains(missing, ns) {
			missing = append(missing, ns)
		}
	}
	if first == nil {
		return nil
	}
	what := describe(first.obj)
	if more > 0 {
		what += fmt.Sprintf(" and %d more %s", more, plural(more, "object", "objects"))
	}
	if len(missing) == 1 {
		return fmt.Errorf("%w: %s: namespace %s does not exist, and the add-on does not create it (create it first)", ErrInvalid, what, missing[0])
	}
	return fmt.Errorf("%w: %s: namespaces %s do not exist, and the add-on does not create them (create them first)", ErrInvalid, what, strings.Join(missing, ", "))
}

// doomedOf resolves an inventory entry; nil when its kind is gone from
// the cluster (its CRD was deleted, so the object is too).
func (c *Client) doomedOf(ctx context.Context, e InventoryEntry) (*doomed, error) {
	stub, err := e.object()
	if err != nil {
		return nil, err
	}
	m, err := c.servedAs(stub)
	if m == nil || err != nil {
		return nil, err
	}
	live, err := c.get(ctx, stub)
	if err != nil {
		return nil, err
	}
	d := &doomed{entry: e, obj: stub, resource: m.Resource, live: live}
	if live != nil {
		d.letGo, d.unlisted = c.holdsInventories(ctx, live)
	}
	return d, nil
}

// servedAs gives stub the API version the cluster serves its kind in:
// its own, or, when that one is no longer served (the kind's CRD moved
// on), the one the cluster prefers; and returns the mapping. Nil when no
// version of the kind is served: its CRD was deleted, and its objects
// with it.
func (c *Client) servedAs(stub *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := stub.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		m, err = c.mapper.RESTMapping(gvk.GroupKind())
	}
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", gvk.GroupKind(), wrap(err))
	}
	stub.SetAPIVersion(m.GroupVersionKind.GroupVersion().String())
	return m, nil
}

// get reads an object whole; nil when it does not exist.
func (c *Client) get(ctx context.Context, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return getAs(ctx, c, o, &unstructured.Unstructured{})
}

// getMeta reads an object's metadata; nil when it does not exist.
func (c *Client) getMeta(ctx context.Context, o *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	return getAs(ctx, c, o, &metav1.PartialObjectMetadata{})
}

// getAs reads o into live, given o's kind; nil when it does not exist
// (or its kind is gone).
func getAs[T client.Object](ctx context.Context, c *Client, o *unstructured.Unstructured, live T) (T, error) {
	var none T
	live.GetObjectKind().SetGroupVersionKind(o.GroupVersionKind())
	err := c.kube.Get(ctx, client.ObjectKeyFromObject(o), live)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return none, nil
	}
	if err != nil {
		return none, fmt.Errorf("read %s: %w", describe(o), wrap(err))
	}
	return live, nil
}

// label gives every object the owner label and the ApplySet membership.
func (p *plan) label() {
	for _, pl := range p.objects {
		l := pl.obj.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[LabelAddon] = p.addon.Name
		l[LabelApplySetPartOf] = p.setID
		pl.obj.SetLabels(l)
	}
}

// entries are the inventory entries of the objects, but those left
// unrecorded.
func (p *plan) entries() []InventoryEntry {
	out := make([]InventoryEntry, 0, len(p.objects))
	for _, pl := range p.objects {
		if !pl.unrecorded {
			out = append(out, pl.entry)
		}
	}
	return out
}

// reconciledBy names the controller that keeps live applied from a
// source of its own, by the labels (or Argo CD's annotation) it writes on
// every object it applies; "" for none. Helm's and kubectl's objects are
// not among them: nothing applies those again, so an add-on adopts them
// (Options.TakeOver).
func reconciledBy(live metav1.Object) string {
	l := live.GetLabels()
	for _, c := range []struct{ what, prefix string }{
		{"Flux Kustomization", "kustomize.toolkit.fluxcd.io"},
		{"Flux HelmRelease", "helm.toolkit.fluxcd.io"},
		{"Timoni instance", "instance.timoni.sh"},
	} {
		if n := l[c.prefix+"/name"]; n != "" {
			return c.what + " " + safetree.SanitizeN(l[c.prefix+"/namespace"]+"/"+n, 300)
		}
	}
	switch {
	case l["kapp.k14s.io/app"] != "":
		return "kapp app " + safetree.SanitizeN(l["kapp.k14s.io/app"], 100)
	case live.GetAnnotations()["argocd.argoproj.io/tracking-id"] != "":
		return "Argo CD (tracking id " + safetree.SanitizeN(live.GetAnnotations()["argocd.argoproj.io/tracking-id"], 300) + ")"
	}
	return ""
}
