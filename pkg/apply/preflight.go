package apply

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// permissions is every verb the plan needs, deduplicated: get and patch
// for every object (server-side apply is a patch), create for those that
// do not exist yet, delete for those it may recreate and for those it
// prunes, and what the inventory needs.
func (p *plan) permissions(c *Client, opts Options) []Permission {
	set := map[Permission]bool{}
	add := func(verb, group, resource, ns string) {
		set[Permission{Verb: verb, Group: group, Resource: resource, Namespace: ns}] = true
	}
	for _, pl := range p.objects {
		g, r, ns := pl.resource.Group, pl.resource.Resource, pl.obj.GetNamespace()
		add("get", g, r, ns)
		add("patch", g, r, ns)
		if pl.live == nil {
			add("create", g, r, ns)
		}
		if opts.Recreate || pl.obj.GetAnnotations()[AnnotationRecreate] == RecreateEnabled {
			add("delete", g, r, ns)
		}
	}
	if !opts.NoPrune {
		for _, d := range p.prune {
			if d.live == nil {
				continue
			}
			add("get", d.resource.Group, d.resource.Resource, d.obj.GetNamespace())
			add("delete", d.resource.Group, d.resource.Resource, d.obj.GetNamespace())
		}
	}
	// The inventory is written pending, then applied: a first install
	// creates it and updates it.
	inv := c.opts.InventoryNamespace
	add("get", "", "secrets", inv)
	if !opts.DryRun {
		if p.prevSecret == nil {
			add("create", "", "secrets", inv)
		}
		add("update", "", "secrets", inv)
	}
	return sortedPermissions(set)
}

func sortedPermissions(set map[Permission]bool) []Permission {
	out := make([]Permission, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return a.Verb < b.Verb
	})
	return out
}

// Preflight asks the API server, with one SelfSubjectAccessReview each,
// whether the credentials may do every one of perms, and returns a
// *PreflightError listing those they may not.
func (c *Client) Preflight(ctx context.Context, perms []Permission) error {
	var (
		mu      sync.Mutex
		missing []Permission
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, p := range perms {
		g.Go(func() error {
			r, err := c.typed.AuthorizationV1().SelfSubjectAccessReviews().Create(gctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: p.Verb, Group: p.Group, Resource: p.Resource, Namespace: p.Namespace,
				}},
			}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("pre-flight %s: %w", p, wrap(err))
			}
			if !r.Status.Allowed {
				mu.Lock()
				missing = append(missing, p)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	set := map[Permission]bool{}
	for _, p := range missing {
		set[p] = true
	}
	pe := &PreflightError{Missing: sortedPermissions(set)}
	if r, err := c.typed.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err == nil {
		pe.User = r.Status.UserInfo.Username
	}
	return pe
}
