package values_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/values"
)

const decl = `apiVersion: addon.cncf.io/v1alpha1
kind: AddonValues
values:
  - name: DNS_SERVER_IP
    description: the kube-dns ClusterIP
  - name: DNS_DOMAIN
    default: cluster.local
`

func TestResolve(t *testing.T) {
	d, err := values.Parse([]byte(decl))
	if err != nil {
		t.Fatal(err)
	}
	got, err := values.Resolve(d, map[string]string{"DNS_SERVER_IP": "10.96.0.10"})
	if err != nil {
		t.Fatal(err)
	}
	if got["DNS_SERVER_IP"] != "10.96.0.10" || got["DNS_DOMAIN"] != "cluster.local" || len(got) != 2 {
		t.Errorf("Resolve = %v", got)
	}

	_, err = values.Resolve(d, map[string]string{})
	var me *values.MissingError
	if !errors.As(err, &me) || !errors.Is(err, values.ErrMissing) || len(me.Missing) != 1 || me.Missing[0].Name != "DNS_SERVER_IP" {
		t.Fatalf("Resolve without the required value: %v", err)
	}
	if want := "missing value: DNS_SERVER_IP (the kube-dns ClusterIP)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}

	_, err = values.Resolve(d, map[string]string{"DNS_SERVER_IP": "x", "DNS_DOMIAN": "y"})
	if !errors.Is(err, values.ErrUnknown) || !strings.Contains(err.Error(), "DNS_DOMIAN") || !strings.Contains(err.Error(), "it declares DNS_SERVER_IP, DNS_DOMAIN") {
		t.Errorf("Resolve with a misspelt value: %v", err)
	}

	_, err = values.Resolve(nil, map[string]string{"A": "1"})
	if !errors.Is(err, values.ErrUnknown) || !strings.Contains(err.Error(), "it declares none") {
		t.Errorf("Resolve of an add-on that declares nothing: %v", err)
	}
	if got, err := values.Resolve(nil, map[string]string{}); got != nil || err != nil {
		t.Errorf("Resolve(nil, {}) = %v, %v", got, err)
	}
}

func TestExpand(t *testing.T) {
	vals := map[string]string{"IP": "10.96.0.10", "EMPTY": ""}
	for _, tc := range []struct{ in, want, err string }{
		{in: "clusterIP: ${IP}\n", want: "clusterIP: 10.96.0.10\n"},
		{in: "a: ${NOPE:=d}\n", err: "f.yaml:3: ${NOPE} is not a declared value (it declares EMPTY, IP in .addonvalues)"},
		{in: "a: ${EMPTY:=d}\n", want: "a: d\n"},
		{in: "a: $${IP} $IP $(date)\n", want: "a: ${IP} $IP $(date)\n"},
		{in: "a: no dollars\n", want: "a: no dollars\n"},
		{in: "a: ${NOPE}\n", err: "f.yaml:3: ${NOPE} is not a declared value (it declares EMPTY, IP in .addonvalues)"},
		{in: "a: ${IP\n", err: "f.yaml:3: invalid values: missing closing brace"},
	} {
		got, err := values.Expand("f.yaml:3", []byte(tc.in), vals)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Expand(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"kind":     "apiVersion: addon.cncf.io/v1alpha1\nkind: Other\nvalues: []\n",
		"field":    "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: A\n  requird: true\n",
		"bad name": "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: 1A\n",
		"twice":    "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: A\n- name: A\n",
		"not yaml": "{",
		// A default left empty is neither "" nor required: the author
		// wrote one, so it must say which.
		"null default":  "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: A\n  default:\n",
		"tilde default": "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: A\n  default: ~\n",
	} {
		if _, err := values.Parse([]byte(in)); !errors.Is(err, values.ErrInvalid) {
			t.Errorf("%s: Parse = %v, want ErrInvalid", name, err)
		}
	}
}

func TestLoad(t *testing.T) {
	d, err := values.Load(fstest.MapFS{})
	if d != nil || err != nil {
		t.Errorf("Load of a tree without a declaration = %v, %v", d, err)
	}
	d, err = values.Load(fstest.MapFS{values.File: {Data: []byte(decl)}})
	if err != nil || len(d.Names()) != 2 {
		t.Errorf("Load = %v, %v", d, err)
	}
	big := fstest.MapFS{values.File: {Data: []byte(decl + "# " + strings.Repeat("x", 2<<20) + "\n")}}
	if _, err := values.Load(big); err == nil || !strings.Contains(err.Error(), "declaration size") {
		t.Errorf("Load of an oversized declaration: %v", err)
	}
}

func TestParseFileAndAssignment(t *testing.T) {
	got, err := values.ParseFile("v.yaml", []byte("A: 1\nB: true\nC: text\n"))
	if err != nil || got["A"] != "1" || got["B"] != "true" || got["C"] != "text" {
		t.Errorf("ParseFile = %v, %v", got, err)
	}
	for _, in := range []string{"A: [1]\n", "A: {b: 1}\n", "- A\n", "A: 1\nA: 2\n", "1A: x\n", "A:\n"} {
		if _, err := values.ParseFile("v.yaml", []byte(in)); !errors.Is(err, values.ErrInvalid) {
			t.Errorf("ParseFile(%q) = %v, want ErrInvalid", in, err)
		}
	}
	if n, v, err := values.ParseAssignment("A=b=c"); n != "A" || v != "b=c" || err != nil {
		t.Errorf("ParseAssignment = %q %q %v", n, v, err)
	}
	for _, in := range []string{"A", "=b", "a-b=c"} {
		if _, _, err := values.ParseAssignment(in); !errors.Is(err, values.ErrInvalid) {
			t.Errorf("ParseAssignment(%q) = %v", in, err)
		}
	}
}

// Expand is Flux's substitution whatever the text holds: "$$" is "$"
// also in a text that refers to no value.
func TestExpandDollarDollarWithoutReference(t *testing.T) {
	vals := map[string]string{"IP": "10.96.0.10"}
	for in, want := range map[string]string{
		"run: echo $$\n":          "run: echo $\n",
		"run: echo $$ ${IP}\n":    "run: echo $ 10.96.0.10\n",
		"run: echo $HOME $(date)": "run: echo $HOME $(date)",
	} {
		if got, err := values.Expand("f.yaml:1", []byte(in), vals); err != nil || string(got) != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
