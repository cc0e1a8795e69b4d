package apply_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubectlapply "k8s.io/kubectl/pkg/cmd/apply"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// The inventory Secret's ApplySet id is the one kubectl computes for the
// same parent, so `kubectl` sees the set (KEP-3659).
func TestApplySetIDIsKubectls(t *testing.T) {
	for _, p := range []struct{ name, ns string }{{"addonpkg-coredns", "kube-system"}, {"addonpkg-x", "addons"}} {
		ref := &kubectlapply.ApplySetParentRef{Name: p.name, Namespace: p.ns, RESTMapping: &meta.RESTMapping{
			Resource:         schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
			GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
			Scope:            meta.RESTScopeNamespace,
		}}
		want := kubectlapply.NewApplySet(ref, kubectlapply.ApplySetTooling{Name: "addonpkg", Version: "v1"}, nil, nil).ID()
		if got := apply.ApplySetID(p.name, p.ns); got != want {
			t.Errorf("ApplySetID(%s, %s) = %s, kubectl says %s", p.name, p.ns, got, want)
		}
	}
}
