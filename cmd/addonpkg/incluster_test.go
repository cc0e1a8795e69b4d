package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// inClusterDir holds the in-cluster installer example.
var inClusterDir = filepath.Join("..", "..", "examples", "in-cluster")

type inClusterObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	RoleRef struct {
		Kind string `yaml:"kind"`
		Name string `yaml:"name"`
	} `yaml:"roleRef"`
	Subjects []struct {
		Kind      string `yaml:"kind"`
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"subjects"`
	Spec struct {
		Template struct {
			Spec struct {
				ServiceAccountName string `yaml:"serviceAccountName"`
				SecurityContext    struct {
					RunAsNonRoot bool  `yaml:"runAsNonRoot"`
					RunAsUser    int64 `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				InitContainers []inClusterContainer `yaml:"initContainers"`
				Containers     []inClusterContainer `yaml:"containers"`
				Volumes        []struct {
					Name      string `yaml:"name"`
					ConfigMap struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type inClusterContainer struct {
	Name         string   `yaml:"name"`
	Image        string   `yaml:"image"`
	Command      []string `yaml:"command"`
	Args         []string `yaml:"args"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// The in-cluster example passes addonpkg's own manifest validation (a
// build validates every object), and its parts fit: the Job runs as the
// ServiceAccount the ClusterRoleBinding names, as the image's non-root
// user; the init container unpacks (addonpkg has no shell: no command,
// only args) into the volume the kubectl container applies from.
func TestInClusterExample(t *testing.T) {
	cliNewHome(t)
	cliMust(t, "build", inClusterDir, "--name", "in-cluster", "-t", "in-cluster:check")

	var objs []inClusterObject
	for _, f := range []string{"rbac.yaml", "job.yaml"} {
		b, err := os.ReadFile(filepath.Join(inClusterDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var o inClusterObject
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			objs = append(objs, o)
		}
	}
	byKind := map[string]inClusterObject{}
	for _, o := range objs {
		byKind[o.Kind] = o
	}
	job, sa, crb, cr := byKind["Job"], byKind["ServiceAccount"], byKind["ClusterRoleBinding"], byKind["ClusterRole"]
	pod := job.Spec.Template.Spec
	if pod.ServiceAccountName == "" || pod.ServiceAccountName != sa.Metadata.Name || job.Metadata.Namespace != sa.Metadata.Namespace {
		t.Errorf("the Job runs as %s/%s; the ServiceAccount is %s/%s", job.Metadata.Namespace, pod.ServiceAccountName, sa.Metadata.Namespace, sa.Metadata.Name)
	}
	if len(crb.Subjects) != 1 || crb.Subjects[0].Name != sa.Metadata.Name || crb.Subjects[0].Namespace != sa.Metadata.Namespace || crb.RoleRef.Name != cr.Metadata.Name {
		t.Errorf("the ClusterRoleBinding does not bind the ServiceAccount to the ClusterRole: %+v", crb)
	}
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser != 65532 {
		t.Errorf("the pod does not run as the image's non-root user 65532: %+v", pod.SecurityContext)
	}
	if len(pod.InitContainers) != 0 || len(pod.Containers) != 1 {
		t.Fatalf("want one container, addonpkg's own: %+v", pod)
	}
	apply := pod.Containers[0]
	if len(apply.Command) != 0 || len(apply.Args) < 2 || apply.Args[0] != "apply" {
		t.Fatalf("the container does not run 'addonpkg apply': command %q args %q", apply.Command, apply.Args)
	}
	// The arguments are what the CLI accepts.
	root := newRootCmd(strings.NewReader(""), nil, nil)
	c, rest, err := root.Find(apply.Args)
	if err != nil || c.Name() != "apply" {
		t.Fatalf("args %q: %v", apply.Args, err)
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Fatalf("args %q: %v", apply.Args, err)
	}
	if err := c.ValidateArgs(c.Flags().Args()); err != nil {
		t.Fatalf("args %q: %v", apply.Args, err)
	}
	for _, m := range apply.VolumeMounts {
		found := false
		for _, v := range pod.Volumes {
			found = found || v.Name == m.Name
		}
		if !found {
			t.Errorf("volume %q is mounted but not defined", m.Name)
		}
	}
	// It installs only what the key in the README's ConfigMap signed.
	keys, err := c.Flags().GetStringArray("verify-key")
	if err != nil || len(keys) != 1 {
		t.Fatalf("the Job verifies with %q (%v); want one --verify-key", keys, err)
	}
	mounted := false
	for _, m := range apply.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap.Name == "addon-signing-keys" && keys[0] == m.MountPath+"/cosign.pub" {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("--verify-key %s is not cosign.pub of the ConfigMap addon-signing-keys mounted in the container", keys[0])
	}
}
