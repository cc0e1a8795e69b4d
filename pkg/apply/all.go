package apply

import (
	"context"
	"errors"
	"fmt"
)

// ApplyAll installs add-ons one after another in the order given (an
// add-on set's dependsOn order, as FromSet gives it): each is waited for
// until ready before the next is applied, whatever opts.Wait says, so a
// member can rely on what the ones before it installed (a CRD, a webhook
// that must answer).
// With opts.DryRun nothing is waited for. It stops at the first failure:
// the add-ons before it stay installed and their change sets are
// returned, then what the failed one changed before it failed (a wait
// that timed out), with an error that names the add-on that failed.
func (c *Client) ApplyAll(ctx context.Context, addons []Addon, opts Options) ([]*ChangeSet, error) {
	if !opts.DryRun {
		opts.Wait = true
	}
	out := make([]*ChangeSet, 0, len(addons))
	for i, a := range addons {
		cs, err := c.Apply(ctx, a, opts)
		if cs != nil && len(cs.Changes) > 0 {
			out = append(out, cs) // with what a failed one did before it failed
		}
		if err != nil {
			return out, nth(i, len(addons), err)
		}
	}
	return out, nil
}

// UninstallAll uninstalls add-ons one after another in the order given
// (for an add-on set, addonset.Set.UninstallOrder's). An add-on that is not installed
// is passed over, its ErrNotInstalled joined to the error; any other
// failure stops it, so the add-ons after it (those the failed one depends
// on) stay installed. The change sets of those uninstalled are returned,
// with what the failed one did before it failed.
func (c *Client) UninstallAll(ctx context.Context, names []string, opts UninstallOptions) ([]*ChangeSet, error) {
	out := make([]*ChangeSet, 0, len(names))
	var errs []error
	for i, name := range names {
		cs, err := c.Uninstall(ctx, name, opts)
		if cs != nil {
			out = append(out, cs)
		}
		switch {
		case errors.Is(err, ErrNotInstalled):
			errs = append(errs, err)
		case err != nil:
			errs = append(errs, nth(i, len(names), err))
			return out, errors.Join(errs...)
		}
	}
	return out, errors.Join(errs...)
}

// nth says which of n add-ons the i-th's err is, when there are several
// (the error itself names the add-on).
func nth(i, n int, err error) error {
	if n == 1 {
		return err
	}
	return fmt.Errorf("add-on %d of %d: %w", i+1, n, err)
}
