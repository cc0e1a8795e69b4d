package render_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// mergeCM is a kustomization whose generator merges into the ConfigMap
// cm of its resources, which is where kustomize reads the data keys of
// cm with kyaml's SetDataMap.
const mergeCM = "resources:\n- %s\nconfigMapGenerator:\n- name: cm\n  behavior: merge\n  literals:\n  - a=b\n"

// fatalCases are add-on trees on which kustomize v0.21 ends the process
// (log.Fatal) instead of returning an error, and where the render must
// refuse them, naming the file and line.
var fatalCases = map[string]struct {
	files map[string]string
	at    string
}{
	"empty data key merged": {map[string]string{
		"kustomization.yaml": strings.Replace(mergeCM, "%s", "cm.yaml", 1),
		"cm.yaml":            configMap + "data:\n  \"\": x\n",
	}, "cm.yaml:6: "},
	"empty binaryData key merged": {map[string]string{
		"kustomization.yaml": strings.Replace(mergeCM, "%s", "cm.yaml", 1),
		"cm.yaml":            configMap + "binaryData:\n  '': eA==\n",
	}, "cm.yaml:6: "},
	"null data key merged": {map[string]string{
		"kustomization.yaml": strings.Replace(mergeCM, "%s", "cm.yaml", 1),
		"cm.yaml":            configMap + "data:\n  k: v\n  ~: x\n",
	}, "cm.yaml:7: "},
	"mapping as a data key merged": {map[string]string{
		"kustomization.yaml": strings.Replace(mergeCM, "%s", "cm.yaml", 1),
		"cm.yaml":            configMap + "data:\n  ? {a: b}\n  : x\n",
	}, "cm.yaml:6: "},
	"empty key from an inline JSON patch": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  patch: |-\n    - op: add\n      path: /data/\n      value: x\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/kustomization.yaml:6: "},
	"empty key from a JSON patch file": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  path: add.json\n",
		"base/add.json":           `[{"op": "add", "path": "/data", "value": {"": "x"}}]`,
		"base/cm.yaml":            configMap,
	}, "base/add.json:1: "},
	"empty data key in a resource not named .yaml": {map[string]string{
		"kustomization.yaml": strings.Replace(mergeCM, "%s", "cm.txt", 1),
		"cm.txt":             configMap + "data:\n  \"\": x\n",
	}, "cm.txt:6: "},
	// kustomize decodes a kustomization and a builtin configuration as
	// JSON (field names in any case), with merge keys expanded and
	// !!binary scalars decoded: each of these patches went unchecked.
	"empty key from a patch under Patches": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\nPatches:\n- target:\n    kind: ConfigMap\n  patch: |-\n    - op: add\n      path: /data/\n      value: x\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/kustomization.yaml:6: "},
	"empty key from a patch under PATCH": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  PATCH: |-\n    - op: add\n      path: /data/\n      value: x\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/kustomization.yaml:6: "},
	"empty key from a patch through a merge key": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\n<<: {patches: [{target: {kind: ConfigMap}, patch: \"- op: add\\n  path: /data/\\n  value: x\\n\"}]}\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/kustomization.yaml:3: "},
	"empty key from a patch in base64": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  patch: !!binary LSBvcDogYWRkCiAgcGF0aDogL2RhdGEvCiAgdmFsdWU6IHgK\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/kustomization.yaml:6: "},
	"empty key from a PatchTransformer's PATCH": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- t.yaml\n",
		"base/t.yaml":             "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\ntarget:\n  kind: ConfigMap\nPATCH: |-\n  - op: add\n    path: /data/\n    value: x\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/t.yaml:7: "},
	"empty key from a JSON patch file whose op key is in base64": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  path: add.yaml\n",
		"base/add.yaml":           "- ? !!binary b3A=\n  : add\n  path: /data/\n  value: x\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/add.yaml:1: "},
	"empty key from a JSON patch file whose op comes from a merge key": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  path: add.yaml\n",
		"base/add.yaml":           "- &o {op: add, path: /metadata/labels, value: {a: b}}\n- <<: *o\n  path: /data/\n  value: x\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/add.yaml:3: "},
	"empty key from a JSON patch file whose path is in base64": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  path: add.yaml\n",
		"base/add.yaml":           "- op: add\n  path: !!binary L2RhdGEv\n  value: x\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/add.yaml:2: "},
	"empty key from a JSON patch file whose path comes from a merge key": {map[string]string{
		"kustomization.yaml":      strings.Replace(mergeCM, "%s", "base", 1),
		"base/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  path: add.yaml\n",
		"base/add.yaml":           "- op: add\n  <<: {path: /data/}\n  value: x\n",
		"base/cm.yaml":            configMap + "data:\n  k: v\n",
	}, "base/add.yaml:2: "},
	// Two ConfigMaps were named cm; the Pod's reference to cm is
	// ambiguous, and kustomize prints the Pod to say so (MustYaml), which
	// it cannot with an integer key: it exits.
	"integer key in an ambiguous name reference": {map[string]string{
		"kustomization.yaml":   "resources:\n- a\n- b\n- pod.yaml\n",
		"a/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    name: cm\n  patch: '[{\"op\": \"replace\", \"path\": \"/metadata/name\", \"value\": \"x\"}]'\n",
		"b/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- target:\n    name: cm\n  patch: '[{\"op\": \"replace\", \"path\": \"/metadata/name\", \"value\": \"y\"}]'\n",
		"a/cm.yaml":            configMap,
		"b/cm.yaml":            configMap,
		"pod.yaml":             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    ports: x\nspec:\n  x:\n    80: http\n  volumes:\n  - name: v\n    configMap:\n      name: cm\n",
	}, "pod.yaml:9: "},
}

// On each of fatalCases kustomize calls log.Fatal, which exits the
// process, and a library must not let an add-on do that to its caller:
// the render refuses the input first, with an ErrKustomizeFatal that
// names the file and line. Each case runs in a child process, so that a
// regression fails the test instead of ending the test binary.
func TestKustomizeFatalInputRefused(t *testing.T) {
	if name := os.Getenv("ADDONPKG_TEST_FATAL_CASE"); name != "" {
		tc := fatalCases[name]
		_, err := renderTree(t, tc.files)
		if !errors.Is(err, render.ErrKustomizeFatal) || !errors.Is(err, render.ErrInvalid) || !strings.HasPrefix(err.Error(), tc.at) {
			t.Errorf("err = %v, want ErrKustomizeFatal at %s", err, tc.at)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error of more than one line: %q", err)
		}
		return
	}
	for name := range fatalCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKustomizeFatalInputRefused$", "-test.count=1")
			cmd.Env = append(os.Environ(), "ADDONPKG_TEST_FATAL_CASE="+name)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%v (a log.Fatal in kustomize shows as exit status 1 with its message and no test result):\n%s", err, out)
			}
		})
	}
}

// Keys that kustomize takes still render: a YAML merge key, a key
// quoted into a string ("80", "null"), and keys of any type in a file
// that is no object (an application's configuration that a generator
// copies as text).
func TestKustomizeStringKeysRender(t *testing.T) {
	res, err := renderTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: app\n  files:\n  - app.yaml\n",
		"cm.yaml":            configMap + "x: &x\n  k: v\ndata:\n  <<: *x\n  \"80\": http\n  \"null\": x\n",
		"app.yaml":           "200: ok\n~: none\n? [a, b]\n: pair\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.YAML())
	for _, want := range []string{`"80": http`, `"null": x`, "k: v", "200: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("stream lacks %q:\n%s", want, out)
		}
	}
}

// The checks before kustomize runs read untrusted YAML, in files and in
// the patches written in kustomizations: whatever the text, the render
// returns (kustomize does not end the process) and a refusal of a key is
// one line naming the file.
func FuzzKustomizeKeys(f *testing.F) {
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  \"\": x\n", "")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  ? [a]\n  : x\n", "")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n", "- target:\n    kind: ConfigMap\n  patch: |-\n    - op: add\n      path: /data/\n      value: x\n")
	f.Add("[{\"op\": \"add\", \"path\": \"/data\", \"value\": {\"\": 1}}]", "- patch: '{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"cm\"}, \"data\": {1: x}}'\n")
	f.Fuzz(func(t *testing.T, resource, patches string) {
		kust := strings.Replace(mergeCM, "%s", "cm.yaml", 1)
		if patches != "" {
			kust += "patches:\n" + patches
		}
		_, err := renderTree(t, map[string]string{"kustomization.yaml": kust, "cm.yaml": resource})
		if errors.Is(err, render.ErrKustomizeFatal) {
			if s := err.Error(); strings.Contains(s, "\n") || !strings.HasPrefix(s, "cm.yaml:") && !strings.HasPrefix(s, "kustomization.yaml:") {
				t.Errorf("refusal %q: want one line naming cm.yaml or kustomization.yaml", s)
			}
		}
	})
}

// Objects hold JSON patch operations as data, which kustomize never
// applies: a Cluster API ClusterClass's jsonPatches, a Flux
// Kustomization's patchesJson6902, a Kyverno policy's patchesJson6902
// text, a JSON patch whose value adds such an operation, a generator's
// file of operations for some controller. Their paths may name an empty
// key ("/a/", valid data); the check of such paths (fatalCases) is on
// the patches kustomize applies, and these render.
func TestKustomizeJSONPatchDataRenders(t *testing.T) {
	clusterClass := `apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: quick-start
spec:
  controlPlane:
    ref:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      name: quick-start-control-plane
  patches:
  - name: apiServerArgs
    definitions:
    - selector:
        apiVersion: controlplane.cluster.x-k8s.io/v1beta1
        kind: KubeadmControlPlaneTemplate
        matchResources:
          controlPlane: true
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/files/-
        value:
          path: /etc/kubernetes/audit.yaml
          content: x
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/apiServer/extraArgs/
        valueFrom:
          variable: extraArgs
`
	kyverno := `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-label
spec:
  rules:
  - name: add-label
    match:
      any:
      - resources:
          kinds: [Pod]
    mutate:
      patchesJson6902: |-
        - op: add
          path: /metadata/labels/
          value: x
`
	flux := `apiVersion: kustomize.toolkit.fluxcd.io/v1beta1
kind: Kustomization
metadata:
  name: apps
spec:
  path: ./apps
  patchesJson6902:
  - target:
      kind: ConfigMap
      name: cm
    patch:
    - op: add
      path: /data/
      value: x
`
	// A JSON patch kustomize applies, whose value is an operation of the
	// ClusterClass: data, whatever its path. The ClusterClass it patches
	// has no empty segment of its own.
	plainClass := strings.Replace(clusterClass, "extraArgs/\n", "extraArgs\n", 1)
	addOp := "- op: add\n  path: /spec/patches/0/definitions/0/jsonPatches/-\n  value:\n    op: replace\n    path: /spec/template/metadata/labels/\n    value: y\n"
	for name, tc := range map[string]struct {
		kustomization string
		files         map[string]string
		want          string
	}{
		"ClusterClass":          {"resources:\n- cc.yaml\n", map[string]string{"cc.yaml": clusterClass}, "extraArgs/"},
		"Kyverno ClusterPolicy": {"resources:\n- kyverno.yaml\n", map[string]string{"kyverno.yaml": kyverno}, "path: /metadata/labels/"},
		"Flux Kustomization":    {"resources:\n- flux.yaml\n", map[string]string{"flux.yaml": flux}, "path: /data/"},
		"operation in the value of an inline JSON patch": {
			"resources:\n- cc.yaml\npatches:\n- target:\n    kind: ClusterClass\n  patch: |-\n" + indent(addOp, "    "),
			map[string]string{"cc.yaml": plainClass}, "path: /spec/template/metadata/labels/"},
		"operation in the value of a JSON patch file": {
			"resources:\n- cc.yaml\npatches:\n- target:\n    kind: ClusterClass\n  path: add.yaml\n",
			map[string]string{"cc.yaml": plainClass, "add.yaml": addOp}, "path: /spec/template/metadata/labels/"},
		"operations a generator copies": {
			"configMapGenerator:\n- name: ops\n  files:\n  - ops.yaml\n",
			map[string]string{"ops.yaml": "- op: remove\n  path: /data/\n"}, "path: /data/"},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"kustomization.yaml": tc.kustomization}
			maps.Copy(files, tc.files)
			res, err := renderTree(t, files)
			if err != nil {
				t.Fatal(err)
			}
			if out := string(res.YAML()); !strings.Contains(out, tc.want) {
				t.Errorf("stream lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}
