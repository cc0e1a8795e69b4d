package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// DefaultTimeout bounds the waits of Apply and Uninstall unless
// Options.Timeout says otherwise.
const DefaultTimeout = 5 * time.Minute

// DefaultTakeOver are the field managers whose fields Apply takes over
// (prefixes: "kubectl" covers kubectl-client-side-apply, kubectl-edit,
// ...), so an add-on installed by hand or by another installer is
// adopted instead of fought over.
var DefaultTakeOver = []string{"kubectl", "helm", "kubeadm", "kops"}

// Options tune Apply and Diff. The zero value applies, prunes, takes over
// DefaultTakeOver's fields and does not wait.
type Options struct {
	// DryRun asks the server what would change (server-side dry-run) and
	// changes nothing, not even the inventory. Changes carry diffs.
	DryRun bool
	// Wait waits until every object is ready (kstatus: CRDs established,
	// Deployments available, Jobs complete, ...; and an APIService
	// Available, which kstatus does not read) and stops early when one
	// fails, and until the objects prune deleted are gone. An object
	// annotated AnnotationWait=WaitDisabled is not waited for. Without
	// Wait, prune asks for its deletions and does not wait for them, as
	// kubectl apply --prune without --wait and Flux's
	// kustomize-controller (spec.wait) do; a later apply that holds an
	// object again while it is still being deleted waits for it to be
	// gone before its first change (what later stages need, CRDs
	// established, is waited for whatever Wait says).
	Wait bool
	// Timeout bounds each wait (CRDs established, and served by the API
	// server's discovery as they define, readiness, deletions); 0:
	// DefaultTimeout.
	Timeout time.Duration
	// NoPrune keeps the objects an earlier apply made that the add-on no
	// longer holds; by default they are deleted.
	NoPrune bool
	// PruneNonEmpty lets prune delete a CustomResourceDefinition or a
	// Namespace that still holds objects; by default they are kept.
	PruneNonEmpty bool
	// Force adopts objects that another add-on owns, and members of
	// another tool's ApplySet; not an AnnotationApply=ApplyIfNotPresent
	// one, which is left as it is and not recorded.
	Force bool
	// Recreate deletes and creates again an object whose change the
	// server refuses as immutable (AnnotationRecreate does it for one);
	// never a CRD, a Namespace or a ClusterRole: deleting the first two
	// deletes what they hold; nor an AnnotationApply=ApplyIfNotPresent
	// or ApplyIgnore object, which is never changed.
	Recreate bool
	// TakeOver lists the field-manager prefixes whose fields are taken
	// over; nil: DefaultTakeOver; empty (non-nil): none.
	TakeOver []string
	// Progress, when set, is called as each stage ends, from the
	// goroutine that called Apply (so it runs before the next stage).
	Progress func(Stage)
}

// A Stage is a step of an apply, as Options.Progress reports it.
type Stage struct {
	// Addon is the add-on's name.
	Addon string
	// Name is "definitions" (CRDs, Namespaces, ClusterRoles, applied and
	// established), "resources", "webhooks", "pruned" and, with
	// Options.Wait, "waiting" (before the wait) and "ready" (after it).
	// A prune or an uninstall that deleted objects reports "deleting"
	// before it waits for them to be gone, and "gone" once they are (not
	// when the wait fails: its error says so), so that a caller that
	// reports the wait as it lasts knows when it ended; an apply's prune
	// waits, and reports them, only with Options.Wait. Before its first
	// change, an apply (not a dry-run) that finds objects of the add-on
	// being deleted (by an earlier prune without Options.Wait, or by
	// anyone) reports "terminating" before it waits for them to be gone
	// and "gone" once they are, whatever Options.Wait.
	Name string
	// Changes are the stage's changes; for waiting and ready, those of
	// the objects waited for; for deleting and gone, the deletions; for
	// terminating (and the gone after it), the objects being deleted
	// (Deleted, Reason "being deleted").
	Changes []Change
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// testHook, when set by a test, is called between stages ("pending",
// "definitions", "resources", "webhooks", "pruned").
var testHook func(stage string)

func hook(stage string) {
	if testHook != nil {
		testHook(stage)
	}
}

// stageDone reports a stage: the test hook, and Progress with the
// changes made since from.
func (o Options) stageDone(stage string, cs *ChangeSet, from int) {
	hook(stage)
	o.report(cs.Addon, stage, cs.Changes[from:])
}

// report calls Progress, if set, with a copy of changes.
func (o Options) report(addon, stage string, changes []Change) {
	if o.Progress != nil {
		o.Progress(Stage{Addon: addon, Name: stage, Changes: slices.Clone(changes)})
	}
}

// Apply installs or upgrades an add-on. In order: it reads the add-on's
// inventory and refuses a name the add-on's config claims
// (Addon.NameFromConfig) from an add-on of another origin
// (*NameClaimError), resolves every object, refuses objects other add-ons
// own (unless Force) and checks every permission it needs
// (*PreflightError); then it writes the inventory as pending (old and new
// objects), applies in stages under field manager FieldManager, prunes
// what the previous apply made and this one does not, writes the
// inventory as applied, and waits if asked. Only objects that differ are
// patched: applying the same add-on twice changes nothing.
//
// On an error the returned ChangeSet holds what was done so far, and the
// inventory stays pending, so the next Apply finishes the job. An apply
// that fails before its first change (a dry-run the API server refused)
// takes its pending inventory back: the cluster is as it was, with no
// record of an add-on that was never installed.
func (c *Client) Apply(ctx context.Context, a Addon, opts Options) (*ChangeSet, error) {
	// An error says which add-on, and whether anything was to change.
	verb := "apply"
	if opts.DryRun {
		verb = "dry-run of"
	}
	if err := a.validate(); err != nil {
		// Sanitized: the name may be the invalid part.
		return nil, fmt.Errorf("%s %s: %w", verb, safetree.Sanitize(a.Name), err)
	}
	// Named before the plan sets namespaces and labels: what the caller
	// gave, which an apply of the same gives again.
	var content string
	if a.Digest == "" && a.Identity == "" {
		var err error
		if content, err = objectsDigest(a.Objects); err != nil {
			return nil, err
		}
	}
	a.Objects = deepCopy(a.Objects)
	p, err := c.planChecked(ctx, &a, opts)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", verb, a.Name, err)
	}
	p.label()
	var prevObjects []InventoryEntry
	if p.prev != nil {
		prevObjects = p.prev.Objects
	}
	inv := &Inventory{
		Record: Record{Name: a.Name, Version: a.Version, Source: a.Source, Digest: a.Digest, Identity: a.Identity, Content: content,
			Values: maps.Clone(a.Values), Namespace: p.namespace, Phase: PhasePending},
		Objects: union(prevObjects, p.entries()),
	}
	// A record too large for its Secret is refused before the dry-run of
	// every object, which it would follow, and by a dry-run too: the
	// apply it stands for would be refused. (A re-apply that writes no
	// pending record lists no more than the last record did.) Stamped, as
	// writeInventory stamps it, to be measured at the size it is written.
	inv.Updated = time.Now().UTC().Truncate(time.Second)
	if _, err := c.encodeFitting(inv); err != nil {
		return nil, fmt.Errorf("%s %s: %w", verb, a.Name, upgradeTooLarge(err, inv, p))
	}
	if opts.DryRun {
		// What the apply refuses before any change of an object it may
		// recreate, the dry-run refuses too: ssa's diff takes any refusal
		// of one for a recreate. (Of the others, the diff's own dry-run
		// meets what the apply's would.)
		if err := c.dryRunBeforeChange(ctx, p, opts, true); err != nil {
			return nil, fmt.Errorf("%s %s: %w", verb, a.Name, err)
		}
		cs, err := c.diff(ctx, p, opts)
		if err != nil {
			return cs, fmt.Errorf("%s %s: %w", verb, a.Name, err)
		}
		return cs, nil
	}

	cs := &ChangeSet{Addon: a.Name}
	// A re-apply of what the last record says (same add-on, values and
	// objects, or fewer) writes no pending record: that one already covers
	// all an apply cut short could leave behind.
	sec := p.prevSecret
	// The record names its content (a digest, a content identity, else
	// the objects' own digest): objects changed under the same version
	// are dry-run, as an upgrade is.
	if p.prev == nil || !subset(p.entries(), p.prev.Objects) || !sameRecord(withObjects(inv, p.prev.Objects), p.prev) {
		if err := c.dryRunBeforeChange(ctx, p, opts, false); err != nil {
			return nil, fmt.Errorf("%s %s: %w", verb, a.Name, err)
		}
		var err error
		if sec, err = c.writeInventory(ctx, inv, sec); err != nil {
			return nil, fmt.Errorf("%s %s: %w", verb, a.Name, upgradeTooLarge(err, inv, p))
		}
	}
	hook("pending")

	wctx, writes := countWrites(ctx)
	if err := c.applyStaged(wctx, p, opts, cs); err != nil {
		if writes.none() {
			c.takeBack(ctx, p, sec)
		}
		sec = c.recordMade(ctx, p, inv, sec)
		return cs, fmt.Errorf("%s %s: %w", verb, a.Name, c.keepRecord(ctx, inv, sec, writes, err))
	}

	kept := []InventoryEntry{}
	from := len(cs.Changes)
	applied := cs.Changes[:from:from]
	if !opts.NoPrune {
		changes, retained, err := c.prune(ctx, a.Name, p.prune, opts, opts.Wait)
		cs.Changes = append(cs.Changes, changes...)
		if err != nil {
			return cs, fmt.Errorf("%s %s: %w", verb, a.Name, c.keepRecord(ctx, inv, sec, writes, err))
		}
		kept = retained
	} else {
		for _, d := range p.prune {
			kept = append(kept, d.entry)
		}
	}
	opts.stageDone("pruned", cs, from)

	inv.Phase = PhaseApplied
	inv.Objects = union(kept, p.entries())
	if !sameRecord(inv, p.prev) || sec != p.prevSecret {
		if _, err := c.writeInventory(ctx, inv, sec); err != nil {
			return cs, fmt.Errorf("%s %s: %w", verb, a.Name, c.recordLost(ctx, inv, writes, err))
		}
	} else if err := c.unchangedSince(ctx, a.Name, sec); err != nil {
		return cs, fmt.Errorf("%s %s: %w", verb, a.Name, c.recordLost(ctx, inv, writes, err))
	}

	if opts.Wait {
		waited := changesOfPlanned(applied, waitedFor(p.objects))
		opts.report(a.Name, "waiting", waited)
		if err := c.wait(ctx, p.objects, opts.timeout()); err != nil {
			return cs, fmt.Errorf("%s %s: %w", verb, a.Name, err)
		}
		opts.report(a.Name, "ready", waited)
	}
	return cs, nil
}

// planChecked is the plan of a whose permissions the pre-flight
// granted. Before an apply that changes the cluster, the objects of a
// that the cluster is deleting (what an earlier apply without
// Options.Wait pruned, and an add-on version that holds them again
// applies at once; anyone's delete) are waited for until gone, bounded
// by Options.Timeout, and the plan is made again: applied while they
// terminate, a CRD's patch succeeded, its wait for Established never
// did, and its custom resources, or the objects of a Namespace, were
// refused, an apply half made; or the apply succeeded, and the objects
// went right after, still on record. A dry-run does not wait.
func (c *Client) planChecked(ctx context.Context, a *Addon, opts Options) (*plan, error) {
	for again := 0; ; again++ {
		p, err := c.makePlan(ctx, a, opts.Force)
		if err != nil {
			return nil, err
		}
		if err := c.Preflight(ctx, p.permissions(c, opts)); err != nil {
			return nil, err
		}
		if len(p.unread) > 0 {
			return nil, p.unread[0]
		}
		going := p.terminating()
		// Twice at most: objects deleted again and again (by another
		// apply or uninstall at once) are the server's to refuse.
		if opts.DryRun || len(going) == 0 || again == 2 {
			return p, nil
		}
		// Reported, as a prune's wait is: the wait may last minutes, and a
		// caller that shows progress said nothing all along.
		changes := changesOfDeletions(going)
		opts.report(a.Name, "terminating", changes)
		if err := c.waitGone(ctx, going, opts.timeout()); err != nil {
			return nil, fmt.Errorf("wait for objects being deleted before applying them again: %w", err)
		}
		opts.report(a.Name, "gone", changes)
	}
}

// changesOfDeletions are the Deleted changes of the objects of ds, whose
// deletion (anyone's) is under way.
func changesOfDeletions(ds []deletion) []Change {
	out := make([]Change, 0, len(ds))
	for _, d := range ds {
		out = append(out, Change{Object: describe(d.obj), ID: entryOf(d.obj).ID, Version: d.obj.GetAPIVersion(), Action: Deleted, Reason: "being deleted"})
	}
	return out
}

// terminating are the objects of p in the cluster that are being deleted
// and that the apply would write (all but the ignored ones), with the
// uid of the one going.
func (p *plan) terminating() []deletion {
	var out []deletion
	for _, pl := range p.objects {
		if pl.live != nil && pl.live.DeletionTimestamp != nil && !pl.ignored() {
			out = append(out, deletion{obj: pl.obj, uid: pl.live.UID})
		}
	}
	return out
}

// recordMade puts on the pending record sec of an apply that failed
// what it made that the record does not list (plan.madeSince), and is
// the record then; sec when there is nothing to add or the write fails
// (keepRecord then finds the record changed, and records it there).
func (c *Client) recordMade(ctx context.Context, p *plan, inv *Inventory, sec *corev1.Secret) *corev1.Secret {
	if !p.madeSince || sec == nil || subset(p.entries(), inv.Objects) {
		return sec
	}
	inv.Objects = union(inv.Objects, p.entries())
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if now, err := c.writeInventory(rctx, inv, sec); err == nil {
		return now
	}
	return sec
}

// unchangedSince checks that an apply which wrote no inventory (it
// changed nothing the record says) ran alone: every inventory write is
// conditional on the version read, and this is the same condition for
// the apply that has none to write. Another apply of the add-on at once
// may have patched what this one patched back: ErrConflict says so.
func (c *Client) unchangedSince(ctx context.Context, name string, read *corev1.Secret) error {
	if read == nil {
		return nil
	}
	now, err := c.inventorySecret(ctx, name)
	if err != nil {
		return err
	}
	if now == nil || now.ResourceVersion != read.ResourceVersion {
		return fmt.Errorf("%w: its inventory changed while it applied (another apply or uninstall of %s at the same time?): apply it again", ErrConflict, name)
	}
	return nil
}

// keepRecord is err, the failure of an apply that wrote to the cluster,
// once what it applied is on record. An uninstall (or another apply) of
// the add-on at the same time may have deleted or changed the record
// this apply read (or wrote, pending) since: the objects it made after
// were recorded nowhere (the uninstall's Namespace being terminated is
// what makes such an apply fail half-way). When the record is no longer
// the one it had, recordLost puts them back on record.
func (c *Client) keepRecord(ctx context.Context, inv *Inventory, sec *corev1.Secret, w *writes, err error) error {
	if w.none() || sec == nil {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	now, rerr := c.inventorySecret(rctx, inv.Name)
	if rerr != nil || (now != nil && now.ResourceVersion == sec.ResourceVersion) {
		return err
	}
	lost := fmt.Errorf("%w: its inventory changed or was deleted while it applied (another apply or uninstall of %s at the same time?)", ErrConflict, inv.Name)
	return fmt.Errorf("%w; %w", err, c.recordLost(ctx, inv, w, lost))
}

// recordLost is the error of an apply whose inventory another apply or
// an uninstall of the add-on changed or deleted while it ran (err: its
// conditional write failed, or unchangedSince), after it has put what it
// applied back on record. An uninstall at the same time deleted the
// objects and the inventory, and the apply then made its objects again:
// they carried the add-on's labels and no record listed them, so no
// uninstall or prune would ever find them. So the objects of inv (what
// this apply holds, and kept) that are in the cluster as the add-on's
// and that the record there is now does not list (orphans) are added
// to it, or to a new one, pending: the next apply or uninstall finishes
// the job. Nothing is recorded when the apply wrote nothing (it made no
// object) or no such object is left.
func (c *Client) recordLost(ctx context.Context, inv *Inventory, w *writes, err error) error {
	if apierrors.IsNotFound(err) {
		err = fmt.Errorf("%w: its inventory was deleted while it applied (an uninstall of %s at the same time?)", ErrConflict, inv.Name)
	}
	if !errors.Is(err, ErrConflict) || w.none() {
		return err
	}
	// The apply's own context may be what ended; the record is written
	// still, for a few seconds.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for range 3 {
		now, rerr := c.inventorySecret(ctx, inv.Name)
		if rerr != nil {
			return fmt.Errorf("%w; recording what it applied failed too: %v", err, rerr)
		}
		rec := *inv
		rec.Objects = nil
		if now != nil {
			cur, derr := decodeInventory(now)
			if derr != nil {
				return fmt.Errorf("%w; recording what it applied failed too: %v", err, derr)
			}
			rec = *cur
		}
		missing := c.orphans(ctx, inv.Name, inv.Objects, rec.Objects)
		if len(missing) == 0 {
			return err
		}
		rec.Objects = union(rec.Objects, missing)
		rec.Phase = PhasePending
		_, werr := c.writeInventory(ctx, &rec, now)
		if werr == nil {
			return fmt.Errorf("%w; what it applied is recorded, pending: apply or uninstall %s again", err, inv.Name)
		}
		if !errors.Is(werr, ErrConflict) {
			return fmt.Errorf("%w; recording what it applied failed too: %v", err, werr)
		}
	}
	return fmt.Errorf("%w; recording what it applied failed too: its inventory changed each time it was read", err)
}

// orphans are the entries of mine that recorded does not list and
// whose objects are in the cluster as the add-on's (its owner label and
// ApplySet): what no prune or uninstall would find. Not those gone, or
// never made (an upgrade's record lists the installed objects, which the
// other apply may have pruned): recording them would only make a record
// pending for nothing. One that cannot be read is counted: recording it
// is the safe side.
func (c *Client) orphans(ctx context.Context, addon string, mine, recorded []InventoryEntry) []InventoryEntry {
	listed := map[string]bool{}
	for _, e := range recorded {
		listed[e.key()] = true
	}
	var out []InventoryEntry
	for _, e := range mine {
		if listed[e.key()] {
			continue
		}
		stub, err := e.object()
		if err != nil {
			continue // names no object
		}
		if m, err := c.servedAs(stub); m == nil && err == nil {
			continue // its kind is gone, and it with it
		}
		live, err := c.getMeta(ctx, stub)
		if err != nil || (live != nil && c.owns(addon, live.Labels)) {
			out = append(out, e)
		}
	}
	return out
}

// takeBack undoes the pending inventory sec of an apply that changed
// nothing: a first install's is deleted, an upgrade's is the previous
// one again. Both are conditional on sec being what this apply wrote,
// and a failure leaves it pending, which still describes the cluster
// (it lists more than is there). It runs even when ctx has ended (a
// deadline is the likeliest cause of the failure), for a few seconds.
func (c *Client) takeBack(ctx context.Context, p *plan, sec *corev1.Secret) {
	if sec == nil || sec == p.prevSecret {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	secrets := c.typed.CoreV1().Secrets(sec.Namespace)
	if p.prevSecret == nil {
		_ = secrets.Delete(ctx, sec.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &sec.ResourceVersion}})
		return
	}
	prev := p.prevSecret.DeepCopy()
	prev.ResourceVersion = sec.ResourceVersion
	_, _ = secrets.Update(ctx, prev, metav1.UpdateOptions{FieldManager: FieldManager})
}

// withObjects is a copy of inv, applied, listing objs.
func withObjects(inv *Inventory, objs []InventoryEntry) *Inventory {
	c := *inv
	c.Phase, c.Objects = PhaseApplied, objs
	return &c
}

// objectsDigest is Record.Content of objs: the sha256 of their JSON, in
// order (a map's keys are sorted, so equal objects give equal JSON).
func objectsDigest(objs []*unstructured.Unstructured) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, o := range objs {
		if err := enc.Encode(o.Object); err != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrInvalid, describe(o), err)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func deepCopy(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}

func isWebhookConfiguration(o *unstructured.Unstructured) bool {
	return strings.HasPrefix(o.GetAPIVersion(), "admissionregistration.k8s.io/") &&
		(o.GetKind() == "MutatingWebhookConfiguration" || o.GetKind() == "ValidatingWebhookConfiguration")
}

// isRole says whether o is a (namespaced) Role.
func isRole(o *unstructured.Unstructured) bool {
	return strings.HasPrefix(o.GetAPIVersion(), "rbac.authorization.k8s.io/") && o.GetKind() == "Role"
}

func isDefinition(o *unstructured.Unstructured) bool {
	switch {
	case o.GetKind() == "CustomResourceDefinition" && strings.HasPrefix(o.GetAPIVersion(), "apiextensions.k8s.io/"):
	case o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1":
	case o.GetKind() == "ClusterRole" && strings.HasPrefix(o.GetAPIVersion(), "rbac.authorization.k8s.io/"):
	default:
		return false
	}
	return true
}

// takeOver is Options.TakeOver, DefaultTakeOver when nil.
func (o Options) takeOver() []string {
	if o.TakeOver == nil {
		return DefaultTakeOver
	}
	return o.TakeOver
}

func (c *Client) applyOptions(opts Options) ssa.ApplyOptions {
	ao := ssa.DefaultApplyOptions()
	ao.Force = opts.Recreate
	ao.ForceSelector = map[string]string{AnnotationRecreate: RecreateEnabled}
	ao.IfNotPresentSelector = ifNotPresentSelector
	ao.ExclusionSelector = ignoreSelector
	ao.WaitInterval = c.opts.PollInterval
	ao.WaitTimeout = opts.timeout()
	// Roles in a stage of their own, before RoleBindings: binding a role
	// that does not exist yet is refused to anyone but a cluster admin.
	ao.CustomStageKinds = map[schema.GroupKind]struct{}{{Group: "rbac.authorization.k8s.io", Kind: "Role"}: {}}
	for _, name := range opts.takeOver() {
		for _, op := range []metav1.ManagedFieldsOperationType{metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate} {
			ao.Cleanup.FieldManagers = append(ao.Cleanup.FieldManagers, ssa.FieldManager{Name: name, OperationType: op})
		}
	}
	return ao
}

// applyStaged applies in the stages of ssa.ApplyAllStaged (CRDs,
// Namespaces and ClusterRoles, waited for; then *Class kinds; then Roles;
// then the rest), with webhook configurations last of all, after the rest
// is ready when waiting, so a webhook never refuses the objects that
// start its own server.
func (c *Client) applyStaged(ctx context.Context, p *plan, opts Options, cs *ChangeSet) error {
	ao := c.applyOptions(opts)
	var defs, rest, hooks []*unstructured.Unstructured
	for _, pl := range p.objects {
		switch {
		case isDefinition(pl.obj):
			defs = append(defs, pl.obj)
		case isWebhookConfiguration(pl.obj):
			hooks = append(hooks, pl.obj)
		default:
			rest = append(rest, pl.obj)
		}
	}
	run := func(stage string, objs []*unstructured.Unstructured, staged bool, ao ssa.ApplyOptions) error {
		from := len(cs.Changes)
		if len(objs) == 0 {
			if stage != "" {
				opts.stageDone(stage, cs, from)
			}
			return nil
		}
		var (
			res *ssa.ChangeSet
			err error
		)
		if staged {
			res, err = c.manager.ApplyAllStaged(ctx, objs, ao)
		} else {
			res, err = c.manager.ApplyAll(ctx, objs, ao)
		}
		if res != nil {
			changes := p.recreated(res, opts)
			p.skipped(res, changes, func(pl *planned) bool { return c.ownsNow(ctx, p, pl) })
			p.madeAfterPlan(res, changes)
			cs.Changes = append(cs.Changes, changes...)
		}
		if err != nil {
			return wrap(err)
		}
		if stage != "" {
			opts.stageDone(stage, cs, from)
		}
		return nil
	}
	// The definitions are waited for here rather than inside ssa, so a
	// CRD that is never established is a *WaitError naming it. They are
	// never recreated (mayRecreate).
	from := len(cs.Changes)
	defOpts := ao
	defOpts.Force, defOpts.ForceSelector = false, nil
	if err := run("", defs, false, defOpts); err != nil {
		return err
	}
	var defPlanned []*planned
	for _, pl := range p.objects {
		if isDefinition(pl.obj) {
			defPlanned = append(defPlanned, pl)
		}
	}
	if err := c.waitAll(ctx, defPlanned, opts.timeout()); err != nil {
		return err
	}
	// A CRD created or changed may serve other versions than the mapper
	// learned. (One left as it is, IfNotPresent, serves what it did.)
	changed := map[string]bool{}
	for _, ch := range cs.Changes[from:] {
		changed[ch.ID] = ch.Action == Created || ch.Action == Configured
	}
	var crds []*planned
	for _, pl := range defPlanned {
		if _, _, ok := crdKindOf(pl.obj); ok && changed[pl.entry.ID] {
			crds = append(crds, pl)
		}
	}
	if err := c.waitDiscovered(ctx, crds, opts.timeout()); err != nil {
		return err
	}
	opts.stageDone("definitions", cs, from)
	if err := run("resources", rest, true, ao); err != nil {
		return err
	}
	if len(hooks) > 0 && opts.Wait {
		var waited []*planned
		for _, pl := range p.objects {
			if !isWebhookConfiguration(pl.obj) {
				waited = append(waited, pl)
			}
		}
		if err := c.wait(ctx, waited, opts.timeout()); err != nil {
			return err
		}
	}
	return run("webhooks", hooks, false, ao)
}

// recreateReason is the Reason of a Recreated change.
const recreateReason = "the server refuses the change as immutable"

// dryRunBeforeChange dry-runs, before the first change of an install or
// upgrade, the objects whose refusal the staged apply would otherwise
// meet in their own stage, after the stages before had changed the
// cluster: an upgrade half made.
//
//   - An existing object that may not be recreated: a change the server
//     refuses as immutable (a Job's template, a Deployment's selector;
//     every ingress-nginx upgrade changes its Jobs) is refused with
//     nothing changed. Other refusals are left to the staged apply, since
//     an object may depend on what an earlier stage changes (a CRD's new
//     schema); so are the custom resources of the add-on's own CRDs,
//     whose immutable fields (a CEL rule on oldSelf) are the CRD's to
//     say, and the upgrade's CRD may no longer say so.
//   - An existing object that may be recreated: ssa recreates on any
//     change the server refuses as invalid or conflicting, not only an
//     immutable one, and the create after its delete fails the same way,
//     so the object was deleted and not made again. Such a refusal, not
//     of an immutable field, is refused.
//   - A Role, new or not, that RBAC refuses as granting what the user
//     does not hold without the escalate verb, which the pre-flight's
//     access reviews cannot see. (A ClusterRole is in the first stage,
//     which ssa dry-runs whole before applying any of it; a binding is
//     not dry-run: it may bind a role an earlier stage makes.)
//
// recreatableOnly dry-runs only the objects that may be recreated (a
// dry-run's own check: its diff meets the others' refusals).
func (c *Client) dryRunBeforeChange(ctx context.Context, p *plan, opts Options, recreatableOnly bool) error {
	crds := addonCRDs(p.addon.Objects)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.opts.Concurrency)
	for _, pl := range p.objects {
		role := isRole(pl.obj) && !recreatableOnly
		// An IfNotPresent object that exists, or an ignored one, is not
		// applied: nothing the server would refuse of it is ever sent.
		if _, ownCRD := crds[pl.obj.GroupVersionKind().GroupKind()]; ownCRD || (pl.live == nil && !role) || pl.crdPending || pl.nsPending || pl.leftAsIs() || pl.ignored() {
			continue
		}
		recreate := pl.mayRecreate(opts)
		if recreatableOnly && !recreate {
			continue
		}
		g.Go(func() error {
			raw := c.kube.Patch(gctx, pl.obj.DeepCopy(), client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner(FieldManager))
			err := wrap(raw)
			switch {
			case role && apierrors.IsForbidden(raw):
				// RBAC's escalation check: a role granting what the
				// user does not hold (without the escalate verb), which
				// the pre-flight's access reviews cannot see.
				return fmt.Errorf("%s dry-run failed: %w", describe(pl.obj), err)
			case pl.live == nil:
				return nil
			case !recreate && errors.Is(err, ErrImmutable):
				return fmt.Errorf("%s dry-run failed: %w", describe(pl.obj), err)
			case recreate && (apierrors.IsInvalid(raw) || apierrors.IsConflict(raw)) && !errors.Is(err, ErrImmutable):
				return fmt.Errorf("%s dry-run failed, not on an immutable field (recreating it would delete it and fail to create it again): %w", describe(pl.obj), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// mayRecreate says whether the apply may delete pl's object and create
// it again when the server refuses its change as immutable: as ssa's
// ForceSelector, the option or the annotation on the object applied or
// on the one in the cluster. Never a definition (applyStaged applies
// them without either): deleting a Namespace deletes everything in it,
// and a CRD every custom resource of its kind, others' too, and ssa
// recreates on any change the server refuses (a label value it finds
// invalid), not only an immutable one. An add-on's annotation on a
// Namespace it adopted deleted the namespace and what it held. Nor an
// IfNotPresent object: one that exists is never changed, so never
// deleted to be changed; nor an ignored one, never changed at all.
func (pl *planned) mayRecreate(opts Options) bool {
	if isDefinition(pl.obj) || ifNotPresentBy(pl.obj) != "" || pl.ignored() {
		return false
	}
	return opts.Recreate || pl.obj.GetAnnotations()[AnnotationRecreate] == RecreateEnabled ||
		(pl.live != nil && pl.live.Annotations[AnnotationRecreate] == RecreateEnabled)
}

// recreated is the changes of res, those that ssa reports Created for
// objects that were in the cluster when the plan was read and that may
// be recreated turned into Recreated: ssa deleted them (an immutable
// change) and created them again. Objects are matched by their entry's
// key, not their ID, which two names may share.
func (p *plan) recreated(res *ssa.ChangeSet, opts Options) []Change {
	changes := changesOf(res)
	for i, ch := range changes {
		if ch.Action != Created {
			continue
		}
		if pl := p.find(res.Entries[i].ObjMetadata); pl != nil && pl.live != nil && pl.mayRecreate(opts) {
			changes[i].Action, changes[i].Reason = Recreated, recreateReason
		}
	}
	return changes
}

// find is the planned object m names, matched by its entry's key, not
// its ID, which two names may share; nil when none.
func (p *plan) find(m object.ObjMetadata) *planned {
	if p.byKey == nil {
		p.byKey = make(map[string]*planned, len(p.objects))
		for _, pl := range p.objects {
			p.byKey[pl.entry.key()] = pl
		}
	}
	return p.byKey[entryFor(m).key()]
}

func changesOf(res *ssa.ChangeSet) []Change {
	out := make([]Change, 0, len(res.Entries))
	for _, e := range res.Entries {
		gv := schema.GroupVersion{Group: e.ObjMetadata.GroupKind.Group, Version: e.GroupVersion}
		out = append(out, Change{
			Object:  describeMeta(e.ObjMetadata.GroupKind.Kind, e.ObjMetadata.Namespace, e.ObjMetadata.Name),
			ID:      e.ObjMetadata.String(),
			Version: gv.String(),
			Action:  Action(e.Action),
		})
	}
	return out
}

// describeMeta is describe from an object's identity. The names may be
// anyone's (a Role's name is any path segment, escapes included, and
// prune names what a Namespace holds), so they are sanitized too.
func describeMeta(kind, ns, name string) string {
	return addon.Object{Kind: kind, Namespace: ns, Name: name}.Subject()
}
