package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/ssa"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addonpkg/addonpkg/pkg/reference"
)

// UninstallOptions tune Uninstall.
type UninstallOptions struct {
	// DryRun reports what would be deleted and deletes nothing.
	DryRun bool
	// Timeout bounds the wait for the deletions; 0: DefaultTimeout.
	Timeout time.Duration
	// NoWait returns once the deletions are asked for, as kubectl delete
	// --wait=false does, without waiting until the objects are gone (a
	// finalizer may hold one for long): the inventory is deleted all the
	// same, for what is being deleted is on its way, the API server's to
	// finish. Of several add-ons (UninstallAll), none waits for the one
	// before it. By default Uninstall waits.
	NoWait bool
	// PruneNonEmpty deletes CRDs and Namespaces that still hold other
	// objects; by default they are kept and stay in the inventory.
	PruneNonEmpty bool
	// Progress, when set, is told of the "deleting" stage (Stage), before
	// the wait for the deleted objects to be gone, and of "gone" after it
	// (neither with NoWait: there is no wait).
	Progress func(Stage)
}

// Uninstall deletes every object of the add-on's inventory that carries
// its owner label, in reverse apply order, waits until they are gone
// (unless NoWait), and then deletes the inventory. Objects that prune
// keeps are left: AnnotationPrune=PruneDisabled or Flux's
// kustomize.toolkit.fluxcd.io/prune: disabled, or, on the object in the
// cluster, an Ignore key (AnnotationApply=ApplyIgnore, Flux's ssa: Ignore
// or reconcile: disabled). CRDs and Namespaces that still hold objects
// are left (unless PruneNonEmpty) and the inventory keeps them, so a
// later Uninstall can finish. ErrNotInstalled when there is no inventory.
func (c *Client) Uninstall(ctx context.Context, name string, opts UninstallOptions) (*ChangeSet, error) {
	inv, sec, err := c.readInventory(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("uninstall %s: %w", name, err)
	}
	if inv == nil {
		return nil, fmt.Errorf("uninstall %s: %w: no inventory %s/%s%s", name, ErrNotInstalled, c.opts.InventoryNamespace, InventoryName(name), didYouMean(name, c.installedNames(ctx)))
	}
	var ds []*doomed
	for _, e := range inv.Objects {
		d, err := c.doomedOf(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("uninstall %s: %w", name, err)
		}
		if d != nil {
			ds = append(ds, d)
		}
	}
	// Reverse apply order: what depends on a CRD or a Namespace goes first.
	sortDoomed(ds)
	perms := map[Permission]bool{}
	for _, d := range ds {
		if d.live != nil {
			p := Permission{Group: d.resource.Group, Resource: d.resource.Resource, Namespace: d.obj.GetNamespace(), Name: d.obj.GetName()}
			for _, verb := range []string{"get", pruneVerb(d)} {
				p.Verb = verb
				perms[p] = true
			}
		}
	}
	verbs := []string{"get", "delete", "update"}
	if opts.DryRun {
		verbs = verbs[:1]
	}
	for _, verb := range verbs {
		perms[Permission{Verb: verb, Resource: "secrets", Namespace: c.opts.InventoryNamespace, Name: InventoryName(name)}] = true
	}
	if err := c.Preflight(ctx, sortedPermissions(perms)); err != nil {
		return nil, fmt.Errorf("uninstall %s: %w", name, err)
	}

	cs := &ChangeSet{Addon: name, DryRun: opts.DryRun}
	if opts.DryRun {
		going := c.pruneGoing(name, ds)
		for _, d := range ds {
			if d.live == nil {
				continue
			}
			ch, _, _, err := c.judge(ctx, name, d, going, opts.PruneNonEmpty)
			if err != nil {
				return cs, fmt.Errorf("uninstall %s: %w", name, err)
			}
			cs.Changes = append(cs.Changes, ch)
		}
		return cs, nil
	}

	// Mark the inventory pending first: an uninstall cut short is finished
	// by the next one (or pruned by the next apply).
	inv.Phase = PhasePending
	if sec, err = c.writeInventory(ctx, inv, sec); err != nil {
		return nil, fmt.Errorf("uninstall %s: %w", name, err)
	}
	changes, retained, err := c.prune(ctx, name, ds, Options{Timeout: opts.Timeout, PruneNonEmpty: opts.PruneNonEmpty, Progress: opts.Progress}, !opts.NoWait)
	cs.Changes = changes
	if err != nil {
		return cs, fmt.Errorf("uninstall %s: %w", name, err)
	}
	if len(retained) > 0 {
		inv.Objects, inv.Phase = retained, PhaseApplied
		if _, err := c.writeInventory(ctx, inv, sec); err != nil {
			return cs, fmt.Errorf("uninstall %s: %w", name, err)
		}
		return cs, nil
	}
	err = c.typed.CoreV1().Secrets(c.opts.InventoryNamespace).Delete(ctx, InventoryName(name), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{ResourceVersion: &sec.ResourceVersion},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return cs, fmt.Errorf("uninstall %s: delete inventory: %w", name, wrap(err))
	}
	return cs, nil
}

func sortDoomed(ds []*doomed) {
	objs := make([]*unstructured.Unstructured, len(ds))
	byKey := map[string]*doomed{}
	for i, d := range ds {
		objs[i] = d.obj
		byKey[d.entry.key()] = d
	}
	sort.Sort(sort.Reverse(ssa.SortableUnstructureds(objs)))
	for i, o := range objs {
		ds[i] = byKey[entryOf(o).key()]
	}
}

// Installed is one add-on as its inventory records it, and how ready its
// objects are now.
type Installed struct {
	Record
	// Objects counts the objects its inventory lists.
	Objects int `json:"objects"`
	// Ready counts those ready now that still carry its owner label,
	// the Jobs gone after they finished (InventoryEntry.Transient), and
	// those it leaves alone (InventoryEntry.Ignored), not its to make
	// ready.
	Ready int `json:"ready"`
	// Unready names each other one: "Kind/ns/name: Status", "...: owned
	// by add-on OTHER" for one another add-on adopted (Force), or "...:
	// not owned by this add-on" for one whose owner label is gone. It is
	// UnreadyObjects said one line each (ObjectStatus.String), in its
	// order: for people, not to be parsed.
	Unready []string `json:"unready,omitempty"`
	// UnreadyObjects is each object counted in Objects and not in
	// Ready, and why (InProgress, Failed, Terminating, NotFound,
	// OwnedByOther, NotOwned, Unreadable): what a caller tells them
	// apart by.
	UnreadyObjects []ObjectStatus `json:"unreadyObjects,omitempty"`
	// Error says, in one line, why the inventory could not be read
	// (Phase PhaseInvalid).
	Error string `json:"error,omitempty"`
}

// unready lists o, and says it in Unready.
func (st *Installed) unready(o ObjectStatus) {
	st.UnreadyObjects = append(st.UnreadyObjects, o)
	st.Unready = append(st.Unready, o.String())
}

// List returns the records of the installed add-ons, by name, from
// their inventories alone: unlike Status it reads none of their objects.
// A corrupt inventory is listed with Phase PhaseInvalid, and the error
// beside the list (matching ErrCorruptInventory) names it.
func (c *Client) List(ctx context.Context) ([]Record, error) {
	secrets, err := c.listInventories(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(secrets))
	var errs []error
	for i := range secrets {
		inv, err := decodeInventory(&secrets[i])
		if err != nil {
			errs = append(errs, err)
			out = append(out, invalidRecord(&secrets[i]))
			continue
		}
		out = append(out, inv.Record)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

// invalidRecord is what List and Status say of a corrupt inventory: its
// add-on's name, taken from the Secret's name (the labels may be as
// broken as the data).
func invalidRecord(s *corev1.Secret) Record {
	return Record{Name: strings.TrimPrefix(s.Name, InventoryName("")), Phase: PhaseInvalid}
}

// didYouMean is "; did you mean A, B?" naming the installed add-ons
// whose names look like name (a typo), or "" when none does.
func didYouMean(name string, installed []string) string {
	if closest := reference.Closest(name, installed); len(closest) > 0 {
		return "; did you mean " + strings.Join(closest, ", ") + "?"
	}
	return ""
}

// installedNames names the add-ons whose inventories are in the
// inventory namespace, for suggestions: none (an empty, non-nil list)
// when they cannot be listed, which a suggestion does not need.
func (c *Client) installedNames(ctx context.Context) []string {
	secrets, err := c.listInventories(ctx)
	if err != nil {
		return []string{}
	}
	names := make([]string, 0, len(secrets))
	for _, s := range secrets {
		names = append(names, invalidRecord(&s).Name)
	}
	return names
}

func (c *Client) listInventories(ctx context.Context) ([]corev1.Secret, error) {
	l, err := c.typed.CoreV1().Secrets(c.opts.InventoryNamespace).List(ctx, metav1.ListOptions{LabelSelector: LabelInventory + "=true"})
	if err != nil {
		return nil, fmt.Errorf("list inventories in %s: %w", c.opts.InventoryNamespace, wrap(err))
	}
	return l.Items, nil
}

// Status lists the installed add-ons (all of them, or those named), by
// name, with the readiness of their objects (kstatus, read now). A
// corrupt inventory does not hide the others: it is listed with Phase
// PhaseInvalid and its Error, and the error returned beside the list
// (matching ErrCorruptInventory) names each one; so does a name that is
// not installed (ErrNotInstalled), as kubectl get reports the objects it
// found beside those it did not, and an add-on some of whose objects
// could not be read (matching the cause: ErrForbidden for a user who
// may read the inventories but not the objects, ErrUnreachable): those
// are in its UnreadyObjects as Unreadable (and in its Unready), their
// readiness unknown.
func (c *Client) Status(ctx context.Context, names ...string) ([]Installed, error) {
	var secrets []corev1.Secret
	var errs []error
	if len(names) == 0 {
		var err error
		if secrets, err = c.listInventories(ctx); err != nil {
			return nil, err
		}
	} else {
		var installed []string // read once, for the first name not installed
		for _, n := range names {
			s, err := c.inventorySecret(ctx, n)
			if err != nil {
				return nil, fmt.Errorf("status %s: %w", n, err)
			}
			if s == nil {
				if installed == nil {
					installed = c.installedNames(ctx)
				}
				errs = append(errs, fmt.Errorf("status %s: %w%s", n, ErrNotInstalled, didYouMean(n, installed)))
				continue
			}
			secrets = append(secrets, *s)
		}
	}
	var out []Installed
	for i := range secrets {
		st, unread, err := c.installed(ctx, &secrets[i])
		if err != nil {
			errs = append(errs, err)
			st = Installed{Record: invalidRecord(&secrets[i]), Error: err.Error()}
		}
		if unread != nil {
			errs = append(errs, fmt.Errorf("status %s: %w", st.Name, unread))
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

// installed reads an inventory and the readiness of its objects. unread
// says why some objects could not be read (forbidden, unreachable):
// they are listed as unready, but their readiness is unknown, which a
// caller must not take for "not ready".
func (c *Client) installed(ctx context.Context, s *corev1.Secret) (st Installed, unread, err error) {
	inv, err := decodeInventory(s)
	if err != nil {
		return Installed{}, nil, err
	}
	st = Installed{Record: inv.Record, Objects: len(inv.Objects)}
	var first error
	n := 0
	for _, e := range inv.Objects {
		stub, err := e.object()
		if err != nil {
			return Installed{}, nil, err // decodeInventory checked every entry
		}
		// Read in a version served now: the kind's CRD may have moved
		// on from the one recorded. A kind served in none is read as
		// recorded, and found NotFound.
		if _, err := c.servedAs(stub); err != nil {
			st.unready(statusOf(stub, Unreadable, oneLine(err.Error())))
			continue
		}
		ost, ready, rerr := c.readiness(ctx, stub, inv.Name)
		switch {
		case ready, e.Transient && ost.Status == NotFound, e.Ignored:
			st.Ready++
			continue
		case rerr != nil:
			n++
			first = cmp.Or(first, rerr)
		}
		st.unready(ost)
	}
	if first != nil {
		unread = fmt.Errorf("could not read %d of its %d objects, whose readiness is unknown: %w", n, len(inv.Objects), first)
	}
	return st, unread, nil
}
