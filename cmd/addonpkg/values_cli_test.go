package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

// TestCLIApplyCoreDNSValues: examples/coredns, as it is, is refused
// without its required value (named, with the flag to give it) and
// nothing is created; with --set it installs into kube-system and is
// waited for (the test plays the Deployment controller), the Service
// gets the ClusterIP given and the Corefile the defaulted domain, and the
// inventory records the values.
func TestCLIApplyCoreDNSValues(t *testing.T) {
	env := kubeenv.Shared(t)
	bin := binary(t)
	tmp := t.TempDir()
	cliEnv := []string{"ADDONPKG_HOME=" + filepath.Join(tmp, "store"), "KUBECONFIG=" + env.AdminKubeconfig}
	coredns := "./" + filepath.Join("..", "..", "examples", "coredns")
	typed := kubernetes.NewForConfigOrDie(env.Admin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	out, stderr, code := runKube(t, nil, cliEnv, bin, "apply", coredns)
	if code != 1 || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "missing value: DNS_SERVER_IP") || !strings.Contains(stderr, "--set NAME=VALUE") {
		t.Fatalf("apply without values: exit %d, stdout %q, stderr %q; want exit 1 and one line naming DNS_SERVER_IP and --set", code, out, stderr)
	}
	if _, err := typed.CoreV1().Secrets("kube-system").Get(ctx, apply.InventoryName("coredns"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply wrote an inventory: %v", err)
	}
	if _, err := typed.CoreV1().ServiceAccounts("kube-system").Get(ctx, "coredns", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply created the ServiceAccount: %v", err)
	}

	_, stderr, code = runKube(t, nil, cliEnv, bin, "apply", coredns, "--set", "DNS_SERVR_IP=10.0.0.10")
	if code != 1 || !strings.Contains(stderr, "DNS_SERVR_IP") || !strings.Contains(stderr, "it declares DNS_SERVER_IP") {
		t.Errorf("apply with a misspelt value: exit %d, %q", code, stderr)
	}

	go playDeployment(ctx, typed, "kube-system", "coredns")
	defer runKube(t, nil, cliEnv, bin, "uninstall", "coredns")
	out, stderr, code = runKube(t, nil, cliEnv, bin, "apply", coredns, "--set", "DNS_SERVER_IP=10.0.0.10", "--wait-timeout", "2m", "--json")
	if code != 0 {
		t.Fatalf("apply with values: exit %d: %s", code, stderr)
	}
	var cs apply.ChangeSet
	must(t, json.Unmarshal([]byte(out), &cs))
	if n := cs.Count(apply.Created); n != 6 {
		t.Errorf("created %d objects, want 6:\n%s", n, out)
	}
	svc, err := typed.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != "10.0.0.10" {
		t.Errorf("kube-dns Service: %v, ClusterIP %q; want 10.0.0.10", err, svc.Spec.ClusterIP)
	}
	cm, err := typed.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data["Corefile"], "kubernetes cluster.local in-addr.arpa") {
		t.Errorf("coredns ConfigMap: %v: want the defaulted domain in:\n%s", err, cm.Data["Corefile"])
	}
	out, _, _ = runKube(t, nil, cliEnv, bin, "status", "coredns", "--json")
	var st []apply.Installed
	must(t, json.Unmarshal([]byte(out), &st))
	if len(st) != 1 || st[0].Values["DNS_SERVER_IP"] != "10.0.0.10" || st[0].Values["DNS_DOMAIN"] != "cluster.local" || st[0].Ready != 6 {
		t.Errorf("status = %s, want the values recorded and 6 objects ready", out)
	}
}

// playDeployment does what the Deployment controller would: marks the
// Deployment available once it exists, until ctx ends.
func playDeployment(ctx context.Context, typed kubernetes.Interface, ns, name string) {
	for ctx.Err() == nil {
		if d, err := typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			d.Status = appsv1.DeploymentStatus{
				ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
				Conditions: []appsv1.DeploymentCondition{
					{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
					{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
				},
			}
			if _, err := typed.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err == nil {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}
