package apply

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/ssa"
	yaml3 "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/addonpkg/addonpkg/internal/textdiff"
)

// Diff is Apply with DryRun: what apply would change, asked of the server
// with a server-side dry-run of every object, each Change with a unified
// diff of the object in the cluster and as it would be. Secret data is
// masked. An object the server cannot check yet, because its CRD or its
// Namespace is part of the add-on and not in the cluster, is Unvalidated,
// not Created. What the apply removes by taking over other managers'
// fields (Options.TakeOver: a label kubectl added by hand), which the
// server's dry-run cannot show, is shown too, with the fields named in
// the Change's Reason. Nothing in the cluster changes. The ownership
// check and the pre-flight run as for Apply.
func (c *Client) Diff(ctx context.Context, a Addon, opts Options) (*ChangeSet, error) {
	opts.DryRun = true
	return c.Apply(ctx, a, opts)
}

func (c *Client) diff(ctx context.Context, p *plan, opts Options) (*ChangeSet, error) {
	cs := &ChangeSet{Addon: p.addon.Name, DryRun: true}
	for _, pl := range p.objects {
		ch := Change{Object: describe(pl.obj), ID: pl.entry.ID, Version: pl.obj.GetAPIVersion()}
		switch {
		case pl.ignored():
			ch.Action, ch.Reason = Skipped, pl.ignoreReason()
		case pl.leftAsIs():
			// Before the pending cases: a custom resource may exist in
			// another version than its CRD's new one.
			ch.Action, ch.Reason = Skipped, pl.ifNotPresentReason()
		case pl.crdPending:
			ch.Action = Unvalidated
			ch.Reason = "not validated by the server: its CustomResourceDefinition is part of this add-on and not installed yet"
			ch.Diff = diffText(ch.Object, nil, pl.obj)
		case pl.nsPending:
			ch.Action = Unvalidated
			ch.Reason = fmt.Sprintf("not validated by the server: its Namespace %s is part of this add-on and does not exist yet", pl.obj.GetNamespace())
			ch.Diff = diffText(ch.Object, nil, pl.obj)
		default:
			// As the apply's options: an IfNotPresent object made since
			// the plan was read is skipped alike.
			o := ssa.DiffOptions{IfNotPresentSelector: ifNotPresentSelector, Exclusions: ignoreSelector}
			if pl.mayRecreate(opts) { // a definition never is
				o.Force, o.ForceSelector = opts.Recreate, map[string]string{AnnotationRecreate: RecreateEnabled}
			}
			entry, live, merged, err := c.manager.Diff(ctx, pl.obj.DeepCopy(), o)
			if err != nil {
				return cs, wrap(err)
			}
			ch.Action = Action(entry.Action)
			switch {
			case ch.Action == Skipped && ifNotPresentBy(pl.obj) == "":
				ch.Reason = ignoredSinceReason
			case ch.Action == Skipped:
				// Made since the plan was read (ssa returns no live object
				// of a skipped one): by this add-on, or by someone else.
				pl.unrecorded = !c.ownsNow(ctx, p, pl)
				ch.Reason = pl.ifNotPresentReason()
			}
			if ch.Action == Created && pl.live != nil && pl.mayRecreate(opts) {
				ch.Action, ch.Reason = Recreated, recreateReason
			}
			switch ch.Action {
			case Created, Recreated:
				ch.Diff = diffText(ch.Object, nil, pl.obj)
			case Configured:
				ch.Diff = diffText(ch.Object, live, merged)
			}
			if err := c.diffTakeOver(ctx, pl, opts, &ch, live, merged); err != nil {
				return cs, err
			}
		}
		cs.Changes = append(cs.Changes, ch)
	}
	if !opts.NoPrune {
		going := c.pruneGoing(p.addon.Name, p.prune)
		for _, d := range p.prune { // in reverse apply order, as prune deletes
			if d.live == nil {
				continue
			}
			ch, deleted, _, err := c.judge(ctx, p.addon.Name, d, going, opts.PruneNonEmpty)
			if err != nil {
				return cs, err
			}
			if deleted {
				ch.Diff = diffText(ch.Object, d.live, nil)
			}
			cs.Changes = append(cs.Changes, ch)
		}
	}
	return cs, nil
}

// diffTakeOver adds to ch what the apply removes by taking over other
// managers' fields (takenOver), which the server's dry-run cannot show:
// an object the dry-run found unchanged is then configured.
func (c *Client) diffTakeOver(ctx context.Context, pl *planned, opts Options, ch *Change, live, merged *unstructured.Unstructured) error {
	if pl.live == nil || (ch.Action != Unchanged && ch.Action != Configured) {
		return nil
	}
	gone, managers := takenOver(pl.live.ManagedFields, pl.obj, opts.takeOver())
	if len(gone) == 0 {
		return nil
	}
	if ch.Action == Unchanged {
		live = &unstructured.Unstructured{}
		live.SetGroupVersionKind(pl.obj.GroupVersionKind())
		if err := c.kube.Get(ctx, client.ObjectKeyFromObject(pl.obj), live); err != nil {
			return wrap(err)
		}
		unstructured.RemoveNestedField(live.Object, "metadata", "managedFields")
		merged = live
	}
	gone, reset, err := c.defaulted(ctx, live, gone)
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return nil
	}
	var fields []string
	for _, p := range gone {
		fields = append(fields, p.String())
	}
	ch.Reason = oneLine("takes over the fields of " + strings.Join(managers, ", ") + " and removes " + strings.Join(fields, ", "))
	ch.Action = Configured
	after := withoutPaths(merged, gone)
	for _, r := range reset {
		if err := unstructured.SetNestedField(after.Object, r.value, r.names...); err != nil {
			return fmt.Errorf("diff %s: %w", ch.Object, err)
		}
	}
	ch.Diff = diffText(ch.Object, live, after)
	return nil
}

// resetField is a field the apply removes and the server defaults again,
// to another value than it has.
type resetField struct {
	names []string
	value any
}

// defaulted asks the server what removing the fields of gone leaves,
// with a dry-run JSON patch of the live object that removes them (a
// field inside a list item found by its key, as the apply finds it): the
// server defaults some of them again (a Deployment's replicas and
// strategy, a container's terminationMessagePath, all of which kubectl's
// client-side apply holds once it created the object). A field defaulted
// to the value it has is not changed by the apply and leaves gone; a map
// key defaulted to another value stays, with that value in reset. A
// patch the server refuses (removing a required field, or leaving what an
// admission policy or webhook forbids) changes nothing: the apply meets
// the same refusal, and gone says what causes it; so
// does a patch too large to ask (over the server's 10,000 operations or
// its request size), every field of gone then said to be removed.
func (c *Client) defaulted(ctx context.Context, live *unstructured.Unstructured, gone []fieldpath.Path) ([]fieldpath.Path, []resetField, error) {
	var pointers [][]string
	for _, p := range gone {
		if _, ptr, ok := lookup(live.Object, p); ok {
			pointers = append(pointers, ptr)
		}
	}
	if len(pointers) == 0 {
		return gone, nil, nil
	}
	// Later items of a list first: removing a whole item (a finalizer)
	// moves those after it.
	slices.SortFunc(pointers, func(a, b []string) int { return -comparePointers(a, b) })
	type op struct {
		Op   string `json:"op"`
		Path string `json:"path"`
	}
	ops := make([]op, 0, len(pointers))
	for _, ptr := range pointers {
		ops = append(ops, op{Op: "remove", Path: jsonPointer(ptr)})
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, nil, fmt.Errorf("diff %s: %w", describe(live), err)
	}
	after := &unstructured.Unstructured{}
	after.SetGroupVersionKind(live.GroupVersionKind())
	after.SetNamespace(live.GetNamespace())
	after.SetName(live.GetName())
	if err := c.kube.Patch(ctx, after, client.RawPatch(types.JSONPatchType, data), client.DryRunAll, client.FieldOwner(FieldManager)); err != nil {
		// Forbidden is admission's answer here, not RBAC's: the dry-run
		// apply before this one was allowed the same verb.
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsConflict(err) ||
			apierrors.IsForbidden(err) || apierrors.IsRequestEntityTooLargeError(err) {
			return gone, nil, nil
		}
		return nil, nil, wrap(err)
	}
	var kept []fieldpath.Path
	var reset []resetField
	for _, p := range gone {
		now, _, ok := lookup(after.Object, p)
		if !ok {
			kept = append(kept, p)
			continue
		}
		if was, _, _ := lookup(live.Object, p); equality.Semantic.DeepEqual(was, now) {
			continue
		}
		kept = append(kept, p)
		if names := mapKeys(p); names != nil {
			reset = append(reset, resetField{names: names, value: runtime.DeepCopyJSONValue(now)})
		}
	}
	return kept, reset, nil
}

// comparePointers orders JSON pointers segment by segment, list indexes
// as numbers.
func comparePointers(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, errX := strconv.Atoi(a[i])
		y, errY := strconv.Atoi(b[i])
		if errX == nil && errY == nil {
			if x != y {
				return cmp.Compare(x, y)
			}
			continue
		}
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// jsonPointer is RFC 6901's pointer of its segments.
func jsonPointer(segments []string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteString("/")
		b.WriteString(pointerEscaper.Replace(s))
	}
	return b.String()
}

// pointerEscaper escapes a JSON pointer's segment (RFC 6901 section 3),
// made once: a take-over of many fields asks for many pointers.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// diffText is the unified diff from a to b (nil: absent), without
// managedFields and with Secret data masked.
func diffText(name string, a, b *unstructured.Unstructured) string {
	ya, errA := toYAML(a, yaml.Marshal)
	yb, errB := toYAML(b, yaml.Marshal)
	if errA != nil || errB != nil {
		// sigs.k8s.io/yaml reads its JSON back as YAML, whose reader
		// refuses a C1 control character (U+0080 to U+009F) anywhere in
		// the object: both sides were one "cannot encode" line, and the
		// diff of a changed object was empty. go-yaml writes it escaped;
		// both sides alike, so that only what changed differs.
		ya, errA = toYAML(a, escapedYAML)
		yb, errB = toYAML(b, escapedYAML)
	}
	for _, err := range []error{errA, errB} {
		if err != nil {
			return fmt.Sprintf("# cannot encode %s: %s\n", name, oneLine(err.Error()))
		}
	}
	return textdiff.Unified("live/"+name, "applied/"+name, ya, yb, 3)
}

// escapedYAML writes v as YAML with go-yaml, which escapes every control
// character, indented as sigs.k8s.io/yaml indents.
func escapedYAML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml3.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func toYAML(o *unstructured.Unstructured, marshal func(any) ([]byte, error)) (string, error) {
	if o == nil {
		return "", nil
	}
	o = o.DeepCopy()
	unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
	if o.GetKind() == "Secret" && o.GetAPIVersion() == "v1" {
		maskSecretData(o.Object)
		// kubectl's client-side apply keeps the whole manifest it applied,
		// data included, in this annotation: a Secret it made (or that
		// kubectl create --save-config made) carries its values there.
		if a := o.GetAnnotations(); a[corev1.LastAppliedConfigAnnotation] != "" {
			a[corev1.LastAppliedConfigAnnotation] = maskedLastApplied(a[corev1.LastAppliedConfigAnnotation])
			o.SetAnnotations(a)
		}
	}
	b, err := marshal(o.Object)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// maskSecretData masks the values of a Secret's data and stringData.
func maskSecretData(obj map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			for k, v := range m {
				// ssa's masking marks changed values; an unmasked
				// value left here is masked too.
				if s, ok := v.(string); !ok || (s != ssaMaskBefore && s != ssaMaskAfter) {
					m[k] = ssaMaskDefault
				}
			}
		}
	}
}

// maskedLastApplied is a Secret's last-applied-configuration annotation
// with the values of the manifest it holds masked, so that the diff
// still shows the annotation change (kubectl's fields taken over);
// masked whole when it is not a JSON object.
func maskedLastApplied(v string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
		return ssaMaskDefault
	}
	maskSecretData(m)
	b, err := json.Marshal(m)
	if err != nil {
		return ssaMaskDefault
	}
	return string(b)
}

// The placeholders ssa.SanitizeUnstructuredData writes for a changed
// value (before and after), and ours for any other.
const (
	ssaMaskBefore  = "*** (before)"
	ssaMaskAfter   = "*** (after)"
	ssaMaskDefault = "***"
)
