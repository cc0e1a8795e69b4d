package apply_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// The helper process: the test binary run again with these variables
// applies KILL_ADDON's v2 and SIGKILLs itself after the named stage.
const (
	helperEnv       = "APPLY_TEST_HELPER_STAGE"
	helperConfigEnv = "APPLY_TEST_HELPER_KUBECONFIG"
	helperPrefixEnv = "APPLY_TEST_HELPER_PREFIX"
)

const killV1 = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {v: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: NS}
data: {v: "1"}
`

const killV2 = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {v: "2"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: NS}
data: {v: "2"}
`

func runHelper() int {
	stage, prefix := os.Getenv(helperEnv), os.Getenv(helperPrefixEnv)
	ctx := context.Background()
	c, err := apply.Connect(ctx, apply.ConnectOptions{Kubeconfig: os.Getenv(helperConfigEnv)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	objs, err := apply.DecodeObjects([]byte(strings.ReplaceAll(killV2, "NS", prefix)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	apply.SetTestHook(func(s string) {
		if s == stage {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	})
	_, err = c.Apply(ctx, apply.Addon{Name: prefix, Version: "2", Objects: objs}, apply.Options{})
	fmt.Fprintln(os.Stderr, "helper: apply returned:", err)
	return 3
}

// killedApply runs v2's apply in a process that is SIGKILLed after stage.
func (k *cluster) killedApply(t *testing.T, stage string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+stage, helperConfigEnv+"="+k.env.AdminKubeconfig, helperPrefixEnv+"="+k.prefix)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper was not killed after stage %s: %v\n%s", stage, err, out)
	}
}

// An apply killed half-way leaves a pending inventory listing the old
// objects and the new; the next apply finishes it, or prunes its
// leftovers.
func TestKilledApplyIsFinishedByTheNext(t *testing.T) {
	k := newCluster(t)
	v1 := k.addon(t, k.prefix, "1", killV1)
	v2 := k.addon(t, k.prefix, "2", killV2)
	k.mustApply(t, v1, apply.Options{})

	// Killed after c was applied and before b was pruned.
	k.killedApply(t, "resources")
	inv := k.inventory(t, k.prefix)
	if inv.Phase != apply.PhasePending {
		t.Fatalf("after the kill the inventory is %s, want pending", inv.Phase)
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "b") || !k.exists(t, gvrConfigMap, k.prefix, "c") {
		t.Fatal("the killed apply did not get as far as the test needs (b and c both present)")
	}
	want := []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_b__ConfigMap", k.prefix + "_c__ConfigMap"}
	if got := ids(inv); !slices.Equal(got, want) {
		t.Errorf("pending inventory = %v, want old and new: %v", got, want)
	}

	// Rolling back to v1 prunes what the killed v2 left behind.
	cs := k.mustApply(t, v1, apply.Options{})
	if k.exists(t, gvrConfigMap, k.prefix, "c") {
		t.Errorf("v1 after a killed v2 left ConfigMap c:\n%s", cs)
	}
	if inv := k.inventory(t, k.prefix); inv.Phase != apply.PhaseApplied || slices.Contains(ids(inv), k.prefix+"_c__ConfigMap") {
		t.Errorf("inventory after v1 = %+v", inv)
	}

	// Killed before anything: the pending record was written, and the
	// next v2 finishes the job, pruning b.
	k.killedApply(t, "pending")
	cs = k.mustApply(t, v2, apply.Options{})
	if k.exists(t, gvrConfigMap, k.prefix, "b") || !k.exists(t, gvrConfigMap, k.prefix, "c") {
		t.Errorf("v2 after a killed v2: want b pruned and c present:\n%s", cs)
	}
	inv = k.inventory(t, k.prefix)
	want = []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_c__ConfigMap"}
	if got := ids(inv); inv.Phase != apply.PhaseApplied || !slices.Equal(got, want) {
		t.Errorf("inventory = %s %v, want applied %v", inv.Phase, got, want)
	}
}
