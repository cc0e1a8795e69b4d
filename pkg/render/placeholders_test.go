package render_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// kubernetes/kubernetes' nodelocaldns manifest, as upstream ships it,
// renders with one warning naming the file and its placeholders, with
// or without the documents' text kept; its generated-file banner, in a
// comment, is not one of them.
func TestPlaceholdersOfUpstreamNodeLocalDNS(t *testing.T) {
	b, err := os.ReadFile("../../e2e/testdata/real-addons/nodelocaldns/cluster/addons/dns/nodelocaldns/nodelocaldns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"nodelocaldns.yaml": {Data: b}}
	for _, drop := range []bool{false, true} {
		res, err := render.Render(context.Background(), fsys, render.Options{DropText: drop})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Warnings) != 1 {
			t.Fatalf("DropText %v: warnings %q, want one", drop, res.Warnings)
		}
		w := res.Warnings[0]
		for _, want := range []string{"nodelocaldns.yaml: ", "__PILLAR__CLUSTER__DNS__, __PILLAR__DNS__DOMAIN__, __PILLAR__DNS__SERVER__ and 2 more", "${NAME}"} {
			if !strings.Contains(w, want) {
				t.Errorf("DropText %v: warning %q does not say %q", drop, w, want)
			}
		}
		if strings.Contains(w, "MACHINE_GENERATED") {
			t.Errorf("a comment's token named: %q", w)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	const head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: kube-system\n"
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want []string // in the one warning; none when empty
	}{
		{"a block scalar", fstest.MapFS{"cm.yaml": {Data: []byte(head + "data:\n  Corefile: |\n    __DNS__DOMAIN__:53 {\n      forward . __UPSTREAM__\n    }\n")}},
			[]string{"cm.yaml: __DNS__DOMAIN__, __UPSTREAM__ look like placeholders"}},
		{"one", fstest.MapFS{"cm.yaml": {Data: []byte(head + "data:\n  ip: \"__PILLAR__LOCAL__DNS__\"\n")}},
			[]string{"cm.yaml: __PILLAR__LOCAL__DNS__ looks like a placeholder"}},
		{"comments only", fstest.MapFS{"cm.yaml": {Data: []byte("# __MACHINE_GENERATED_WARNING__\n" + head + "data:\n  # __NOT_USED__\n  a: b\n")}}, nil},
		{"not the shape", fstest.MapFS{"cm.yaml": {Data: []byte(head + "data:\n  py: \"def __init__(self): pass\"\n  a: x__Y__z\n  b: ____\n  c: __a__\n")}}, nil},
		{"a kustomize render", fstest.MapFS{
			"kustomization.yaml": {Data: []byte("resources: [cm.yaml]\n")},
			"cm.yaml":            {Data: []byte(head + "data:\n  ip: __PILLAR__LOCAL__DNS__\n")},
		}, []string{"v1/ConfigMap kube-system/c: __PILLAR__LOCAL__DNS__ looks like a placeholder"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := render.Render(context.Background(), tc.fsys, render.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.want) == 0 {
				if len(res.Warnings) != 0 {
					t.Errorf("warnings %q, want none", res.Warnings)
				}
				return
			}
			if len(res.Warnings) != 1 {
				t.Fatalf("warnings %q, want one", res.Warnings)
			}
			for _, want := range tc.want {
				if !strings.Contains(res.Warnings[0], want) {
					t.Errorf("warning %q does not say %q", res.Warnings[0], want)
				}
			}
		})
	}
}
