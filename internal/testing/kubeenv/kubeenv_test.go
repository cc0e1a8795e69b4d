package kubeenv_test

import (
	"context"
	"os"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kubeenv.StopShared()
	os.Exit(code)
}

// The admin may do anything; the restricted user is authenticated and
// may do nothing RBAC has not granted.
func TestIdentities(t *testing.T) {
	env := kubeenv.Shared(t)
	ctx := context.Background()
	admin := kubeenv.Clientset(t, env.Admin)
	v, err := admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != kubeenv.KubeVersion {
		t.Errorf("server version %s, want %s", v.GitVersion, kubeenv.KubeVersion)
	}
	if _, err := admin.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("admin list namespaces: %v", err)
	}
	restricted := kubeenv.Clientset(t, env.Restricted)
	if _, err := restricted.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("restricted user listed namespaces")
	}
	// Asking is allowed to every authenticated user.
	r, err := restricted.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Resource: "configmaps", Namespace: "default"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.Allowed {
		t.Error("restricted user may create configmaps")
	}
	for _, p := range []string{env.AdminKubeconfig, env.RestrictedKubeconfig} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}
