package apply

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
// prunes, and what the inventory needs. Each is of the object's name but
// create, which RBAC cannot grant by name. An object the apply leaves as
// it is (an IfNotPresent one that exists, an ignored one) is only read:
// asking patch of it would refuse an installer whose role grants create
// alone for a Secret it makes once. So is one prune keeps (pruneVerb).
func (p *plan) permissions(c *Client, opts Options) []Permission {
	set := map[Permission]bool{}
	add := func(verb, group, resource, ns, name string) {
		set[Permission{Verb: verb, Group: group, Resource: resource, Namespace: ns, Name: name}] = true
	}
	for _, pl := range p.objects {
		g, r, ns, n := pl.resource.Group, pl.resource.Resource, pl.obj.GetNamespace(), pl.obj.GetName()
		add("get", g, r, ns, n)
		if pl.leftAsIs() || pl.ignored() {
			continue // ssa reads it and skips it: no patch, create or delete
		}
		add("patch", g, r, ns, n)
		if pl.live == nil {
			add("create", g, r, ns, "")
		}
		if pl.mayRecreate(opts) {
			add("delete", g, r, ns, n)
		}
	}
	if !opts.NoPrune {
		for _, d := range p.prune {
			if d.live == nil {
				continue
			}
			add("get", d.resource.Group, d.resource.Resource, d.obj.GetNamespace(), d.obj.GetName())
			add(pruneVerb(d), d.resource.Group, d.resource.Resource, d.obj.GetNamespace(), d.obj.GetName())
		}
	}
	// The inventory is written pending, then applied: a first install
	// creates it and updates it.
	inv, name := c.opts.InventoryNamespace, InventoryName(p.addon.Name)
	add("get", "", "secrets", inv, name)
	if !opts.DryRun {
		if p.prevSecret == nil {
			add("create", "", "secrets", inv, "")
		}
		add("update", "", "secrets", inv, name)
	}
	return sortedPermissions(set)
}

// pruneVerb is the verb prune needs for d: delete, or patch for a
// Namespace it lets go of instead (doomed.letGo), or get alone for one
// it keeps as it is: kept by an annotation or its Ignore (keptBy), or not known
// to hold inventories or not (doomed.unlisted).
func pruneVerb(d *doomed) string {
	switch {
	case d.keptBy() != "":
		return "get"
	case d.letGo:
		return "patch"
	case d.unlisted != "":
		return "get"
	}
	return "delete"
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
		if a.Verb != b.Verb {
			return a.Verb < b.Verb
		}
		return a.Name < b.Name
	})
	return out
}

// Preflight asks the API server, with SelfSubjectAccessReviews, whether
// the credentials may do every one of perms, and returns a
// *PreflightError listing those they may not. The permissions of one
// verb on one resource are asked once without their names, as most
// grants are; only where that is refused is each name asked, for a rule
// may grant some names alone (resourceNames). A resource none of whose
// names is granted is listed once, without them. Every review of a
// round is asked side by side (preflightConcurrency at a time): an
// add-on of 500 objects refused a verb on their resource asks 500 more,
// which are not 500 round trips one after another.
func (c *Client) Preflight(ctx context.Context, perms []Permission) error {
	byResource := map[Permission]map[Permission]bool{}
	for _, p := range perms {
		r := p
		r.Name = ""
		if byResource[r] == nil {
			byResource[r] = map[Permission]bool{}
		}
		byResource[r][p] = true
	}
	refusedResources, err := c.refused(ctx, slices.Collect(maps.Keys(byResource)))
	if err != nil {
		return err
	}
	missing := map[Permission]bool{}
	var byName []Permission
	for r := range refusedResources {
		if byResource[r][r] {
			missing[r] = true // asked without a name (create): refused
			continue
		}
		byName = slices.AppendSeq(byName, maps.Keys(byResource[r]))
	}
	refusedNames, err := c.refused(ctx, byName)
	if err != nil {
		return err
	}
	for r := range refusedResources {
		if missing[r] {
			continue
		}
		var refused []Permission
		for p := range byResource[r] {
			if refusedNames[p] {
				refused = append(refused, p)
			}
		}
		if len(refused) > 1 && len(refused) == len(byResource[r]) {
			refused = []Permission{r}
		}
		for _, p := range refused {
			missing[p] = true
		}
	}
	if len(missing) == 0 {
		return nil
	}
	pe := &PreflightError{Missing: sortedPermissions(missing)}
	if r, err := c.typed.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err == nil {
		pe.User = r.Status.UserInfo.Username
	}
	return pe
}

// preflightConcurrency is how many reviews the pre-flight asks at a time.
const preflightConcurrency = 16

// refused asks for each of perms whether the credentials may do it, all
// side by side, and returns those refused.
func (c *Client) refused(ctx context.Context, perms []Permission) (map[Permission]bool, error) {
	var (
		mu  sync.Mutex
		out = map[Permission]bool{}
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(preflightConcurrency)
	for _, p := range perms {
		g.Go(func() error {
			ok, err := c.allowed(gctx, p)
			if err != nil || ok {
				return err
			}
			mu.Lock()
			out[p] = true
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

// allowed asks the API server whether the credentials may do p.
func (c *Client) allowed(ctx context.Context, p Permission) (bool, error) {
	r, err := c.typed.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: p.Verb, Group: p.Group, Resource: p.Resource, Namespace: p.Namespace, Name: p.Name,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("pre-flight %s: %w", p, wrap(err))
	}
	return r.Status.Allowed, nil
}
