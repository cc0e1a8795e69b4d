package addonset_test

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addonset"
)

// FuzzParse feeds the declaration parser arbitrary bytes. It must not
// panic, and a declaration it accepts must have a dependency order with
// every member once, after its dependencies, and survive Marshal and
// Parse unchanged. Seeds: the example and golden sets, the f.Add calls
// below, and testdata/fuzz/FuzzParse (aliases, a long cycle, flow style).
func FuzzParse(f *testing.F) {
	for _, p := range []string{exampleSet, "testdata/golden/addons.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(header + "- name: a\n  source: registry.example.com/a\n  version: '>=1.2 <2'\n  dependsOn: [b]\n- name: b\n  source: git+https://example.com/r.git//x?ref=v1\n  platform: linux/arm64\n"))
	f.Add([]byte(header + "- name: a\n  source: https://example.com/a.tgz?checksum=sha256:" + string(bytes.Repeat([]byte("0"), 64)) + "\n  dependsOn: [a]\n"))
	f.Add([]byte(header + "- &x {name: a, source: oci:./l}\n- *x\n"))
	f.Add([]byte("apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons: {}\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := addonset.Parse(b, "addons.yaml", dir)
		if err != nil {
			return
		}
		order, err := s.Order()
		if err != nil {
			t.Fatalf("accepted, but no order: %v", err)
		}
		if len(order) != len(s.Addons) {
			t.Fatalf("order has %d members, the set %d", len(order), len(s.Addons))
		}
		pos := map[string]int{}
		for i, a := range order {
			if _, dup := pos[a.Name]; dup {
				t.Fatalf("%s twice in the order", a.Name)
			}
			pos[a.Name] = i
		}
		for _, a := range order {
			for _, d := range a.DependsOn {
				if pos[d] >= pos[a.Name] {
					t.Fatalf("%s comes before its dependency %s", a.Name, d)
				}
			}
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := addonset.Parse(out, "addons.yaml", dir)
		if err != nil {
			t.Fatalf("marshalled declaration does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(norm(back.Addons), norm(s.Addons)) {
			t.Fatalf("round trip changed the members:\n%+v\n%+v", back.Addons, s.Addons)
		}
	})
}

// norm treats an empty dependsOn like a missing one (YAML cannot tell).
func norm(as []addonset.Addon) []addonset.Addon {
	out := append([]addonset.Addon{}, as...)
	for i := range out {
		if len(out[i].DependsOn) == 0 {
			out[i].DependsOn = nil
		}
	}
	return out
}

// FuzzParseLock feeds the lock parser arbitrary bytes: no panic, and a
// lock it accepts marshals to bytes it parses back to the same pins.
func FuzzParseLock(f *testing.F) {
	for _, p := range []string{addonset.LockPath(exampleSet), "testdata/golden/addons.lock", "testdata/golden/format.lock"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := addonset.ParseLock(b, "addons.lock")
		if err != nil {
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := addonset.ParseLock(out, "addons.lock")
		if err != nil {
			t.Fatalf("marshalled lock does not parse: %v\n%s", err, out)
		}
		again, _ := back.Marshal()
		if !bytes.Equal(again, out) {
			t.Fatalf("marshal is not stable:\n%s\n%s", out, again)
		}
	})
}
