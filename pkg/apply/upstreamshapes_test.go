package apply_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

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
	for _, tc := range []struct {
		name, dir string
		// namespace, when set, is where the objects that name none go
		// (kubectl apply -n): the add-on does not ship it, and it is
		// made first, as upstream's instructions say.
		namespace string
		// between is what the add-on's controllers do once they run.
		between func(*cluster, *testing.T)
	}{
		{name: "cert-manager", dir: "cert-manager", between: (*cluster).injectCABundles},
		{name: "ingress-nginx", dir: "ingress-nginx"},
		{name: "flannel", dir: "flannel"},
		{name: "calico", dir: "calico"},
		{name: "local-path-provisioner", dir: "local-path-provisioner/deploy"},
		{name: "operator", dir: "operator"},
		{name: "messy", dir: "messy"},
		{name: "metallb", dir: "metallb", between: (*cluster).playMetalLB},
		{name: "argocd", dir: "argocd", namespace: "argocd"},
		{name: "sealed-secrets", dir: "sealed-secrets"},
		{name: "external-dns", dir: "external-dns"},
		{name: "cluster-autoscaler", dir: "cluster-autoscaler"},
		{name: "csi-hostpath", dir: "csi-hostpath"},
		{name: "kyverno", dir: "kyverno", between: (*cluster).playKyverno},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := k.sub(t)
			if tc.namespace != "" {
				k = k.inNamespace(t, tc.namespace)
			}
			a := k.renderedAddon(t, tc.name, upstreamShapes, tc.dir)
			var between func()
			if tc.between != nil {
				between = func() { tc.between(k, t) }
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

// inNamespace is k with an admin client that gives the objects naming
// none the namespace ns, as `kubectl apply -n ns` does, once ns is made,
// as upstream's instructions have the user make it; it goes when the
// test ends.
func (k *cluster) inNamespace(t *testing.T, ns string) *cluster {
	t.Helper()
	c, err := apply.New(k.env.Admin, apply.ClientOptions{Namespace: ns, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.typed.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", ns, err)
		}
	})
	in := *k
	in.admin, in.namespace = c, ns
	return &in
}

// playMetalLB does what MetalLB's controller does once it runs: its
// cert-rotator writes a CA into the CRD's conversion webhook (over
// upstream's placeholder, which the apply leaves out: the API server
// refuses a caBundle that is no certificate) and into the webhook
// configuration, and fills the Secret the add-on ships empty; the
// controller makes the memberlist Secret, owned by its Deployment. And,
// for this test only, each webhook gets a match condition that is never
// true: nothing serves them here, and the API server would call their
// Service's ClusterIP, off this host, on every later apply of the pool.
func (k *cluster) playMetalLB(t *testing.T) {
	t.Helper()
	ca := base64.StdEncoding.EncodeToString(testCA(t))
	const manager = "metallb-controller" // an update, as cert-controller's
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := k.dyn.Resource(crds).Patch(k.ctx, "bgppeers.metallb.io", types.MergePatchType,
		[]byte(`{"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":"`+ca+`"}}}}}`), metav1.PatchOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for i := range 3 {
		ops = append(ops, fmt.Sprintf(`{"op":"add","path":"/webhooks/%d/clientConfig/caBundle","value":%q}`, i, ca))
	}
	vwc := webhookConfigurations[0]
	if _, err := k.dyn.Resource(vwc).Patch(k.ctx, "metallb-webhook-configuration", types.JSONPatchType, []byte("["+strings.Join(ops, ",")+"]"), metav1.PatchOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
	var never []string
	for _, name := range []string{"bgppeersvalidationwebhook.metallb.io", "ipaddresspoolvalidationwebhook.metallb.io", "l2advertisementvalidationwebhook.metallb.io"} {
		never = append(never, fmt.Sprintf(`{"name":%q,"matchConditions":[{"name":"no-server-in-this-test","expression":"false"}]}`, name))
	}
	if _, err := k.dyn.Resource(vwc).Patch(k.ctx, "metallb-webhook-configuration", types.StrategicMergePatchType, []byte(`{"webhooks":[`+strings.Join(never, ",")+`]}`), metav1.PatchOptions{FieldManager: "addonpkg-test"}); err != nil {
		t.Fatal(err)
	}
	secrets := k.typed.CoreV1().Secrets("metallb-system")
	cert, err := secrets.Get(k.ctx, "metallb-webhook-cert", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cert.Data = map[string][]byte{"ca.crt": []byte("ca"), "tls.crt": []byte("cert"), "tls.key": []byte("key")}
	if _, err := secrets.Update(k.ctx, cert, metav1.UpdateOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
	ctrl, err := k.typed.AppsV1().Deployments("metallb-system").Get(k.ctx, "controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	memberlist := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "memberlist", Namespace: "metallb-system",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: ctrl.Name, UID: ctrl.UID}}},
		Data: map[string][]byte{"secretkey": []byte("a key")}}
	if _, err := secrets.Create(k.ctx, memberlist, metav1.CreateOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
}

// playKyverno does what kube-controller-manager's clusterrole-aggregation
// controller does for Kyverno's aggregated ClusterRole, which the add-on
// ships without rules: it writes the rules of the roles it aggregates.
// And Kyverno's admission controller takes its leader-election Lease in
// its namespace, which outlives it: the uninstall still deletes the
// Namespace.
func (k *cluster) playKyverno(t *testing.T) {
	t.Helper()
	holder := "kyverno-admission-controller-6d9b8c7f5-x2x9z"
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kyverno", Namespace: "kyverno"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	if _, err := k.typed.CoordinationV1().Leases("kyverno").Create(k.ctx, lease, metav1.CreateOptions{FieldManager: "kyverno"}); err != nil {
		t.Fatal(err)
	}
	roles := k.typed.RbacV1().ClusterRoles()
	core, err := roles.Get(k.ctx, "kyverno:admission-controller:core", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := roles.Get(k.ctx, "kyverno:admission-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agg.Rules = core.Rules
	if _, err := roles.Update(k.ctx, agg, metav1.UpdateOptions{FieldManager: "clusterrole-aggregation-controller"}); err != nil {
		t.Fatal(err)
	}
}

// testCA is a self-signed CA certificate, PEM-encoded.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// Argo CD's install.yaml names no namespace and ships none: upstream has
// the user make argocd first. Applied into a namespace that does not
// exist, it is refused before any change, in one line naming the
// namespace. Before, its CRDs and ClusterRoles were made, then the
// first Role failed ("Role/argocd/... not found: namespaces "argocd"
// not found"), and the install was left half made, its inventory
// pending.
func TestMissingNamespaceChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	c, err := apply.New(k.env.Admin, apply.ClientOptions{Namespace: k.prefix})
	if err != nil {
		t.Fatal(err)
	}
	a := k.renderedAddon(t, k.prefix, upstreamShapes, "argocd")
	for _, opts := range []apply.Options{{DryRun: true}, {Timeout: time.Minute}} {
		_, err = c.Apply(k.ctx, a, opts)
		want := "namespace " + k.prefix + " does not exist, and the add-on does not create it"
		if !errors.Is(err, apply.ErrInvalid) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("apply (dry-run %v) = %v, want one line of ErrInvalid saying %q", opts.DryRun, err, want)
		}
	}
	k.assertNothingOf(t, a)
}

// MetalLB's CRD carries upstream's placeholder caBundle ("this is not a
// cert"), which the apply leaves out (the API server refuses it, and the
// controller writes the real one). A dry-run of the first install shows
// the CRD as it is applied: before, its diff showed the placeholder.
func TestDryRunShowsTheCRDAsApplied(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	a := k.renderedAddon(t, k.prefix, upstreamShapes, "metallb")
	cs, err := k.admin.Apply(k.ctx, a, apply.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range cs.Changes {
		if c.Object != "CustomResourceDefinition/bgppeers.metallb.io" {
			continue
		}
		found = true
		if c.Action != apply.Created || !strings.Contains(c.Diff, "conversionReviewVersions") || strings.Contains(c.Diff, "caBundle") {
			t.Errorf("the dry-run %s the CRD, its diff showing the caBundle the apply leaves out:\n%s", c.Action, c.Diff)
		}
	}
	if !found {
		t.Errorf("the dry-run does not list the CRD:\n%s", cs)
	}
}
