package apply_test

import (
	"encoding/base64"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// upstreamShapes holds hand-written reproductions of the shapes of
// upstream add-ons that realAddons does not (its README says what each
// stresses).
var upstreamShapes = filepath.Join("testdata", "upstream-shapes")

// The shapes of upstream's add-ons install into a real API server as
// they are, a second apply and a dry-run find nothing to change, and an
// uninstall removes every object the inventory names.
func TestUpstreamShapesInstallAndUninstall(t *testing.T) {
	if testing.Short() {
		t.Skip("installs add-ons into a real API server")
	}
	k := newCluster(t)
	for _, tc := range []struct{ name, dir string }{
		{"cert-manager", "cert-manager"},
		{"ingress-nginx", "ingress-nginx"},
		{"flannel", "flannel"},
		{"calico", "calico"},
		{"local-path-provisioner", "local-path-provisioner/deploy"},
		{"operator", "operator"},
		{"messy", "messy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := k.renderedAddon(t, tc.name, upstreamShapes, tc.dir)
			var between func()
			if tc.name == "cert-manager" {
				between = func() { k.injectCABundles(t) }
			}
			k.installTwice(t, a, between)
			if tc.name == "cert-manager" {
				k.checkCABundles(t)
			}
			// An upgrade that drops the Jobs and webhooks prunes them.
			up := a
			up.Version, up.Objects = "upgrade", nil
			var dropped []*unstructured.Unstructured
			for _, o := range a.Objects {
				switch o.GetKind() {
				case "Job", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
					dropped = append(dropped, o)
				default:
					up.Objects = append(up.Objects, o)
				}
			}
			if len(dropped) > 0 {
				cs := k.mustApply(t, up, apply.Options{Timeout: time.Minute})
				if n := cs.Count(apply.Deleted); n != len(dropped) || cs.Count(apply.Configured) > 0 {
					t.Errorf("the upgrade deleted %d objects, want the %d it dropped, and configured no other:\n%s", n, len(dropped), cs)
				}
				for _, o := range dropped {
					if _, err := k.getObject(o); !apierrors.IsNotFound(err) {
						t.Errorf("the upgrade left %s %s (get: %v)", o.GetKind(), o.GetName(), err)
					}
				}
				a = up
			}
			k.uninstallAll(t, a)
		})
	}
}

var webhookConfigurations = []schema.GroupVersionResource{
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
}

// injectCABundles does what cert-manager's cainjector does once it runs:
// writes caBundle into the webhook configurations, as its own field
// manager. The add-on does not set the field: applying it again must
// neither change nor take it.
func (k *cluster) injectCABundles(t *testing.T) {
	t.Helper()
	patch := []byte(`[{"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":"` + base64.StdEncoding.EncodeToString([]byte("a CA")) + `"}]`)
	for _, gvr := range webhookConfigurations {
		if _, err := k.dyn.Resource(gvr).Patch(k.ctx, "cert-manager-webhook", types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: "cert-manager-cainjector"}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkCABundles checks that the caBundle cainjector wrote is still there.
func (k *cluster) checkCABundles(t *testing.T) {
	t.Helper()
	for _, gvr := range webhookConfigurations {
		u, err := k.dyn.Resource(gvr).Get(k.ctx, "cert-manager-webhook", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		if len(hooks) == 0 {
			t.Fatalf("%s has no webhooks", gvr.Resource)
		}
		if ca, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle"); ca == "" {
			t.Errorf("applying cert-manager again removed the caBundle cainjector wrote into its %s", gvr.Resource)
		}
	}
}
