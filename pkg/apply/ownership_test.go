package apply_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// An OwnershipError says whose the objects in the way are: all of one
// add-on (an installed add-on applied again under another name) is said
// so, not "belong to others".
func TestOwnershipErrorWords(t *testing.T) {
	for _, c := range []struct {
		name string
		err  apply.OwnershipError
		want string
	}{
		{"one object", apply.OwnershipError{Object: "ConfigMap/default/a", Owner: "x", Addon: "y"},
			`ConfigMap/default/a belongs to add-on "x", not "y"`},
		{"all of one owner", apply.OwnershipError{Object: "ClusterRole/r", Owner: "metrics-server", Addon: "ms2", More: 7},
			`ClusterRole/r and 7 more objects belong to add-on "metrics-server", not "ms2"`},
		{"one more of the same owner", apply.OwnershipError{Object: "ClusterRole/r", Owner: "x", Addon: "y", More: 1},
			`ClusterRole/r and 1 more object belong to add-on "x", not "y"`},
		{"of several owners", apply.OwnershipError{Object: "ClusterRole/r", Owner: "x", Addon: "y", More: 3, Others: 2},
			`ClusterRole/r belongs to add-on "x", not "y", and 3 more objects belong to the same owner or to others`},
		{"each of another owner", apply.OwnershipError{Object: "ClusterRole/r", Owner: "x", Addon: "y", More: 3, Others: 3},
			`ClusterRole/r belongs to add-on "x", not "y", and 3 more objects belong to others`},
		{"elsewhere, all", apply.OwnershipError{Object: "ClusterRole/r", Owner: "y", Addon: "y", Elsewhere: true, More: 2},
			`ClusterRole/r and 2 more objects belong to add-on "y" of another inventory namespace`},
		{"another tool's ApplySet parent", apply.OwnershipError{Object: "Secret/ns/kset", Addon: "y", Set: "applyset-x-v1", Parent: `Secret/ns/kset (tooling "kubectl/v1.32.4")`},
			`Secret/ns/kset is the parent of ApplySet applyset-x-v1 (tooling "kubectl/v1.32.4"), not an object of add-on "y"`},
		{"a parent and its members", apply.OwnershipError{Object: "Secret/ns/kset", Addon: "y", Set: "applyset-x-v1", Parent: "Secret/ns/kset", More: 2},
			`Secret/ns/kset is the parent of ApplySet applyset-x-v1, not an object of add-on "y", and 2 more objects belong to it or to others`},
		{"a controller's", apply.OwnershipError{Object: "Deployment/apps/web", Addon: "y", Controller: "Flux Kustomization flux-system/apps", More: 2},
			`Deployment/apps/web and 2 more objects belong to Flux Kustomization flux-system/apps, which applies it again from its own source, not to add-on "y"`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// Which add-on of several failed is said; of one, the error alone says
// it, without "add-on 1 of 1". Either way an *AddonError names it.
func TestNthOfSeveral(t *testing.T) {
	err := errors.New("apply a: refused")
	var ae *apply.AddonError
	if got := apply.Nth(0, 1, "a", err); got.Error() != err.Error() || !errors.Is(got, err) || !errors.As(got, &ae) || ae.Addon != "a" || ae.Index != 0 {
		t.Errorf("one add-on: %q (%+v), want the error as it is, an *AddonError naming a", got, ae)
	}
	if got := apply.Nth(1, 3, "a", err); got.Error() != "add-on 2 of 3: apply a: refused" || !errors.Is(got, err) || !errors.As(got, &ae) || ae.Addon != "a" || ae.Index != 1 {
		t.Errorf("three add-ons: %q (%+v)", got, ae)
	}
}

// A pre-flight refused on many names lists ten and counts the rest: one
// line, not one of 500 permissions.
func TestPreflightErrorListsTen(t *testing.T) {
	e := &apply.PreflightError{User: "u"}
	for i := range 12 {
		e.Missing = append(e.Missing, apply.Permission{Verb: "get", Resource: "configmaps", Namespace: "ns", Name: fmt.Sprintf("c%02d", i)})
	}
	got := e.Error()
	if !strings.HasSuffix(got, "get configmaps/c09 in ns, and 2 more") || strings.Contains(got, "c10") {
		t.Errorf("%q: want ten listed and two counted", got)
	}
}

// A NameClaimError names the add-on and both origins on one line, with
// no terminal escapes from an inventory another tool may have written,
// and says when the claimant names no source.
func TestNameClaimErrorWords(t *testing.T) {
	for _, c := range []struct {
		err  apply.NameClaimError
		want string
	}{
		{apply.NameClaimError{Addon: "coredns", Installed: "registry.example.com/addons/coredns", Claimant: "ghcr.io/someone/coredns"},
			`add-on "coredns" is installed from registry.example.com/addons/coredns, not from ghcr.io/someone/coredns, whose config claims the name`},
		{apply.NameClaimError{Addon: "coredns", Installed: "/srv/coredns"},
			`add-on "coredns" is installed from /srv/coredns, not from an add-on that names no source, whose config claims the name`},
		{apply.NameClaimError{Addon: "x", Installed: "/srv/\x1b[2Jx\ny", Claimant: "/srv/z"},
			`add-on "x" is installed from /srv/?[2Jx?y, not from /srv/z, whose config claims the name`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("\n got %s\nwant %s", got, c.want)
		}
		if !errors.Is(&c.err, apply.ErrConflict) {
			t.Errorf("%v does not match ErrConflict", &c.err)
		}
	}
}
