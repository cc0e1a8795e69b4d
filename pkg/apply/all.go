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
// that timed out), with an *AddonError that names the add-on that failed.
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
			return out, nth(i, len(addons), a.Name, err)
		}
	}
	return out, nil
}

// UninstallAll uninstalls add-ons one after another in the order given
// (for an add-on set, addonset.Set.UninstallOrder's). An add-on that is not installed
// is passed over, its ErrNotInstalled joined to the error; any other
// failure stops it, so the add-ons after it (those the failed one depends
// on) stay installed. The change sets of those uninstalled are returned,
// with what the failed one did before it failed. Each error joined is an
// *AddonError naming its add-on.
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
			// Its message names it: no "add-on i of n".
			errs = append(errs, &AddonError{Addon: name, Index: i, Err: err})
		case err != nil:
			errs = append(errs, nth(i, len(names), name, err))
			return out, errors.Join(errs...)
		}
	}
	return out, errors.Join(errs...)
}

// AddonError is the failure of one add-on of several (ApplyAll,
// UninstallAll): which one (Addon, its name, and Index, its place in the
// list given, from 0) and why (Err, which errors.Is and errors.As see
// through: ErrTimeout, *PreflightError, ...). A caller that reports per
// add-on (a condition on each member of a set) takes the name from here:
// the change sets returned do not say whether the last one is the failed
// add-on's, for one that failed before its first change has none.
type AddonError struct {
	Addon string
	Index int
	Err   error
	// of is how many add-ons there were; past one, the message says
	// which of them ("add-on 2 of 3: ...").
	of int
}

func (e *AddonError) Error() string {
	if e.of <= 1 {
		return e.Err.Error()
	}
	return fmt.Sprintf("add-on %d of %d: %s", e.Index+1, e.of, e.Err.Error())
}

func (e *AddonError) Unwrap() error { return e.Err }

// nth is the *AddonError of the i-th of n add-ons, named name; its
// message says which of them it is when there are several (the error
// itself names the add-on).
func nth(i, n int, name string, err error) error {
	return &AddonError{Addon: name, Index: i, Err: err, of: n}
}
