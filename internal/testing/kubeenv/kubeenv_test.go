package kubeenv_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/internal/testing/child"
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

const helperEnv = "KUBEENV_TEST_HELPER"

func init() {
	// The helper: start a server, print its pids and directory, and die
	// without stopping it, as a test binary that panics would.
	if os.Getenv(helperEnv) == "" {
		return
	}
	env, err := kubeenv.Start(context.Background())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("pids", strings.Trim(fmt.Sprint(env.PIDs()), "[]"))
	fmt.Println("dir", env.Dir)
	os.Exit(1)
}

// Stop leaves no process and no file; a test binary that dies without
// stopping leaves no process either (the parent-death signal), and no
// file (the reaper).
func TestNoLeaks(t *testing.T) {
	kubeenv.Shared(t) // skips (or fails under CI) without the binaries
	env, err := kubeenv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pids := env.PIDs()
	env.Stop()
	for _, pid := range pids {
		if child.Running(pid) {
			t.Errorf("process %d still runs after Stop", pid)
		}
	}
	if _, err := os.Stat(env.Dir); !os.IsNotExist(err) {
		t.Errorf("Stop left %s", env.Dir)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, _ := cmd.Output()
	var dir string
	pids = nil
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 1 && f[0] == "pids":
			for _, s := range f[1:] {
				n, _ := strconv.Atoi(s)
				pids = append(pids, n)
			}
		case len(f) == 2 && f[0] == "dir":
			dir = f[1]
		}
	}
	if len(pids) != 2 || dir == "" {
		t.Fatalf("helper said %q", out)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for child.Running(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if child.Running(pid) {
			t.Errorf("process %d outlived the test binary that started it", pid)
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return
		}
	}
	t.Errorf("the test binary died without stopping its server and left %s", dir)
}
