package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// wait waits with kstatus until every object (but those annotated
// AnnotationWait=WaitDisabled, and the ignored ones) is Current,
// stopping early when one is Failed; its *WaitError names the objects
// that are not ready.
func (c *Client) wait(ctx context.Context, ps []*planned, timeout time.Duration) error {
	return c.waitAll(ctx, waitedFor(ps), timeout)
}

// waitedFor are the objects of ps that wait waits for.
func waitedFor(ps []*planned) []*planned {
	var waited []*planned
	for _, pl := range ps {
		if pl.obj.GetAnnotations()[AnnotationWait] != WaitDisabled && !pl.ignored() {
			waited = append(waited, pl)
		}
	}
	return waited
}

// changesOfPlanned are the changes of cs that are ps's objects', in cs's
// order.
func changesOfPlanned(cs []Change, ps []*planned) []Change {
	ids := map[string]bool{}
	for _, pl := range ps {
		ids[pl.entry.ID] = true
	}
	var out []Change
	for _, ch := range cs {
		if ids[ch.ID] {
			out = append(out, ch)
		}
	}
	return out
}

// waitAll is wait without the opt-out: what later stages need (CRDs
// established, Namespaces active) is waited for whatever the annotation.
// Not an ignored object: the apply did not make it, and may never see
// it ready (or there at all), as Flux leaves what it skips out of its
// health checks.
func (c *Client) waitAll(ctx context.Context, ps []*planned, timeout time.Duration) error {
	var objs []*unstructured.Unstructured
	for _, pl := range ps {
		if !pl.ignored() {
			objs = append(objs, pl.obj)
		}
	}
	if len(objs) == 0 {
		return nil
	}
	err := c.manager.WaitForSetWithContext(ctx, object.UnstructuredSetToObjMetadataSet(objs), ssa.WaitOptions{
		Interval:    c.opts.PollInterval,
		Timeout:     timeout,
		FailFast:    true,
		JobsWithTTL: utils.ExtractJobsWithTTL(objs),
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("wait: %w", ctx.Err())
	}
	// Name each object that is not ready, from a fresh read: the
	// caller's deadline passing is a timeout as Options.Timeout's is
	// (matching context.DeadlineExceeded too), as for deletions.
	if ctx.Err() != nil {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	we := &WaitError{Op: "readiness", Err: err, TimedOut: true}
	rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, o := range objs {
		st, ready, _ := c.readiness(rctx, o, "")
		if ready {
			continue
		}
		if st.Status == Failed {
			we.TimedOut = false
		}
		we.add(st, st.String())
	}
	if len(we.Objects) == 0 {
		we.Objects = []string{oneLine(err.Error())}
	}
	return we
}

// readiness reads o now and says whether it is ready, and if not, why:
// kstatus's status (InProgress, Failed when kstatus says Failed), or
// NotFound. With owner set (Status), an object another add-on adopted
// or no add-on owns any longer is OwnedByOther or NotOwned: it does not
// count for this one. err is why the object could not be read
// (forbidden, unreachable): its readiness is unknown, and st says so
// (Unreadable).
func (c *Client) readiness(ctx context.Context, o *unstructured.Unstructured, owner string) (st ObjectStatus, ready bool, err error) {
	live, err := c.get(ctx, o)
	switch {
	case err != nil:
		return statusOf(o, Unreadable, oneLine(err.Error())), false, err
	case live == nil:
		return statusOf(o, NotFound, ""), false, nil
	case owner != "" && live.GetLabels()[LabelAddon] != owner:
		// Adopted by another add-on (--force), or not the add-on's at
		// all: it does not count for this one.
		if other := live.GetLabels()[LabelAddon]; other != "" {
			st = statusOf(o, OwnedByOther, "")
			st.Owner = other
			return st, false, nil
		}
		return statusOf(o, NotOwned, "no "+LabelAddon+" label"), false, nil
	case owner != "" && live.GetLabels()[LabelApplySetPartOf] == "":
		return statusOf(o, NotOwned, "no "+LabelApplySetPartOf+" label"), false, nil
	case owner != "" && !c.owns(owner, live.GetLabels()):
		st = statusOf(o, OwnedByOther, "")
		st.Owner, st.Elsewhere = owner, true
		return st, false, nil
	}
	res, err := readyStatus(live)
	if err != nil {
		return statusOf(o, Unreadable, oneLine(err.Error())), false, nil
	}
	if res.Status == status.CurrentStatus {
		return ObjectStatus{}, true, nil
	}
	return statusOf(o, Readiness(res.Status), oneLine(res.Message)), false, nil
}

// crdCleanupFinalizer is the finalizer the API server puts on a CRD
// being deleted, and removes itself once the CRD's custom resources are
// gone (each one's own finalizers may hold them).
const crdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// heldBy says what keeps an object that was deleted, for a deletion that
// timed out: what kubectl delete leaves users to find. A finalizer that
// no controller (none installed, or one already uninstalled) removes; a
// CRD's crdCleanupFinalizer, which the API server removes once the
// custom resources are gone (left: those still there, as
// customResourcesLeft says them, or "" when not known; else what the
// CRD's Terminating condition reports); or a Namespace's, which the
// namespace controller removes once everything in it is gone (it
// reports what is left in its conditions).
func heldBy(live *unstructured.Unstructured, left string) string {
	fs := live.GetFinalizers()
	var why []string
	if isCRD(live) && slices.Contains(fs, crdCleanupFinalizer) {
		crd := "held by finalizer " + crdCleanupFinalizer + ", which the API server removes once the CRD's custom resources are gone"
		if left != "" {
			crd += "; still there: " + left
		} else if msg := trueCondition(live, "Terminating"); msg != "" {
			crd += "; it reports: " + msg
		}
		why = append(why, crd)
		fs = slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == crdCleanupFinalizer })
	}
	if len(fs) > 0 {
		why = append(why, "held by finalizers "+sanitizedList(fs)+", which no controller removed")
	}
	if len(why) > 0 || !isNamespace(live) {
		return strings.Join(why, "; ")
	}
	fs, _, _ = unstructured.NestedStringSlice(live.Object, "spec", "finalizers")
	if len(fs) == 0 {
		return ""
	}
	why0 := "held by its spec.finalizers " + sanitizedList(fs) + ", which the namespace controller (kube-controller-manager) removes once the namespace is empty"
	if msg := trueCondition(live, ""); msg != "" {
		why0 += "; it reports: " + msg
	}
	return why0
}

// trueCondition is the messages of live's status conditions of type typ
// (any type when ""), whose status is True, each made one line without
// terminal escapes, joined with "; ".
func trueCondition(live *unstructured.Unstructured, typ string) string {
	var msgs []string
	conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
	for _, c := range conds {
		c, _ := c.(map[string]any)
		if status, _ := c["status"].(string); status != "True" {
			continue
		}
		if t, _ := c["type"].(string); typ != "" && t != typ {
			continue
		}
		if msg, _ := c["message"].(string); msg != "" {
			msgs = append(msgs, safetree.Sanitize(msg))
		}
	}
	return strings.Join(msgs, "; ")
}

// customResourcesLeft says which custom resources of the CRD crd are
// still there ("Widget/default/held (held by finalizers example.com/x)
// and 2 more"), from one page of their metadata: "" when none, or when
// they cannot be listed (heldBy then says what the CRD reports).
func (c *Client) customResourcesLeft(ctx context.Context, crd *unstructured.Unstructured) string {
	gvk, ok := crdListKind(crd)
	if !ok {
		return ""
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.kube.List(ctx, l, client.Limit(100)); err != nil || len(l.Items) == 0 {
		return ""
	}
	items := l.Items
	sort.Slice(items, func(i, j int) bool {
		return describeMeta(gvk.Kind, items[i].Namespace, items[i].Name) < describeMeta(gvk.Kind, items[j].Namespace, items[j].Name)
	})
	first := describeMeta(gvk.Kind, items[0].Namespace, items[0].Name)
	if fs := items[0].Finalizers; len(fs) > 0 {
		first += " (held by finalizers " + sanitizedList(fs) + ")"
	}
	more := int64(len(items) - 1)
	if n := l.GetRemainingItemCount(); n != nil {
		more += *n
	} else if l.GetContinue() != "" {
		return first + fmt.Sprintf(" and more than %d more", more)
	}
	if more == 0 {
		return first
	}
	return first + fmt.Sprintf(" and %d more", more)
}

// sanitizedList joins what an object says (finalizer names), each made
// one line without terminal escapes.
func sanitizedList(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = safetree.Sanitize(s)
	}
	return strings.Join(out, ", ")
}

// waitGone waits until every object deleted is gone: not in the
// cluster, or another object there under its name (another uid, made
// since by someone else), which is not waited for and not named. Its
// *WaitError names those still there, and what holds each.
func (c *Client) waitGone(ctx context.Context, dels []deletion, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	we := &WaitError{Op: "deletion", TimedOut: true, Err: context.DeadlineExceeded}
	for _, d := range dels {
		err := wait.PollUntilContextCancel(ctx, c.opts.PollInterval, true, func(ctx context.Context) (bool, error) {
			live, err := c.get(ctx, d.obj)
			return err == nil && (live == nil || live.GetUID() != d.uid), nil
		})
		if err != nil {
			// The deadline passed, maybe on an earlier object: look once
			// more, so only what is still there is named.
			rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
			live, gerr := c.get(rctx, d.obj)
			switch {
			case gerr != nil:
				st := statusOf(d.obj, Unreadable, oneLine(gerr.Error()))
				we.add(st, st.goneLine())
			case live != nil && live.GetUID() == d.uid:
				left := ""
				if isCRD(live) && slices.Contains(live.GetFinalizers(), crdCleanupFinalizer) {
					left = c.customResourcesLeft(rctx, live)
				}
				st := statusOf(d.obj, Terminating, heldBy(live, left))
				we.add(st, st.goneLine())
			}
			rcancel()
		}
	}
	if len(we.Objects) == 0 {
		return nil
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("wait for deletion: %w", ctx.Err())
	}
	return we
}

// waitDiscovered resets the mapper once the API server's discovery
// serves what the CRDs crds define (created or changed by this apply):
// for each one's kind, every version its spec serves, and none it lists
// as not served. The API server remakes its discovery documents after a
// CRD is written, asynchronously (tens of milliseconds on an idle
// machine, more on a loaded one), while the CRD stays Established: a
// mapper reset at once could learn the versions of before again, and
// then the readiness wait would read a custom resource in a version no
// longer served and see it NotFound until it timed out, and prune would
// take the 404 of deleting one in that version for its being gone. The
// wait is bounded by timeout, as the CRDs' establishment is; when
// discovery already agrees, the mapper is reset once and no more.
func (c *Client) waitDiscovered(ctx context.Context, crds []*planned, timeout time.Duration) error {
	if len(crds) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var behind []ObjectStatus
	err := wait.PollUntilContextCancel(wctx, c.opts.PollInterval, true, func(context.Context) (bool, error) {
		c.mapper.Reset()
		behind = behind[:0]
		for _, pl := range crds {
			if why := c.discoveryBehind(pl.obj); why != "" {
				behind = append(behind, statusOf(pl.obj, InProgress, why))
			}
		}
		return len(behind) == 0, nil
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("wait: %w", ctx.Err())
	}
	we := &WaitError{Op: "readiness", TimedOut: true, Err: err}
	for _, st := range behind {
		we.add(st, st.String())
	}
	return we
}

// discoveryBehind says how the mapper's view of the kind crd defines
// (discovery's, as it was when the mapper was last reset) differs from
// crd's spec; "" when it does not.
func (c *Client) discoveryBehind(crd *unstructured.Unstructured) string {
	gk, ck, _ := crdKindOf(crd)
	ms, err := c.mapper.RESTMappings(gk)
	if err != nil && !meta.IsNoMatchError(err) {
		return "discover its kind: " + oneLine(err.Error())
	}
	var discovered []string
	for _, m := range ms {
		discovered = append(discovered, m.GroupVersionKind.Version)
	}
	for _, v := range ck.served {
		if !slices.Contains(discovered, v) {
			return fmt.Sprintf("the API server's discovery does not serve version %s of %s yet (it serves %s)", v, safetree.Sanitize(gk.String()), orNone(discovered))
		}
	}
	for _, v := range ck.unserved {
		if slices.Contains(discovered, v) {
			return fmt.Sprintf("the API server's discovery still serves version %s of %s, which the definition no longer serves", v, safetree.Sanitize(gk.String()))
		}
	}
	return ""
}
