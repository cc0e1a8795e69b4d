package kubeenv

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The test cluster runs no controllers (kube-apiserver and etcd only), so
// a test that waits for a workload plays the controller: PlayDeployment
// and PlayJob write the status the Deployment and Job controllers would
// once the object exists. Each returns when it wrote it, or when ctx
// ends; a test runs them in a goroutine beside the apply that waits.

// PlayDeployment marks the Deployment ns/name available, as its
// controller would once its one replica is ready.
func PlayDeployment(ctx context.Context, typed kubernetes.Interface, ns, name string) {
	play(ctx, func() error {
		d, err := typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			},
		}
		_, err = typed.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

// PlayJob marks the Job ns/name complete, as its controller would once
// its pod succeeded.
func PlayJob(ctx context.Context, typed kubernetes.Interface, ns, name string) {
	play(ctx, func() error {
		j, err := typed.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		start := metav1.NewTime(now.Add(-time.Second))
		j.Status = batchv1.JobStatus{
			StartTime: &start, CompletionTime: &now, Succeeded: 1,
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
			},
		}
		_, err = typed.BatchV1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{})
		return err
	})
}

// play tries write every 100 ms until it succeeds or ctx ends.
func play(ctx context.Context, write func() error) {
	for ctx.Err() == nil {
		if write() == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ServeAggregatedAPI plays an aggregated API server (metrics-server's,
// say) for the API server's availability check: a TLS server on
// 127.0.0.1 answering GET /apis/GROUP/VERSION with an empty resource
// list, and 404 to anything else. It returns its port. An APIService
// reaches it through a Service of type ExternalName for "localhost"
// with that port, in the APIService too: the API server refuses a
// loopback address in an EndpointSlice, and dials an ExternalName
// Service's name and the APIService's port.
func ServeAggregatedAPI(t testing.TB) int {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gv, ok := strings.CutPrefix(r.URL.Path, "/apis/")
		if !ok || strings.Count(gv, "/") != 1 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":[]}`, gv)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the API server's dropped connections
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// WriteContexts writes a kubeconfig file named name in dir whose contexts
// are the ones named, all of one unreachable cluster and user: what
// context completion and listing read. It returns the file's path.
func WriteContexts(t testing.TB, dir, name string, contexts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n")
	for _, c := range contexts {
		b.WriteString("- name: " + c + "\n  context: {cluster: c, user: u}\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
