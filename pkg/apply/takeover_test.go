package apply_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

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

// An object kubectl's client-side apply created holds, as kubectl's,
// the fields the server defaulted (a Deployment's replicas, dnsPolicy,
// strategy). The apply that adopts it drops them as addonpkg's, and the
// server defaults them back to the same values: the diff does not say
// it removes them (nor a container's, inside a keyed list item), only
// what goes (the last-applied annotation, a label kubectl added).
func TestDiffTakeOverKeepsDefaults(t *testing.T) {
	k := newCluster(t)
	const dep = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: 127.0.0.1/web:1}]
`
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", dep)
	byHand := a.Objects[0].DeepCopy()
	byHand.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"})
	byHand.SetLabels(map[string]string{"team": "web"})
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	if _, err := k.dyn.Resource(gvr).Namespace(k.prefix).Create(k.ctx, byHand, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	cs, err := k.admin.Diff(k.ctx, a, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := cs.Changes[0]
	if c.Action != apply.Configured || !strings.Contains(c.Reason, "labels.team") || !strings.Contains(c.Reason, "last-applied-configuration") {
		t.Errorf("the diff: %s %q, want configured, removing the label and the annotation", c.Action, c.Reason)
	}
	for _, defaulted := range []string{"replicas", "dnsPolicy", "revisionHistoryLimit", "strategy", "terminationGracePeriodSeconds", "terminationMessagePath"} {
		if strings.Contains(c.Reason, defaulted) || strings.Contains(c.Diff, "-  "+defaulted) || strings.Contains(c.Diff, "-      "+defaulted) {
			t.Errorf("the diff says the apply removes %s, which the server defaults back:\n%s\n%s", defaulted, c.Reason, c.Diff)
		}
	}
	k.mustApply(t, a, apply.Options{})
	d, err := k.typed.AppsV1().Deployments(k.prefix).Get(k.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Labels["team"] != "" || d.Annotations["kubectl.kubernetes.io/last-applied-configuration"] != "" {
		t.Errorf("after the apply: replicas %v, labels %v, annotations %v", d.Spec.Replicas, d.Labels, d.Annotations)
	}
}

// The server takes at most 10,000 operations in a JSON patch (413
// otherwise): an object kubectl created whose fields the take-over
// removes are more (a ConfigMap of 10,001 keys the add-on no longer
// has) is still diffed, each of them said to be removed, not refused.
func TestDiffTakeOverOfManyFields(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: many, namespace: NS}
data: {kept: "1"}
`)
	byHand := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "many", Namespace: k.prefix}, Data: map[string]string{"kept": "1"}}
	for i := range 10001 {
		byHand.Data[fmt.Sprintf("k%d", i)] = "v"
	}
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Create(k.ctx, byHand, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	cs, err := k.admin.Diff(k.ctx, a, apply.Options{})
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	if c := cs.Changes[0]; c.Action != apply.Configured || !strings.Contains(c.Diff, "-  k10000: v") {
		t.Errorf("the diff: %s %q, want configured, removing k10000", c.Action, c.Reason[:min(len(c.Reason), 200)])
	}
}

// An admission policy (a ValidatingAdmissionPolicy here, a webhook
// alike) may refuse, as Forbidden, the object the take-over leaves: the
// server's answer to the dry-run patch that asks what the apply removes.
// The diff then says what the apply removes (what the policy will refuse
// the apply for), instead of failing whole.
func TestDiffTakeOverRefusedByPolicy(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: k.prefix},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "has(object.metadata.labels) && 'team' in object.metadata.labels",
				Message:    "a ConfigMap names its team",
				Reason:     ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	admission := k.typed.AdmissionregistrationV1()
	if _, err := admission.ValidatingAdmissionPolicies().Create(k.ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admission.ValidatingAdmissionPolicies().Delete(context.Background(), k.prefix, metav1.DeleteOptions{})
	})
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: k.prefix},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        k.prefix,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": k.prefix},
			}},
		},
	}
	if _, err := admission.ValidatingAdmissionPolicyBindings().Create(k.ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admission.ValidatingAdmissionPolicyBindings().Delete(context.Background(), k.prefix, metav1.DeleteOptions{})
	})
	// The policy takes effect once the server has read it.
	unlabelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: k.prefix}}
	for {
		_, err := k.typed.CoreV1().ConfigMaps(k.prefix).Create(k.ctx, unlabelled, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsForbidden(err) {
			break
		}
		if k.ctx.Err() != nil {
			t.Fatalf("the policy never took effect: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	byHand := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: k.prefix, Labels: map[string]string{"team": "web"}}, Data: map[string]string{"v": "1"}}
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Create(k.ctx, byHand, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {v: "1"}
`)
	cs, err := k.admin.Diff(k.ctx, a, apply.Options{})
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	if c := cs.Changes[0]; c.Action != apply.Configured || !strings.Contains(c.Reason, "labels.team") {
		t.Errorf("the diff: %s %q, want configured, removing the label", c.Action, c.Reason)
	}
}
