package apply_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

const serviceWorkload = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: 127.0.0.1/web:1}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`

// playDependents makes what a cluster's controllers make for a running
// Deployment and the Service of its name: the namespace's default ServiceAccount, a
// ReplicaSet owned by the Deployment, a Pod owned by the ReplicaSet, the
// Service's EndpointSlice (owned by it) and Endpoints (named after it).
func (k *cluster) playDependents(t *testing.T, ns, deployment string) {
	t.Helper()
	typed := k.typed
	if _, err := typed.CoreV1().ServiceAccounts(ns).Create(k.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	d, err := typed.AppsV1().Deployments(ns).Get(k.ctx, deployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: deployment + "-5d8f7c9b4", Labels: d.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template},
	}
	if rs, err = typed.AppsV1().ReplicaSets(ns).Create(k.ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: rs.Name + "-x7k2p", Labels: d.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: d.Spec.Template.Spec,
	}
	if _, err := typed.CoreV1().Pods(ns).Create(k.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := typed.CoreV1().Services(ns).Get(k.ctx, deployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := typed.DiscoveryV1().EndpointSlices(ns).Create(k.ctx, &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID, Controller: ptr.To(true)}}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := typed.CoreV1().Endpoints(ns).Create(k.ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// What the cluster's controllers make for an add-on's own workloads (a
// Deployment's ReplicaSets and their Pods, a Service's EndpointSlices and
// Endpoints) goes with them, and does not keep their Namespace: before,
// every add-on with a Deployment in a Namespace of its own left the
// Namespace behind on a real cluster ("kept: it still holds
// EndpointSlice/..."), and in its inventory. An object owned by
// something that stays still keeps it; once its owner is gone, the
// garbage collector's, it does not.
func TestUninstallIgnoresTheDependentsOfItsObjects(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", serviceWorkload)
	k.mustApply(t, a, apply.Options{})
	k.playDependents(t, k.prefix, "web")

	// A ConfigMap owned by someone's ClusterRole, which stays.
	owner, err := k.typed.RbacV1().ClusterRoles().Create(k.ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: k.prefix + "-theirs"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.typed.RbacV1().ClusterRoles().Delete(context.Background(), owner.Name, metav1.DeleteOptions{})
	})
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Create(k.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "theirs",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: owner.Name, UID: owner.UID}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What the server warns of while the uninstall reads the namespace:
	// nothing (listing Endpoints, deprecated, printed a warning).
	warned := &warnings{}
	cfg := rest.CopyConfig(k.env.Admin)
	cfg.WarningHandler = warned
	c, err := apply.New(cfg, apply.ClientOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	namespaceChange := func() apply.Change {
		t.Helper()
		cs, err := c.Uninstall(k.ctx, a.Name, apply.UninstallOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs.Changes {
			if c.Object == "Namespace/"+k.prefix {
				return c
			}
		}
		t.Fatalf("the uninstall says nothing of the Namespace:\n%s", cs)
		return apply.Change{}
	}
	if ch := namespaceChange(); ch.Action != apply.Skipped || ch.Reason != "kept: it still holds ConfigMap/"+k.prefix+"/theirs" {
		t.Errorf("the Namespace holding a ConfigMap someone's ClusterRole owns: %s %q, want kept for that ConfigMap alone", ch.Action, ch.Reason)
	}
	if err := k.typed.RbacV1().ClusterRoles().Delete(k.ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ch := namespaceChange(); ch.Action != apply.Deleted {
		t.Errorf("the Namespace holding only what its own Deployment and Service made, and garbage: %s %q, want deleted", ch.Action, ch.Reason)
	}
	if w := warned.all(); len(w) > 0 {
		t.Errorf("reading the namespace made the server warn: %q", w)
	}

	ctx, cancel := context.WithCancel(k.ctx)
	defer cancel()
	k.env.FinalizeNamespaces(ctx)
	cs, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if k.exists(t, gvrNamespace, "", k.prefix) {
		t.Errorf("the uninstall left the Namespace:\n%s", cs)
	}
	if k.inventorySecret(t, a.Name) != nil {
		t.Error("the uninstall left its inventory")
	}
}

// warnings records the warnings an API server sends (rest.WarningHandler).
type warnings struct {
	mu   sync.Mutex
	text []string
}

func (w *warnings) HandleWarningHeader(_ int, _, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.text)
}

// An object whose owner is being deleted with its dependents orphaned
// (kubectl delete --cascade=orphan: the owner's "orphan" finalizer)
// outlives it: the garbage collector takes the owner reference off and
// leaves the object. It still keeps the Namespace; before, an owner
// being deleted counted as going whatever its finalizers said.
func TestOrphanedDependentKeepsItsNamespace(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS}\n")
	k.mustApply(t, a, apply.Options{})
	owner, err := k.typed.CoreV1().ConfigMaps(k.prefix).Create(k.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner",
		Finalizers: []string{metav1.FinalizerOrphanDependents}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = k.typed.CoreV1().ConfigMaps(owner.Namespace).Patch(context.Background(), owner.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Create(k.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := k.typed.CoreV1().ConfigMaps(k.prefix).Delete(k.ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	cs, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cs.Changes, func(c apply.Change) bool { return c.Object == "Namespace/"+k.prefix })
	if i < 0 || cs.Changes[i].Action != apply.Skipped || cs.Changes[i].Reason != "kept: it still holds ConfigMap/"+k.prefix+"/kept" {
		t.Errorf("the Namespace holding an object its owner's delete orphans:\n%s\nwant kept for ConfigMap/%s/kept", cs, k.prefix)
	}
}
