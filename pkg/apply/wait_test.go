package apply_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

const workloads = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: 127.0.0.1/web:1}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: NS}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: 127.0.0.1/migrate:1}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ignored
  namespace: NS
  annotations: {addonpkg.io/wait: disabled}
spec:
  replicas: 1
  selector: {matchLabels: {app: ignored}}
  template:
    metadata: {labels: {app: ignored}}
    spec:
      containers: [{name: c, image: 127.0.0.1/ignored:1}]
`

// playControllers does what the Deployment and Job controllers would:
// marks the named Deployment available and the Job complete, once they
// exist, until ctx ends.
func (k *cluster) playControllers(ctx context.Context, deployment, job string) {
	go kubeenv.PlayDeployment(ctx, k.typed, k.prefix, deployment)
	go kubeenv.PlayJob(ctx, k.typed, k.prefix, job)
}

// Apply waits until the Deployment is available and the Job complete
// (the test plays their controllers), skipping the object that opts out;
// a workload left unready fails at the timeout, named.
func TestWaitForReadiness(t *testing.T) {
	k := newCluster(t)
	ctx, cancel := context.WithCancel(k.ctx)
	defer cancel()
	k.playControllers(ctx, "web", "migrate")
	a := k.addon(t, k.prefix, "1", workloads)
	start := time.Now()
	waiting := map[string][]string{}
	progress := func(st apply.Stage) {
		for _, ch := range st.Changes {
			waiting[st.Name] = append(waiting[st.Name], ch.Object)
		}
	}
	if _, err := k.admin.Apply(k.ctx, a, apply.Options{Wait: true, Timeout: time.Minute, Progress: progress}); err != nil {
		t.Fatalf("apply with wait: %v", err)
	}
	// The waiting and ready stages list the objects waited for, not the
	// one that opts out (they listed every object applied).
	for _, stage := range []string{"waiting", "ready"} {
		if got := waiting[stage]; len(got) != 3 || slices.Contains(got, "Deployment/"+k.prefix+"/ignored") {
			t.Errorf("stage %s lists %v, want the Namespace, the Deployment web and the Job migrate", stage, got)
		}
	}
	st, err := k.admin.Status(k.ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	// The opted-out Deployment is still unready: Status says so.
	if st[0].Ready != 3 || len(st[0].Unready) != 1 || !strings.HasPrefix(st[0].Unready[0], "Deployment/"+k.prefix+"/ignored: ") {
		t.Errorf("status = %+v, want 3 ready and Deployment ignored not", st[0])
	}
	t.Logf("ready in %s", time.Since(start).Round(time.Millisecond))

	// A second Deployment nobody makes available times out, named.
	slow := k.addon(t, k.prefix, "2", workloads+`
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: slow, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: slow}}
  template:
    metadata: {labels: {app: slow}}
    spec:
      containers: [{name: slow, image: 127.0.0.1/slow:1}]
`)
	_, err = k.admin.Apply(k.ctx, slow, apply.Options{Wait: true, Timeout: 3 * time.Second})
	var we *apply.WaitError
	if !errors.Is(err, apply.ErrTimeout) || !errors.As(err, &we) {
		t.Fatalf("apply of an unready workload: %v, want a WaitError timeout", err)
	}
	if len(we.Objects) != 1 || !strings.HasPrefix(we.Objects[0], "Deployment/"+k.prefix+"/slow: InProgress") || strings.Contains(err.Error(), "\n") {
		t.Errorf("timeout error %q: want one line naming only Deployment slow", err)
	}
}

// The caller's deadline ends a wait as Options.Timeout does: a
// WaitError naming what is not ready, matching ErrTimeout and
// context.DeadlineExceeded. A cancelled context is not a timeout: the
// apply stops with context.Canceled alone.
func TestWaitEndsWithTheCallersContext(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: slow, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: slow}}
  template:
    metadata: {labels: {app: slow}}
    spec:
      containers: [{name: slow, image: 127.0.0.1/slow:1}]
`)
	k.mustApply(t, a, apply.Options{})
	ctx, cancel := context.WithTimeout(k.ctx, 2*time.Second)
	defer cancel()
	_, err := k.admin.Apply(ctx, a, apply.Options{Wait: true, Timeout: time.Minute})
	var we *apply.WaitError
	if !errors.As(err, &we) || !errors.Is(err, apply.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("apply past the caller's deadline: %v, want a WaitError that is ErrTimeout and DeadlineExceeded", err)
	}
	if len(we.Objects) != 1 || !strings.HasPrefix(we.Objects[0], "Deployment/"+k.prefix+"/slow: InProgress") {
		t.Errorf("timeout error %q: want it to name Deployment slow", err)
	}

	ctx, cancel = context.WithCancel(k.ctx)
	time.AfterFunc(time.Second, cancel)
	_, err = k.admin.Apply(ctx, a, apply.Options{Wait: true, Timeout: time.Minute})
	if !errors.Is(err, context.Canceled) || errors.As(err, &we) || errors.Is(err, apply.ErrTimeout) {
		t.Errorf("apply cancelled while waiting: %v, want context.Canceled and no WaitError", err)
	}
}

const kubectlApplied = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: by-hand
  namespace: default
data: {v: "by hand"}
`

// An object installed by hand with kubectl (client-side or server-side
// apply) is adopted: its fields move to addonpkg's manager, and it gets
// the owner label.
func TestAdoptKubectlApplied(t *testing.T) {
	k := newCluster(t)
	for _, mode := range []struct {
		name, manager string
		args          []string
	}{
		{"client-side", "kubectl-client-side-apply", []string{"apply", "-f", "-"}},
		{"server-side", "kubectl", []string{"apply", "--server-side", "-f", "-"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			name := k.prefix + "-" + mode.name
			stream := strings.Replace(kubectlApplied, "by-hand", name, 1)
			if out, err := kubectl(t, k.env.AdminKubeconfig, stream, mode.args...); err != nil {
				t.Fatalf("kubectl: %v\n%s", err, out)
			}
			before, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(before.ManagedFields, func(mf metav1.ManagedFieldsEntry) bool { return mf.Manager == mode.manager }) {
				t.Fatalf("kubectl did not manage the ConfigMap as %s: %+v", mode.manager, before.ManagedFields)
			}
			a := k.addon(t, name, "1", strings.Replace(stream, `"by hand"`, `"by addonpkg"`, 1))
			cs := k.mustApply(t, a, apply.Options{})
			if cs.Changes[0].Action != apply.Configured {
				t.Errorf("adoption: %s", cs)
			}
			cm, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range cm.ManagedFields {
				if strings.HasPrefix(mf.Manager, "kubectl") {
					t.Errorf("after adoption %s still manages fields (%s)", mf.Manager, mf.Operation)
				}
			}
			if cm.Data["v"] != "by addonpkg" || cm.Labels[apply.LabelAddon] != name {
				t.Errorf("adopted ConfigMap: data %v labels %v", cm.Data, cm.Labels)
			}
			// Adopted once: the next apply changes nothing.
			if cs := k.mustApply(t, a, apply.Options{}); cs.Changed() {
				t.Errorf("re-apply after adoption:\n%s", cs)
			}
		})
	}
}

// TestUninstallNamesFinalizers: an object held by a finalizer that no
// controller removes makes the uninstall time out naming the object and
// its finalizers, not only the object.
func TestUninstallNamesFinalizers(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-held, namespace: default, finalizers: [example.com/never]}
`)
	k.mustApply(t, a, apply.Options{})
	t.Cleanup(func() {
		_, _ = k.typed.CoreV1().ConfigMaps("default").Patch(context.Background(), k.prefix+"-held", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	_, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 2 * time.Second})
	if !errors.Is(err, apply.ErrTimeout) {
		t.Fatalf("uninstall = %v, want ErrTimeout", err)
	}
	oneLine(t, err, "ConfigMap/default/"+k.prefix+"-held", "held by finalizers example.com/never")
	// The same, as a caller reads it: the object is still Terminating,
	// and what holds it is the message.
	var we *apply.WaitError
	want := apply.ObjectStatus{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: k.prefix + "-held", Status: apply.Terminating,
		Message: "held by finalizers example.com/never, which no controller removed"}
	if !errors.As(err, &we) || we.Op != "deletion" || len(we.Statuses) != 1 || we.Statuses[0] != want || len(we.Objects) != 1 {
		t.Errorf("uninstall = %v, want a deletion WaitError whose one status is %#v", err, want)
	}
}

// A Namespace that outlives its deletion is held by its spec.finalizers,
// which only the namespace controller removes (the API server alone, as
// here, never does); what the controller reported is passed on, one
// line, escapes removed.
func TestHeldByNamesNamespaceFinalizer(t *testing.T) {
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "monitoring"},
		"spec":     map[string]any{"finalizers": []any{"kubernetes"}},
		"status": map[string]any{"phase": "Terminating", "conditions": []any{
			map[string]any{"type": "NamespaceDeletionDiscoveryFailure", "status": "False", "message": "All resources successfully discovered"},
			map[string]any{"type": "NamespaceFinalizersRemaining", "status": "True", "message": "Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances\n\x1b[2J"},
		}},
	}}
	want := "held by its spec.finalizers kubernetes, which the namespace controller (kube-controller-manager) removes once the namespace is empty; it reports: Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances"
	if got := apply.HeldBy(ns, ""); !strings.HasPrefix(got, want) || strings.ContainsAny(got, "\n\x1b") {
		t.Errorf("HeldBy(namespace) = %q, want %q, one line", got, want)
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "finalizers": []any{"example.com/x"}}}}
	if got := apply.HeldBy(cm, ""); got != "held by finalizers example.com/x, which no controller removed" {
		t.Errorf("HeldBy(configmap) = %q", got)
	}
	cm.SetFinalizers(nil)
	if got := apply.HeldBy(cm, ""); got != "" {
		t.Errorf("HeldBy(configmap without finalizers) = %q, want nothing", got)
	}
}

// A CRD being deleted is held by the finalizer the API server itself
// removes once its custom resources are gone, not by one "no controller
// removed": what is awaited is those custom resources, named when known,
// else what the CRD's Terminating condition reports. Another finalizer
// on it is named apart.
func TestHeldByNamesCRDCustomResources(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com", "finalizers": []any{"customresourcecleanup.apiextensions.k8s.io"}},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Established", "status": "True", "message": "the initial names have been accepted"},
			map[string]any{"type": "Terminating", "status": "True", "message": "CustomResource deletion is in progress\n\x1b[2J"},
		}},
	}}
	const cleanup = "held by finalizer customresourcecleanup.apiextensions.k8s.io, which the API server removes once the CRD's custom resources are gone"
	for _, tc := range []struct{ left, want string }{
		{"Widget/default/held (held by finalizers example.com/x) and 2 more", cleanup + "; still there: Widget/default/held (held by finalizers example.com/x) and 2 more"},
		{"", cleanup + "; it reports: CustomResource deletion is in progress"},
	} {
		if got := apply.HeldBy(crd, tc.left); !strings.HasPrefix(got, tc.want) || strings.ContainsAny(got, "\n\x1b") || strings.Contains(got, "no controller") {
			t.Errorf("HeldBy(crd, %q) = %q, want %q, one line", tc.left, got, tc.want)
		}
	}
	crd.SetFinalizers([]string{"customresourcecleanup.apiextensions.k8s.io", "example.com/y"})
	if got, want := apply.HeldBy(crd, "Widget/w"), cleanup+"; still there: Widget/w; held by finalizers example.com/y, which no controller removed"; got != want {
		t.Errorf("HeldBy(crd with another finalizer) = %q, want %q", got, want)
	}
}

// With NoWait, as kubectl delete --wait=false, an uninstall returns once
// the deletions are asked for: an object a finalizer holds is left
// Terminating, the server's to finish, and the inventory is gone; no
// "deleting" stage announces a wait that does not come. It waited the
// whole timeout, and failed.
func TestUninstallNoWait(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-held, namespace: default, finalizers: [example.com/never]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-free, namespace: default}
`)
	k.mustApply(t, a, apply.Options{})
	t.Cleanup(func() {
		_, _ = k.typed.CoreV1().ConfigMaps("default").Patch(context.Background(), k.prefix+"-held", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	var stages []apply.Stage
	start := time.Now()
	cs, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{NoWait: true, Timeout: time.Minute,
		Progress: func(st apply.Stage) { stages = append(stages, st) }})
	if err != nil {
		t.Fatalf("uninstall without waiting: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("uninstall without waiting took %s", d)
	}
	if n := cs.Count(apply.Deleted); n != 2 {
		t.Errorf("deleted %d, want 2:\n%s", n, cs)
	}
	if len(stages) != 0 {
		t.Errorf("progress %+v, want no stage: there is no wait", stages)
	}
	held, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix+"-held", metav1.GetOptions{})
	if err != nil || held.DeletionTimestamp == nil {
		t.Errorf("the held ConfigMap: %v, want it terminating", err)
	}
	if k.inventory(t, a.Name) != nil {
		t.Error("uninstall without waiting left the inventory")
	}
}

// An uninstall waits for the objects it deleted by uid, as kubectl wait
// --for=delete does, not by name: one someone makes again under the
// same name while the deleted one terminates is another object, which
// the uninstall neither waits for nor names. It waited for the new one
// to go until the timeout, and reported it as still being deleted.
func TestUninstallWaitsByUID(t *testing.T) {
	k := newCluster(t)
	name := k.prefix + "-held"
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-held, namespace: default, finalizers: [example.com/test]}
`)
	k.mustApply(t, a, apply.Options{})
	cms := k.typed.CoreV1().ConfigMaps("default")
	t.Cleanup(func() { _ = cms.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	// Once the deletion is asked for, the finalizer comes off and the
	// ConfigMap goes; someone makes one of its name, of their own.
	recreate := func(st apply.Stage) {
		if st.Name != "deleting" {
			return
		}
		if _, err := cms.Patch(k.ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("remove the finalizer: %v", err)
		}
		for {
			_, err := cms.Get(k.ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if err != nil {
				t.Errorf("read the ConfigMap: %v", err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"v": "someone else's"}}
		if _, err := cms.Create(k.ctx, mine, metav1.CreateOptions{}); err != nil {
			t.Errorf("make another ConfigMap of its name: %v", err)
		}
	}
	start := time.Now()
	cs, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 10 * time.Second, Progress: recreate})
	if err != nil {
		t.Fatalf("uninstall = %v, want it done once the deleted ConfigMap is gone", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("uninstall took %s: it waited for the new ConfigMap", d)
	}
	if n := cs.Count(apply.Deleted); n != 1 {
		t.Errorf("deleted %d, want 1:\n%s", n, cs)
	}
	if cm, err := cms.Get(k.ctx, name, metav1.GetOptions{}); err != nil || cm.Data["v"] != "someone else's" {
		t.Errorf("the new ConfigMap: %v %v, want it left alone", cm, err)
	}
	if k.inventory(t, a.Name) != nil {
		t.Error("the uninstall left the inventory")
	}
}
