package apply

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	do := ssa.DiffOptions{Force: opts.Recreate, ForceSelector: map[string]string{AnnotationRecreate: RecreateEnabled}}
	for _, pl := range p.objects {
		ch := Change{Object: describe(pl.obj), ID: pl.entry.ID, Version: pl.obj.GetAPIVersion()}
		switch {
		case pl.crdPending:
			ch.Action = Unvalidated
			ch.Reason = "not validated by the server: its CustomResourceDefinition is part of this add-on and not installed yet"
			ch.Diff = diffText(ch.Object, nil, pl.obj)
		case pl.nsPending:
			ch.Action = Unvalidated
			ch.Reason = fmt.Sprintf("not validated by the server: its Namespace %s is part of this add-on and does not exist yet", pl.obj.GetNamespace())
			ch.Diff = diffText(ch.Object, nil, pl.obj)
		default:
			entry, live, merged, err := c.manager.Diff(ctx, pl.obj.DeepCopy(), do)
			if err != nil {
				return cs, wrap(err)
			}
			ch.Action = Action(entry.Action)
			switch ch.Action {
			case Created:
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
		going := pruneGoing(p.addon.Name, p.prune)
		for i := len(p.prune) - 1; i >= 0; i-- {
			d := p.prune[i]
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
	var fields []string
	for _, p := range gone {
		fields = append(fields, p.String())
	}
	ch.Reason = oneLine("takes over the fields of " + strings.Join(managers, ", ") + " and removes " + strings.Join(fields, ", "))
	if ch.Action == Unchanged {
		ch.Action = Configured
		live = &unstructured.Unstructured{}
		live.SetGroupVersionKind(pl.obj.GroupVersionKind())
		if err := c.kube.Get(ctx, client.ObjectKeyFromObject(pl.obj), live); err != nil {
			return wrap(err)
		}
		unstructured.RemoveNestedField(live.Object, "metadata", "managedFields")
		merged = live
	}
	ch.Diff = diffText(ch.Object, live, withoutPaths(merged, gone))
	return nil
}

// diffText is the unified diff from a to b (nil: absent), without
// managedFields and with Secret data masked.
func diffText(name string, a, b *unstructured.Unstructured) string {
	return textdiff.Unified("live/"+name, "applied/"+name, toYAML(a), toYAML(b), 3)
}

func toYAML(o *unstructured.Unstructured) string {
	if o == nil {
		return ""
	}
	o = o.DeepCopy()
	unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
	if o.GetKind() == "Secret" && o.GetAPIVersion() == "v1" {
		for _, field := range []string{"data", "stringData"} {
			if m, ok := o.Object[field].(map[string]any); ok {
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
	b, err := yaml.Marshal(o.Object)
	if err != nil {
		return fmt.Sprintf("# cannot encode: %v\n", err)
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
