package apply_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// takeOverAddon is the workloads (a Deployment web, with a Job) and a
// ConfigMap a.
const takeOverAddon = workloads + `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {v: "1"}
`

// What a hand edit adds inside a keyed list item (an env var of a
// container) or to a set list (a finalizer), the apply removes, as it
// takes over kubectl's fields; the diff says so, though the server's
// dry-run calls both objects unchanged.
func TestDiffTakeOverInsideLists(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", takeOverAddon)
	k.mustApply(t, a, apply.Options{})
	d, err := k.typed.AppsV1().Deployments(k.prefix).Get(k.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Env = append(d.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "HAND", Value: "x"})
	if _, err := k.typed.AppsV1().Deployments(k.prefix).Update(k.ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	cm, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Finalizers = append(cm.Finalizers, "example.com/hand")
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Update(k.ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	cs, err := k.admin.Diff(k.ctx, a, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Deployment/" + k.prefix + "/web": `env[name="HAND"]`,
		"ConfigMap/" + k.prefix + "/a":    "finalizers",
	}
	for _, c := range cs.Changes {
		if w, ok := want[c.Object]; ok && (c.Action != apply.Configured || !strings.Contains(c.Reason, w)) {
			t.Errorf("the diff of %s: %s %q, want configured naming %s", c.Object, c.Action, c.Reason, w)
		}
	}
	k.mustApply(t, a, apply.Options{})
	d, err = k.typed.AppsV1().Deployments(k.prefix).Get(k.ctx, "web", metav1.GetOptions{})
	if err != nil || len(d.Spec.Template.Spec.Containers[0].Env) != 0 {
		t.Errorf("the apply kept the hand-added env var: %v", err)
	}
	if cm, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "a", metav1.GetOptions{}); err != nil || len(cm.Finalizers) != 0 {
		t.Errorf("the apply kept the hand-added finalizer: %v", err)
	}
}
