package capi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"

	"github.com/addonpkg/addonpkg/pkg/capi"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// rendered renders one file of documents, as a set member's tree.
func rendered(t *testing.T, dropText bool, docs ...string) *render.Result {
	t.Helper()
	tree := fstest.MapFS{"all.yaml": {Data: []byte(strings.Join(docs, "---\n"))}}
	res, err := render.Render(context.Background(), tree, render.Options{DropText: dropText})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// obj is a document of the kind; with size > 0 it is exactly size bytes,
// padded in a data field.
func obj(kind, name string, size int) string {
	head := fmt.Sprintf("apiVersion: v1\nkind: %s\nmetadata:\n  name: %s\n  namespace: app\n", kind, name)
	if size == 0 {
		return head
	}
	head += "data:\n  x: "
	return head + strings.Repeat("a", size-len(head)-1) + "\n"
}

var selector = map[string]string{"cluster.x-k8s.io/cluster-name": "one", "env": "prod"}

func mustBuild(t *testing.T, members []capi.Member, opts capi.Options) *capi.Result {
	t.Helper()
	res, err := capi.ClusterResourceSet(members, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// data is a resource's name, kind and data, whatever its kind.
func data(t *testing.T, o any) (name, kind string, d map[string]string, meta map[string]string) {
	t.Helper()
	switch o := o.(type) {
	case *corev1.ConfigMap:
		return o.Name, "ConfigMap", o.Data, o.Annotations
	case *corev1.Secret:
		if o.Type != addonsv1.ClusterResourceSetSecretType {
			t.Errorf("Secret %s has type %q", o.Name, o.Type)
		}
		d := map[string]string{}
		for k, v := range o.Data {
			d[k] = string(v)
		}
		return o.Name, "Secret", d, o.Annotations
	}
	t.Fatalf("resource of type %T", o)
	return
}

// capiStream is what Cluster API's controller applies from a resource
// (core/reconcilers/clusterresourceset, v1.14.2: normalizeData and
// objsFromYamlData): the values in key order, the objects of one value
// sorted by kind. With one object per key that sort has nothing to do,
// so the stream is the values in key order. It also checks the
// controller's first read of a value: a peek of 32 bytes, which fails on
// anything shorter.
func capiStream(t *testing.T, d map[string]string) []string {
	t.Helper()
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if len(d[k]) < 32 {
			t.Errorf("key %s holds %d bytes: Cluster API's peek of 32 fails on it", k, len(d[k]))
		}
		out = append(out, d[k])
	}
	return out
}

// texts are the rendered documents' texts, in render's order.
func texts(t *testing.T, r *render.Result) []string {
	t.Helper()
	var out []string
	for _, d := range r.Documents {
		b, err := r.Text(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// Members keep the order given (the set's dependsOn order), each in one
// resource named NAME-MEMBER, listed in the same order; a member with a
// Secret goes into a Secret; each document is a key, in render's order
// (which Cluster API keeps), and the pins are annotations.
func TestOrderNamesAndKinds(t *testing.T) {
	crds := rendered(t, false, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n")
	// Written out of apply order: render puts the Namespace first.
	app := rendered(t, true, obj("ServiceAccount", "app", 0), obj("ConfigMap", "conf", 0), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n")
	creds := rendered(t, false, obj("Secret", "token", 0), obj("ConfigMap", "ca", 0))
	empty := &render.Result{}
	members := []capi.Member{
		{Name: "crds", Pinned: "reg.example/crds@sha256:aa", Identity: "sha256:bb", Digest: "sha256:aa", Version: "1.0.0", Result: crds},
		{Name: "nothing", Result: empty},
		{Name: "app", Pinned: "./app", Identity: "sha256:cc", Result: app},
		{Name: "creds", Pinned: "oci:creds@sha256:dd", Result: creds},
	}
	res := mustBuild(t, members, capi.Options{Name: "fleet", Namespace: "clusters", ClusterSelector: selector})

	var got []string
	for _, r := range res.Resources {
		name, kind, _, _ := data(t, r)
		got = append(got, kind+" "+name)
	}
	want := []string{"ConfigMap fleet-crds", "ConfigMap fleet-app", "Secret fleet-creds"}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("resources: %q, want %q", got, want)
	}
	var refs []string
	for _, r := range res.ClusterResourceSet.Spec.Resources {
		refs = append(refs, r.Kind+" "+r.Name)
	}
	if !reflect.DeepEqual(want, refs) {
		t.Errorf("ClusterResourceSet resources: %q, want %q", refs, want)
	}
	crs := res.ClusterResourceSet
	if crs.Name != "fleet" || crs.Namespace != "clusters" || crs.Spec.Strategy != "ApplyOnce" || crs.APIVersion != "addons.cluster.x-k8s.io/v1beta2" || crs.Kind != "ClusterResourceSet" {
		t.Errorf("ClusterResourceSet %s/%s %s %s, strategy %q", crs.Namespace, crs.Name, crs.APIVersion, crs.Kind, crs.Spec.Strategy)
	}
	if !reflect.DeepEqual(selector, crs.Spec.ClusterSelector.MatchLabels) || len(crs.Spec.ClusterSelector.MatchExpressions) != 0 {
		t.Errorf("selector: %v, want %v", crs.Spec.ClusterSelector.MatchLabels, selector)
	}
	if objs := res.Objects(); len(objs) != 4 || objs[3] != crs {
		t.Errorf("Objects: %d, the ClusterResourceSet last: %v", len(objs), objs[len(objs)-1] == crs)
	}

	for i, m := range []capi.Member{members[0], members[2], members[3]} {
		name, _, d, ann := data(t, res.Resources[i])
		if !reflect.DeepEqual(texts(t, m.Result), capiStream(t, d)) {
			t.Errorf("%s: the stream Cluster API applies: %q, want render's %q", name, capiStream(t, d), texts(t, m.Result))
		}
		if ann[capi.AnnotationMember] != m.Name || ann[capi.AnnotationPart] != "1/1" {
			t.Errorf("%s: annotations %v", name, ann)
		}
	}
	if got := capiStream(t, res.Resources[1].(*corev1.ConfigMap).Data); !strings.Contains(got[0], "kind: Namespace") {
		t.Errorf("app's first key is %q, not render's first document (the Namespace)", got[0])
	}
	cm := res.Resources[0].(*corev1.ConfigMap)
	wantAnn := map[string]string{
		capi.AnnotationMember: "crds", capi.AnnotationPart: "1/1", capi.AnnotationPinned: "reg.example/crds@sha256:aa",
		capi.AnnotationIdentity: "sha256:bb", capi.AnnotationDigest: "sha256:aa", capi.AnnotationVersion: "1.0.0",
	}
	if !reflect.DeepEqual(wantAnn, cm.Annotations) {
		t.Errorf("annotations: %q, want %q", cm.Annotations, wantAnn)
	}
	if !reflect.DeepEqual(map[string]string{capi.LabelClusterResourceSet: "fleet"}, cm.Labels) {
		t.Errorf("labels: %q, want %q", cm.Labels, map[string]string{capi.LabelClusterResourceSet: "fleet"})
	}
	if _, ok := res.Resources[1].(*corev1.ConfigMap).Annotations[capi.AnnotationDigest]; ok {
		t.Error("app has no digest, yet its ConfigMap has the annotation")
	}

	// The same input gives the same bytes.
	var a, b bytes.Buffer
	if _, err := res.WriteTo(&a); err != nil {
		t.Fatal(err)
	}
	if _, err := mustBuild(t, members, capi.Options{Name: "fleet", Namespace: "clusters", ClusterSelector: selector}).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two builds of the same set wrote different streams")
	}
	if strings.Contains(a.String(), "creationTimestamp") || strings.Contains(a.String(), "status:") {
		t.Errorf("the stream holds fields nobody set:\n%s", a.String())
	}
}

// A member larger than the limit is split at document boundaries into
// NAME-MEMBER, NAME-MEMBER.2, ..., each within the limit, its keys
// numbered across the parts; read in order the parts are the stream.
func TestSplit(t *testing.T) {
	const limit = 1000
	var docs []string
	for i, size := range []int{400, 400, 300, 1000, 100, 100} {
		docs = append(docs, obj("ConfigMap", fmt.Sprintf("c%d", i), size))
	}
	r := rendered(t, false, docs...)
	res := mustBuild(t, []capi.Member{{Name: "big", Result: r}, {Name: "big-2", Result: rendered(t, false, obj("ConfigMap", "x", 0))}},
		capi.Options{Name: "s", ClusterSelector: selector, MaxDataBytes: limit, Strategy: capi.Reconcile})

	type part struct {
		Name string
		Keys []string
		Part string
	}
	var got []part
	var stream []string
	for _, o := range res.Resources {
		name, _, d, ann := data(t, o)
		size := 0
		for _, v := range d {
			size += len(v)
		}
		if size > limit {
			t.Errorf("%s holds %d bytes, over %d", name, size, limit)
		}
		p := part{Name: name, Part: ann[capi.AnnotationPart]}
		for k := range d {
			p.Keys = append(p.Keys, k)
		}
		sort.Strings(p.Keys)
		got = append(got, p)
		if ann[capi.AnnotationMember] == "big" {
			stream = append(stream, capiStream(t, d)...)
		}
	}
	// 400+400 fit; 300 would overflow, so it starts a part; 1000 fills
	// one alone; 100+100 share the last. The member named big-2 is
	// s-big-2, which no part of big is.
	want := []part{
		{"s-big", []string{"0001.yaml", "0002.yaml"}, "1/4"},
		{"s-big.2", []string{"0003.yaml"}, "2/4"},
		{"s-big.3", []string{"0004.yaml"}, "3/4"},
		{"s-big.4", []string{"0005.yaml", "0006.yaml"}, "4/4"},
		{"s-big-2", []string{"0001.yaml"}, "1/1"},
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("parts: %q, want %q", got, want)
	}
	if !reflect.DeepEqual(texts(t, r), stream) {
		t.Errorf("the parts in order are not the stream: %q, want %q", stream, texts(t, r))
	}
	if res.ClusterResourceSet.Spec.Strategy != "Reconcile" || len(res.ClusterResourceSet.Spec.Resources) != 5 {
		t.Errorf("spec %+v", res.ClusterResourceSet.Spec)
	}
	if n := capi.ResourceName("s", "big", 2); n != "s-big.3" {
		t.Errorf("ResourceName = %q", n)
	}
}

// A document larger than a ConfigMap holds is refused, with one line
// naming the member, its size and the document; one that fills a
// ConfigMap exactly is not.
func TestRefuseOversizedDocument(t *testing.T) {
	const limit = 1000
	r := rendered(t, false, obj("ConfigMap", "small", 100), obj("ConfigMap", "huge", limit+1))
	_, err := capi.ClusterResourceSet([]capi.Member{{Name: "cni", Result: r}}, capi.Options{Name: "s", ClusterSelector: selector, MaxDataBytes: limit})
	var se *capi.SizeError
	if !errors.Is(err, capi.ErrTooLarge) || !errors.As(err, &se) {
		t.Fatalf("err = %v, want a SizeError", err)
	}
	if se.Member != "cni" || se.Bytes != limit+1 || se.MemberBytes != limit+101 || se.Limit != limit || se.Object != "v1/ConfigMap app/huge" {
		t.Errorf("SizeError %+v", se)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "member cni (1101 bytes)") || !strings.Contains(msg, "app/huge alone is 1001 bytes") {
		t.Errorf("message %q", msg)
	}

	exact := rendered(t, false, obj("ConfigMap", "full", capi.MaxDataBytes))
	res := mustBuild(t, []capi.Member{{Name: "cni", Result: exact}}, capi.Options{Name: "s", ClusterSelector: selector})
	if len(res.Resources) != 1 {
		t.Errorf("a document of exactly MaxDataBytes took %d resources", len(res.Resources))
	}
	big := rendered(t, false, obj("ConfigMap", "full", capi.MaxDataBytes+1))
	if _, err := capi.ClusterResourceSet([]capi.Member{{Name: "cni", Result: big}}, capi.Options{Name: "s", ClusterSelector: selector}); !errors.Is(err, capi.ErrTooLarge) {
		t.Errorf("a document of MaxDataBytes+1: %v", err)
	}
}

// A member whose stream holds a Secret goes whole into Secrets (split
// like ConfigMaps), so no Secret's data lands in a ConfigMap; a Secret of
// another API group is not a Secret.
func TestSecretMember(t *testing.T) {
	r := rendered(t, false, obj("ConfigMap", "a", 600), obj("Secret", "s", 600))
	other := rendered(t, false, "apiVersion: example.com/v1\nkind: Secret\nmetadata:\n  name: s\n")
	res := mustBuild(t, []capi.Member{{Name: "creds", Result: r}, {Name: "other", Result: other}},
		capi.Options{Name: "s", ClusterSelector: selector, MaxDataBytes: 1000})
	var kinds []string
	for _, o := range res.Resources {
		name, kind, _, _ := data(t, o)
		kinds = append(kinds, kind+" "+name)
	}
	want := []string{"Secret s-creds", "Secret s-creds.2", "ConfigMap s-other"}
	if !reflect.DeepEqual(want, kinds) {
		t.Errorf("resources %q, want %q", kinds, want)
	}
	for _, ref := range res.ClusterResourceSet.Spec.Resources[:2] {
		if ref.Kind != "Secret" {
			t.Errorf("ref %+v", ref)
		}
	}
	var out bytes.Buffer
	if _, err := res.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), strings.Repeat("a", 100)) {
		t.Error("the Secret's text is in the stream unencoded")
	}
	if !strings.Contains(out.String(), "type: addons.cluster.x-k8s.io/resource-set") {
		t.Error("no Secret of Cluster API's type in the stream")
	}
}

// Options and members Cluster API or the API server would refuse are
// refused here, before anything is written.
func TestRefused(t *testing.T) {
	one := rendered(t, false, obj("ConfigMap", "a", 0))
	ok := capi.Options{Name: "s", ClusterSelector: selector}
	with := func(f func(*capi.Options)) capi.Options { o := ok; f(&o); return o }
	many := make([]capi.Member, capi.MaxResources+1)
	for i := range many {
		many[i] = capi.Member{Name: fmt.Sprintf("m%d", i), Result: one}
	}
	for _, c := range []struct {
		name    string
		members []capi.Member
		opts    capi.Options
		want    error
		text    string
	}{
		{"no name", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.Name = "" }), capi.ErrInvalid, `name ""`},
		{"name with a dot", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.Name = "a.b" }), capi.ErrInvalid, `name "a.b"`},
		{"uppercase name", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.Name = "Fleet" }), capi.ErrInvalid, `name "Fleet"`},
		{"long name", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.Name = strings.Repeat("a", 64) }), capi.ErrInvalid, "name"},
		{"bad namespace", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.Namespace = "Kube_System" }), capi.ErrInvalid, "namespace"},
		{"no selector", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.ClusterSelector = nil }), capi.ErrInvalid, "no cluster selector"},
		{"bad selector key", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.ClusterSelector = map[string]string{"a b": "c"} }), capi.ErrInvalid, `key "a b"`},
		{"bad selector value", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.ClusterSelector = map[string]string{"a": "b c"} }), capi.ErrInvalid, `a="b c"`},
		{"strategy", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.Strategy = "Always" }), capi.ErrInvalid, `strategy "Always"`},
		{"limit over the server's", []capi.Member{{Name: "a", Result: one}}, with(func(o *capi.Options) { o.MaxDataBytes = capi.MaxDataBytes + 1 }), capi.ErrInvalid, "bytes of data"},
		{"member name", []capi.Member{{Name: "A_b", Result: one}}, ok, capi.ErrInvalid, `member name "A_b"`},
		{"duplicate member", []capi.Member{{Name: "a", Result: one}, {Name: "a", Result: one}}, ok, capi.ErrInvalid, "member a appears twice"},
		{"unrendered member", []capi.Member{{Name: "a"}}, ok, capi.ErrInvalid, "no rendered stream"},
		{"no members", nil, ok, capi.ErrNoResources, "no member"},
		{"only empty members", []capi.Member{{Name: "a", Result: &render.Result{}}}, ok, capi.ErrNoResources, "no member"},
		{"too many resources", many, ok, capi.ErrTooManyResources, "needs 101 ConfigMaps and Secrets, over the 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := capi.ClusterResourceSet(c.members, c.opts)
			if !errors.Is(err, c.want) || res != nil {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, c.text) {
				t.Errorf("message %q, want one line with %q", msg, c.text)
			}
		})
	}
	// The edge: MaxResources members are fine.
	if _, err := capi.ClusterResourceSet(many[:capi.MaxResources], ok); err != nil {
		t.Errorf("%d resources: %v", capi.MaxResources, err)
	}
}
