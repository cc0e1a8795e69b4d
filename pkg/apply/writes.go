package apply

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// An apply that fails before it changed anything (a dry-run the API
// server refused, a webhook, an immutable field) should leave the
// cluster as it found it, inventory included. ssa does not say whether
// it wrote before it failed (it also migrates field managers and
// recreates objects on its own), so the client every object goes
// through counts the writes it is asked for: an Apply reads its count
// to know whether its pending inventory can be taken back.

// writesKey is the context key of a *writes.
type writesKey struct{}

// writes counts the writes (not dry-runs) asked of the API server, each
// counted before it is sent: one that fails may still have happened.
type writes struct{ n atomic.Int64 }

// countWrites returns a context whose writes through the counting
// client are counted in the returned *writes.
func countWrites(ctx context.Context) (context.Context, *writes) {
	w := &writes{}
	return context.WithValue(ctx, writesKey{}, w), w
}

// none reports whether no write was asked for.
func (w *writes) none() bool { return w.n.Load() == 0 }

func wrote(ctx context.Context, dryRun []string) {
	if w, ok := ctx.Value(writesKey{}).(*writes); ok && len(dryRun) == 0 {
		w.n.Add(1)
	}
}

// countingClient wraps c so that every write through it is counted in
// the *writes of its context (countWrites).
func countingClient(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			wrote(ctx, (&client.CreateOptions{}).ApplyOptions(opts).DryRun)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			wrote(ctx, (&client.UpdateOptions{}).ApplyOptions(opts).DryRun)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			wrote(ctx, (&client.PatchOptions{}).ApplyOptions(opts).DryRun)
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			wrote(ctx, (&client.ApplyOptions{}).ApplyOptions(opts).DryRun)
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			wrote(ctx, (&client.DeleteOptions{}).ApplyOptions(opts).DryRun)
			return c.Delete(ctx, obj, opts...)
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			wrote(ctx, (&client.DeleteAllOfOptions{}).ApplyOptions(opts).DryRun)
			return c.DeleteAllOf(ctx, obj, opts...)
		},
		// A subresource write counts, dry-run or not: none is asked for
		// today, and counting one too many only keeps a record.
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			wrote(ctx, nil)
			return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			wrote(ctx, nil)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			wrote(ctx, nil)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			wrote(ctx, nil)
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
}
