package render_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/benchdata"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// BenchmarkRenderManifestsLarge measures render.Render of a plain-manifest
// tree of 20,000 ConfigMaps of 10 KiB: the walk, and the parse and check of
// every document on every core.
func BenchmarkRenderManifestsLarge(b *testing.B) {
	const n = 20000
	fsys, err := benchdata.ManifestTree(n, 10<<10)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(fsys.Size())
	b.ReportAllocs()
	for b.Loop() {
		res, err := render.Render(ctx, fsys, render.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Documents) != n {
			b.Fatalf("%d documents, want %d", len(res.Documents), n)
		}
	}
}

// BenchmarkRenderManifestsLargeDropText is BenchmarkRenderManifestsLarge
// with Options.DropText, plus the write of the stream, which reads every
// document back from the tree: the render of an unpack to stdout.
func BenchmarkRenderManifestsLargeDropText(b *testing.B) {
	const n = 20000
	fsys, err := benchdata.ManifestTree(n, 10<<10)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(fsys.Size())
	b.ReportAllocs()
	for b.Loop() {
		res, err := render.Render(ctx, fsys, render.Options{DropText: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Documents) != n {
			b.Fatalf("%d documents, want %d", len(res.Documents), n)
		}
		if _, err := res.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCRDProps writes the properties of a schema level, as controller-gen
// does: long descriptions (plain and block scalars), nested objects,
// arrays, enums and required lists.
func benchCRDProps(w *bytes.Buffer, rng *rand.Rand, indent string, depth int) {
	const fanout = 6
	w.WriteString(indent + "properties:\n")
	var required []string
	for i := range fanout {
		name := fmt.Sprintf("%s%d", benchdata.Words[rng.IntN(len(benchdata.Words))], i)
		fmt.Fprintf(w, "%s  %s:\n", indent, name)
		p := indent + "    "
		if i%2 == 0 {
			w.WriteString(p + "description: |-\n")
			for range 3 {
				w.WriteString(p + "  ")
				benchdata.Sentence(w, rng, 12)
				w.WriteByte('\n')
			}
		} else {
			w.WriteString(p + "description: ")
			benchdata.Sentence(w, rng, 25)
			w.WriteByte('\n')
		}
		switch {
		case depth > 0 && i < 3:
			benchCRDProps(w, rng, p, depth-1) // ends with its type: object
		case i == 3:
			w.WriteString(p + "type: array\n" + p + "items:\n" + p + "  type: string\n" + p + "  maxLength: 253\n")
		case i == 4:
			w.WriteString(p + "type: string\n" + p + "enum:\n")
			for k := range 4 {
				fmt.Fprintf(w, "%s- %s%d\n", p, benchdata.Words[rng.IntN(len(benchdata.Words))], k)
			}
		default:
			w.WriteString(p + "type: integer\n" + p + "format: int32\n" + p + "minimum: 0\n")
			required = append(required, name)
		}
	}
	if len(required) > 0 {
		w.WriteString(indent + "required:\n")
		for _, r := range required {
			w.WriteString(indent + "- " + r + "\n")
		}
	}
	w.WriteString(indent + "type: object\n")
}

// benchCRDBundle makes a multi-document file of CustomResourceDefinitions
// of at least size bytes, and says how many documents it holds.
func benchCRDBundle(size int) ([]byte, int) {
	rng := rand.New(rand.NewPCG(3, 4))
	var w bytes.Buffer
	n := 0
	for ; w.Len() < size; n++ {
		if n > 0 {
			w.WriteString("---\n")
		}
		fmt.Fprintf(&w, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.0
  name: widgets%[1]d.bench.example.com
spec:
  group: bench.example.com
  names:
    kind: Widget%[1]d
    listKind: Widget%[1]dList
    plural: widgets%[1]d
    singular: widget%[1]d
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        description: Widget%[1]d is the Schema for the widgets API.
`, n)
		benchCRDProps(&w, rng, "        ", 3)
	}
	return w.Bytes(), n
}

// BenchmarkSplitDocuments measures render.SplitDocuments of a 1 MiB file
// of CustomResourceDefinitions (deeply nested mappings, lists and long
// descriptions), the shape of a real CRD bundle.
func BenchmarkSplitDocuments(b *testing.B) {
	in, n := benchCRDBundle(1 << 20)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		docs, err := render.SplitDocuments("crds.yaml", in)
		if err != nil {
			b.Fatal(err)
		}
		if len(docs) != n {
			b.Fatalf("%d documents, want %d", len(docs), n)
		}
	}
}

// BenchmarkRenderKustomizeDeprecated measures render.Render of an overlay
// and its base, 200 ConfigMaps, whose kustomizations use deprecated
// fields (bases, commonLabels, patchesStrategicMerge): kustomize's run
// plus the warnings about them.
func BenchmarkRenderKustomizeDeprecated(b *testing.B) {
	const n = 200
	files := map[string]string{
		"kustomization.yaml":      "bases:\n- base\ncommonLabels:\n  app: x\n",
		"base/kustomization.yaml": "resources:\n- cms.yaml\npatchesStrategicMerge:\n- p.yaml\n",
		"base/p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm0\ndata:\n  k: v\n",
	}
	var cms bytes.Buffer
	for i := range n {
		fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n  a: %q\n", i, benchdata.Words[i%len(benchdata.Words)])
	}
	files["base/cms.yaml"] = cms.String()
	fsys := tree(files)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := render.Render(ctx, fsys, render.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Documents) != n || len(res.Warnings) != 3 {
			b.Fatalf("%d documents, %d warnings, want %d and 3", len(res.Documents), len(res.Warnings), n)
		}
	}
}
