package kubeenv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
)

// A webhook behind a Service (an address in the service range, which
// nothing routes here) is called through the egress proxy, which refuses
// it at once: the API server's calls into the cluster never leave the
// machine by its default route.
func TestClusterEgressStaysOnLoopback(t *testing.T) {
	env := kubeenv.Shared(t)
	ctx := context.Background()
	admin := kubeenv.Clientset(t, env.Admin)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "egress", Labels: map[string]string{"egress-test": "yes"}}}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: "egress"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}
	if _, err := admin.CoreV1().Services("egress").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "egress-test"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "egress.kubeenv.test",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "egress", Name: "hook"}},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"egress-test": "yes"}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, hook, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), "egress-test", metav1.DeleteOptions{})
	})
	// The API server learns of a new webhook through its informer: a
	// create right after the configuration may not call it yet (it did
	// not, under load), so one that succeeds is taken back and tried
	// again, until the webhook is called.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "egress"}}
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err = admin.CoreV1().ConfigMaps("egress").Create(ctx, cm, metav1.CreateOptions{}); err != nil || time.Now().After(deadline) {
			break
		}
		if err := admin.CoreV1().ConfigMaps("egress").Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err == nil || !strings.Contains(err.Error(), "egress.sock") || !strings.Contains(err.Error(), "403") {
		t.Fatalf("a ConfigMap behind a webhook at a ClusterIP: %v, want the egress proxy's refusal (403)", err)
	}
	t.Log(err)
}
