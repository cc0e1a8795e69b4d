package apply

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// fluxSSAAnnotation is Flux's per-object apply policy; of its values
// (Merge, IfNotPresent, Ignore, Override) addonpkg honours IfNotPresent
// and Ignore, so that an add-on authored for Flux keeps their meaning.
// The others are Flux's to read: addonpkg applies such an object as any
// other.
const fluxSSAAnnotation = "kustomize.toolkit.fluxcd.io/ssa"

// applyPolicyKeys are the keys that give an object an apply policy, ours
// first, so a reason names ours when an object carries both.
var applyPolicyKeys = []string{AnnotationApply, fluxSSAAnnotation}

// ifNotPresentSelector is ssa's IfNotPresentSelector (apply and diff):
// ssa skips an object that exists and whose applied form matches one
// pair, as a label or an annotation, the value in any case
// (utils.AnyInMetadata). Our own value is checked to be exactly
// ApplyIfNotPresent before (checkApplyPolicy), so the any-case reading
// only widens Flux's, as Flux reads it.
var ifNotPresentSelector = map[string]string{AnnotationApply: ApplyIfNotPresent, fluxSSAAnnotation: ApplyIfNotPresent}

// ignoreSelector is ssa's ExclusionSelector (apply) and Exclusions
// (diff), as Flux's kustomize-controller passes its ssa: Ignore: ssa
// neither creates nor changes an object when the applied form or the
// one in the cluster matches one pair, read as ifNotPresentSelector is.
// Prune and uninstall keep an object in the cluster that matches
// (pruneExclusions): the add-on has let go of it.
//
// Flux's older kustomize.toolkit.fluxcd.io/reconcile: disabled means the
// same to kustomize-controller (it passes both to ssa), so it does here.
var ignoreSelector = map[string]string{AnnotationApply: ApplyIgnore, fluxSSAAnnotation: ApplyIgnore, fluxReconcileAnnotation: fluxReconcileDisabled}

// fluxReconcileAnnotation=fluxReconcileDisabled is Flux's first way to
// say "leave this object alone", kept beside ssa: Ignore.
const (
	fluxReconcileAnnotation = "kustomize.toolkit.fluxcd.io/reconcile"
	fluxReconcileDisabled   = "disabled"
)

// ignoreKeys are ignoreSelector's keys, ours first, so a reason names
// ours when an object carries more than one.
var ignoreKeys = []string{AnnotationApply, fluxSSAAnnotation, fluxReconcileAnnotation}

// ifNotPresentBy is the key that makes o IfNotPresent ("" when none),
// read as ssa reads ifNotPresentSelector, pair by pair: what this
// package decides of an object (no pre-change dry-run, no recreate, its
// place in the inventory) must be what ssa does with it.
func ifNotPresentBy(o *unstructured.Unstructured) string {
	for _, k := range applyPolicyKeys {
		if utils.AnyInMetadata(o, map[string]string{k: ifNotPresentSelector[k]}) {
			return k
		}
	}
	return ""
}

// ignoredBy is the key that makes ssa leave pl's object alone
// (ignoreSelector), on the add-on's object or, when the plan read it, on
// the one in the cluster (inCluster); "" when none. Read as ssa reads
// it, pair by pair, so that the plan (no dry-run, no recreate, no wait,
// no record, get alone in the pre-flight) is what ssa does.
func (pl *planned) ignoredBy() (key string, inCluster bool) {
	var live *unstructured.Unstructured
	if pl.live != nil {
		live = &unstructured.Unstructured{}
		live.SetLabels(pl.live.Labels)
		live.SetAnnotations(pl.live.Annotations)
	}
	for _, k := range ignoreKeys {
		sel := map[string]string{k: ignoreSelector[k]}
		if utils.AnyInMetadata(pl.obj, sel) {
			return k, false
		}
		if live != nil && utils.AnyInMetadata(live, sel) {
			return k, true
		}
	}
	return "", false
}

// ignoredInAddon says whether the add-on's object o is one ssa never
// creates nor changes (ignoreSelector), whatever the cluster holds.
func ignoredInAddon(o *unstructured.Unstructured) bool {
	return utils.AnyInMetadata(o, ignoreSelector)
}

// ignored says whether the apply leaves pl's object alone (ignoredBy).
func (pl *planned) ignored() bool {
	k, _ := pl.ignoredBy()
	return k != ""
}

// ignoreReason is the Reason of the Skipped change of pl, ignored.
func (pl *planned) ignoreReason() string {
	k, inCluster := pl.ignoredBy()
	where := "the add-on's object carries"
	if inCluster {
		where = "the object in the cluster carries"
	}
	why := "left alone: " + where + " " + k + ": " + ignoreSelector[k] + ", so it is neither created nor changed nor waited for"
	if pl.entry.Ignored {
		return why + "; it carries this add-on's labels from an earlier apply, so the inventory records it, and no prune or uninstall of the add-on deletes it"
	}
	return why + ", nor recorded in the inventory"
}

// ignoredSinceReason is the Reason of a change ssa reported Skipped for
// an object the plan did not find ignored nor IfNotPresent: the object
// in the cluster was given an Ignore key since the plan read it.
const ignoredSinceReason = "left alone: the object in the cluster carries " + AnnotationApply + " or " + fluxSSAAnnotation + ": " + ApplyIgnore +
	" (or " + fluxReconcileAnnotation + ": " + fluxReconcileDisabled + "), given since the plan was read"

// checkApplyPolicy refuses a value of AnnotationApply, as an annotation
// or a label (ssa reads both), other than ApplyIfNotPresent or
// ApplyIgnore: ssa matches any case, but a value that is not ours
// exactly ("ifnotpresent", "Always") is a mistake to say, not a policy
// to guess. Flux's annotation is not checked: its other values are
// Flux's.
func checkApplyPolicy(o *unstructured.Unstructured) error {
	for _, m := range []struct {
		what string
		kv   map[string]string
	}{{"annotation", o.GetAnnotations()}, {"label", o.GetLabels()}} {
		if v, ok := m.kv[AnnotationApply]; ok && v != ApplyIfNotPresent && v != ApplyIgnore {
			return fmt.Errorf("%w: object %s: %s %s: %q is not a value it takes (%s or %s, exactly)",
				ErrInvalid, describe(o), m.what, AnnotationApply, safetree.SanitizeN(v, 60), ApplyIfNotPresent, ApplyIgnore)
		}
	}
	return nil
}

// leftAsIs says whether the apply leaves pl's object as it is in the
// cluster: it is IfNotPresent and it was there when the plan was read.
// ssa skips it; no dry-run, recreate or take-over touches it.
func (pl *planned) leftAsIs() bool {
	return pl.live != nil && ifNotPresentBy(pl.obj) != "" && !pl.ignored()
}

// ifNotPresentReason is the Reason of the Skipped change of pl, left as
// it is.
func (pl *planned) ifNotPresentReason() string {
	r := "left as it is: it exists, and " + ifNotPresentBy(pl.obj) + ": " + ApplyIfNotPresent + " creates it only when absent"
	if pl.unrecorded {
		r += "; it is not this add-on's, so it is neither adopted nor recorded in the inventory"
	}
	return r
}

// skipped gives the changes of res that ssa reported Skipped (the
// ignored objects, and the IfNotPresent ones it found in the cluster)
// their reason. An IfNotPresent one the plan found absent was made
// since: unless ours says it is this add-on's (another apply of it at
// the same time made it), the inventory does not record it.
func (p *plan) skipped(res *ssa.ChangeSet, changes []Change, ours func(*planned) bool) {
	for i, ch := range changes {
		if ch.Action != Skipped {
			continue
		}
		pl := p.find(res.Entries[i].ObjMetadata)
		switch {
		case pl == nil:
			continue
		case pl.ignored():
			changes[i].Reason = pl.ignoreReason()
			continue
		case ifNotPresentBy(pl.obj) == "":
			changes[i].Reason = ignoredSinceReason
			continue
		}
		if pl.live == nil {
			pl.unrecorded = !ours(pl)
		}
		changes[i].Reason = pl.ifNotPresentReason()
	}
}

// madeAfterPlan records the IfNotPresent objects of res that ssa
// reported Created and that the plan found in the cluster and not this
// add-on's (unrecorded): deleted after the plan was read, ssa made them
// as IfNotPresent says, with this add-on's labels, so the inventory
// records them. Left unrecorded they carried the add-on's labels where
// no prune or uninstall would find them, and another add-on was refused
// them as this one's.
func (p *plan) madeAfterPlan(res *ssa.ChangeSet, changes []Change) {
	for i, ch := range changes {
		if ch.Action != Created {
			continue
		}
		if pl := p.find(res.Entries[i].ObjMetadata); pl != nil && pl.unrecorded && pl.leftAsIs() {
			pl.unrecorded, p.madeSince = false, true
			changes[i].Reason = "it was deleted after the plan was read, and " + ifNotPresentBy(pl.obj) + ": " + ApplyIfNotPresent + " creates it when absent: it is this add-on's, and recorded"
		}
	}
}

// ownsNow says whether pl's object, read now, is the add-on's: an
// IfNotPresent object ssa skipped that the plan found absent was made
// since, by another apply of this add-on or by someone else. Unread, it
// is taken for another's: the inventory lists no other add-on's object.
func (c *Client) ownsNow(ctx context.Context, p *plan, pl *planned) bool {
	live, err := c.getMeta(ctx, pl.obj)
	return err == nil && live != nil && c.owns(p.addon.Name, live.Labels)
}
