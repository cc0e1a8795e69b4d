package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// The commands that read one add-on to show or install it share their
// SOURCE flags (sourceFlags): an installer's --verify-key guards apply
// and diff --cluster as it guards unpack. An add-on signed by another
// key is refused before anything reaches the cluster; signed by the
// key, it installs.
func TestCLISourceFlagsVerifyBeforeApply(t *testing.T) {
	t.Parallel()
	cc := newClusterCLI(t)

	tree := filepath.Join(cc.tmp, "signed-cm")
	must(t, os.MkdirAll(tree, 0o755))
	cliWriteFile(t, filepath.Join(tree, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: signed-cm\n  namespace: default\ndata:\n  k: v\n")
	src := "oci:" + filepath.Join(cc.tmp, "layout") + ":1"
	if _, stderr, code := cc.run(t, "build", tree, "--name", "signed-cm", "--output", src); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	key, pub := cliKeys(t, "a")
	_, otherPub := cliKeys(t, "b")
	if _, stderr, code := cc.run(t, "sign", "--key", key, src); code != 0 {
		t.Fatalf("sign: exit %d: %s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)

	for _, args := range [][]string{
		{"apply", src, "--verify-key", otherPub},
		{"diff", "--cluster", src, "--verify-key", otherPub},
		{"inspect", src, "--verify-key", otherPub},
	} {
		out, stderr, code := cc.run(t, args...)
		if code == 0 || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "signature") {
			t.Errorf("%s with another key: exit %d, stdout %q, stderr %q; want a one-line refusal naming the signature", args[0], code, out, stderr)
		}
	}
	if _, err := typed.CoreV1().Secrets("kube-system").Get(ctx, apply.InventoryName("signed-cm"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply wrote an inventory: %v", err)
	}
	if _, err := typed.CoreV1().ConfigMaps("default").Get(ctx, "signed-cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply created the ConfigMap: %v", err)
	}

	defer cc.run(t, "uninstall", "signed-cm")
	if _, stderr, code := cc.run(t, "apply", src, "--verify-key", pub); code != 0 {
		t.Fatalf("apply with the signing key: exit %d: %s", code, stderr)
	}
	if _, err := typed.CoreV1().ConfigMaps("default").Get(ctx, "signed-cm", metav1.GetOptions{}); err != nil {
		t.Errorf("the verified apply did not create the ConfigMap: %v", err)
	}

	// A set's members are checked too, each before anything of it is
	// applied (the same ConfigMap, under the set member's name).
	if _, stderr, code := cc.run(t, "uninstall", "signed-cm"); code != 0 {
		t.Fatalf("uninstall: exit %d: %s", code, stderr)
	}
	decl := filepath.Join(cc.tmp, "addons.yaml")
	must(t, os.WriteFile(decl, []byte("apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n  - name: signed-set-cm\n    source: "+src+"\n"), 0o644))
	if _, stderr, code := cc.run(t, "lock", "-f", decl); code != 0 {
		t.Fatalf("lock: exit %d: %s", code, stderr)
	}
	if out, stderr, code := cc.run(t, "apply", "-f", decl, "--verify-key", otherPub); code == 0 || out != "" || !strings.Contains(stderr, "signature") {
		t.Errorf("apply -f with another key: exit %d, stdout %q, stderr %q; want a refusal naming the signature", code, out, stderr)
	}
	if _, err := typed.CoreV1().Secrets("kube-system").Get(ctx, apply.InventoryName("signed-set-cm"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply -f wrote an inventory: %v", err)
	}
	defer cc.run(t, "uninstall", "signed-set-cm")
	if _, stderr, code := cc.run(t, "apply", "-f", decl, "--verify-key", pub); code != 0 {
		t.Errorf("apply -f with the signing key: exit %d: %s", code, stderr)
	}

	// -f installs what the lock pins: a platform would be ignored, so it
	// is refused.
	if _, stderr, code := cc.run(t, "apply", "-f", decl, "--platform", "linux/arm64"); code == 0 || !strings.Contains(stderr, "--platform") {
		t.Errorf("apply -f --platform: exit %d, %q; want a usage error naming --platform", code, stderr)
	}
}
