package capi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/capi"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kubeenv.StopShared()
	os.Exit(code)
}

// crdFile is Cluster API's ClusterResourceSet CRD, of crdVersion (see
// testdata/ATTRIBUTION.md).
const (
	crdFile    = "testdata/addons.cluster.x-k8s.io_clusterresourcesets.yaml"
	crdVersion = "v1.14.2"
)

var (
	gvrCRD       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gvrConfigMap = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrSecret    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	gvrCRS       = schema.GroupVersionResource{Group: "addons.cluster.x-k8s.io", Version: "v1beta2", Resource: "clusterresourcesets"}
)

// The CRD in testdata is the one of the Go types' version: when go.mod
// moves, the CRD moves with it.
func TestCRDMatchesTheTypes(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/cluster-api/api (v\S+)`).FindSubmatch(mod)
	if m == nil || string(m[1]) != crdVersion {
		t.Errorf("go.mod requires sigs.k8s.io/cluster-api/api %s, the CRD in testdata is of %s: copy the CRD of the new version (testdata/ATTRIBUTION.md)", m, crdVersion)
	}
}

// server is the shared API server with Cluster API's CRD installed, and
// a namespace of the test's own.
type server struct {
	dyn *dynamic.DynamicClient
	ctx context.Context
	ns  string
}

func newServer(t *testing.T) *server {
	t.Helper()
	env := kubeenv.Shared(t)
	dyn, err := dynamic.NewForConfig(env.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	s := &server{dyn: dyn, ctx: ctx, ns: strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))}
	s.installCRD(t)
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": s.ns}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Apply(ctx, s.ns, ns, metav1.ApplyOptions{FieldManager: "test"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// installCRD applies the CRD (once per server: a second apply changes
// nothing) and waits until it is Established.
func (s *server) installCRD(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd unstructured.Unstructured
	if err := yaml.Unmarshal(b, &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := s.dyn.Resource(gvrCRD).Apply(s.ctx, crd.GetName(), &crd, metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
		t.Fatalf("install the CRD: %v", err)
	}
	for {
		got, err := s.dyn.Resource(gvrCRD).Get(s.ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
				return
			}
		}
		select {
		case <-s.ctx.Done():
			t.Fatal("the ClusterResourceSet CRD is not Established")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// apply server-side applies each object of a YAML stream, as
// 'kubectl apply --server-side -f -' does, and returns them as applied.
func (s *server) apply(t *testing.T, stream []byte, dryRun bool) ([]*unstructured.Unstructured, error) {
	t.Helper()
	dec := yamlutil.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var out []*unstructured.Unstructured
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			t.Fatal(err)
		}
		gvr := map[string]schema.GroupVersionResource{"ConfigMap": gvrConfigMap, "Secret": gvrSecret, "ClusterResourceSet": gvrCRS}[u.GetKind()]
		if gvr.Resource == "" {
			t.Fatalf("the stream holds a %s", u.GetKind())
		}
		opts := metav1.ApplyOptions{FieldManager: "addonpkg", Force: true}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		got, err := s.dyn.Resource(gvr).Namespace(s.ns).Apply(s.ctx, u.GetName(), &u, opts)
		if err != nil {
			return out, fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		out = append(out, got)
	}
}

func stream(t *testing.T, objs ...runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes()
}

// The stream capi writes is what a real API server with Cluster API's
// CRD accepts, server-side applied: the ClusterResourceSet validates
// against the v1beta2 schema, and ConfigMaps and Secrets filled to the
// limit are stored whole. Applied again it changes nothing.
func TestServerAcceptsTheStream(t *testing.T) {
	s := newServer(t)
	crds := rendered(t, false, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n")
	// 2.5 MiB in documents of at most MaxDataBytes: three ConfigMaps, the
	// first two full to the byte.
	var docs []string
	for _, size := range []int{capi.MaxDataBytes / 2, capi.MaxDataBytes / 2, capi.MaxDataBytes, capi.MaxDataBytes / 2} {
		docs = append(docs, obj("ConfigMap", fmt.Sprintf("c%d", len(docs)), size))
	}
	big := rendered(t, true, docs...)
	secret := rendered(t, false, obj("Secret", "token", capi.MaxDataBytes))
	res := mustBuild(t, []capi.Member{
		{Name: "crds", Pinned: "127.0.0.1:5000/crds@sha256:" + strings.Repeat("a", 64), Identity: "sha256:" + strings.Repeat("b", 64), Result: crds},
		{Name: "big", Result: big},
		{Name: "creds", Result: secret},
	}, capi.Options{Name: "fleet", Namespace: s.ns, ClusterSelector: selector, Strategy: capi.Reconcile})
	var b bytes.Buffer
	if _, err := res.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	applied, err := s.apply(t, b.Bytes(), false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range applied {
		names = append(names, u.GetKind()+" "+u.GetName())
	}
	want := []string{"ConfigMap fleet-crds", "ConfigMap fleet-big", "ConfigMap fleet-big.2", "ConfigMap fleet-big.3", "Secret fleet-creds", "ClusterResourceSet fleet"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("applied %q, want %q", names, want)
	}

	// What the server stored is what capi built.
	crs := applied[len(applied)-1]
	refs, _, _ := unstructured.NestedSlice(crs.Object, "spec", "resources")
	var gotRefs []string
	for _, r := range refs {
		r := r.(map[string]any)
		gotRefs = append(gotRefs, fmt.Sprint(r["kind"], " ", r["name"]))
	}
	if !reflect.DeepEqual(gotRefs, want[:5]) {
		t.Errorf("spec.resources %q, want %q", gotRefs, want[:5])
	}
	if st, _, _ := unstructured.NestedString(crs.Object, "spec", "strategy"); st != "Reconcile" {
		t.Errorf("strategy %q", st)
	}
	if sel, _, _ := unstructured.NestedStringMap(crs.Object, "spec", "clusterSelector", "matchLabels"); !reflect.DeepEqual(sel, selector) {
		t.Errorf("selector %v", sel)
	}
	for i, o := range res.Resources {
		var wantData map[string]string
		switch o := o.(type) {
		case *corev1.ConfigMap:
			wantData = o.Data
		case *corev1.Secret:
			var sec corev1.Secret
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(applied[i].Object, &sec); err != nil {
				t.Fatal(err)
			}
			if sec.Type != "addons.cluster.x-k8s.io/resource-set" || !reflect.DeepEqual(sec.Data, o.Data) {
				t.Errorf("Secret %s stored as type %q, data equal: %v", sec.Name, sec.Type, reflect.DeepEqual(sec.Data, o.Data))
			}
			continue
		}
		got, _, _ := unstructured.NestedStringMap(applied[i].Object, "data")
		if !reflect.DeepEqual(got, wantData) {
			t.Errorf("%s: the server stored other data", applied[i].GetName())
		}
		if ann := applied[i].GetAnnotations(); ann[capi.AnnotationMember] == "" || ann[capi.AnnotationPart] == "" {
			t.Errorf("%s: annotations %v", applied[i].GetName(), ann)
		}
	}

	// Applied again, nothing changes.
	again, err := s.apply(t, b.Bytes(), false)
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range again {
		if u.GetResourceVersion() != applied[i].GetResourceVersion() {
			t.Errorf("%s %s: re-applied, resourceVersion %s -> %s", u.GetKind(), u.GetName(), applied[i].GetResourceVersion(), u.GetResourceVersion())
		}
	}
}

// The limits capi keeps are the server's and the CRD's: one byte more
// data than MaxDataBytes is refused in a ConfigMap and in a Secret, and
// so are a ClusterResourceSet of MaxResources+1 resources, an unknown
// strategy and an empty resource list. So the checks capi makes are the
// real ones, not too strict.
func TestServerLimitsAreCapis(t *testing.T) {
	s := newServer(t)
	over := strings.Repeat("a", capi.MaxDataBytes+1)
	meta := metav1.ObjectMeta{Name: "over", Namespace: s.ns}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta, Data: map[string]string{"a": over[:capi.MaxDataBytes/2], "b": over[capi.MaxDataBytes/2:]}}
	sec := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta, Type: "addons.cluster.x-k8s.io/resource-set", Data: map[string][]byte{"a": []byte(over)}}
	for _, o := range []runtime.Object{cm, sec} {
		_, err := s.apply(t, stream(t, o), true)
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s of MaxDataBytes+1: %v, want it refused as invalid", o.GetObjectKind().GroupVersionKind().Kind, err)
		}
		t.Logf("refused: %v", err)
	}
	cm.Data = map[string]string{"a": over[:capi.MaxDataBytes/2], "b": over[capi.MaxDataBytes/2 : capi.MaxDataBytes]}
	if _, err := s.apply(t, stream(t, cm), true); err != nil {
		t.Errorf("a ConfigMap of MaxDataBytes: %v", err)
	}

	one := rendered(t, false, obj("ConfigMap", "a", 0))
	members := make([]capi.Member, capi.MaxResources)
	for i := range members {
		members[i] = capi.Member{Name: fmt.Sprintf("m%d", i), Result: one}
	}
	res := mustBuild(t, members, capi.Options{Name: "many", Namespace: s.ns, ClusterSelector: selector})
	crs := res.ClusterResourceSet
	if _, err := s.apply(t, stream(t, crs), true); err != nil {
		t.Fatalf("a ClusterResourceSet of MaxResources resources: %v", err)
	}
	for name, change := range map[string]func(*addonsv1.ClusterResourceSet){
		"MaxResources+1 resources": func(c *addonsv1.ClusterResourceSet) {
			c.Spec.Resources = append(c.Spec.Resources, c.Spec.Resources[0])
		},
		"strategy Always": func(c *addonsv1.ClusterResourceSet) { c.Spec.Strategy = "Always" },
		"no resources":    func(c *addonsv1.ClusterResourceSet) { c.Spec.Resources = nil },
	} {
		c := crs.DeepCopy()
		change(c)
		_, err := s.apply(t, stream(t, c), true)
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v, want the CRD's schema to refuse it", name, err)
		}
		t.Logf("%s refused: %v", name, err)
	}
}
