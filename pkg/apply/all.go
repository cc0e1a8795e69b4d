package apply

import (
	"context"
	"fmt"
)

// ApplyAll installs add-ons one after another in the order given (an
// add-on set's dependsOn order, as FromSet gives it): each is waited for
// until ready before the next is applied, whatever opts.Wait says, so a
// member can rely on what the ones before it installed (a CRD, a webhook
// that must answer).
// With opts.DryRun nothing is waited for. It stops at the first failure:
// the add-ons before it stay installed and their change sets are
// returned, with an error that names the add-on that failed.
func (c *Client) ApplyAll(ctx context.Context, addons []Addon, opts Options) ([]*ChangeSet, error) {
	if !opts.DryRun {
		opts.Wait = true
	}
	out := make([]*ChangeSet, 0, len(addons))
	for i, a := range addons {
		cs, err := c.Apply(ctx, a, opts)
		if err != nil {
			return out, fmt.Errorf("add-on %d of %d: %w", i+1, len(addons), err)
		}
		out = append(out, cs)
	}
	return out, nil
}
