// Package benchdata generates the add-on trees the Go benchmarks share, so
// that build, render, push, pull and unpack are measured on the same
// shape of data.
package benchdata

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/addonpkg/addonpkg/pkg/filetree"
)

// Words are what the generated manifests are made of: random words from a
// small vocabulary read (and parse) like real YAML and compress about as
// well (about 4:1), where a run of one letter would make gzip
// unrealistically fast.
var Words = []string{
	"apps", "v1", "pod", "spec", "container", "image", "registry", "port",
	"service", "namespace", "label", "selector", "replica", "volume", "mount",
	"secret", "config", "probe", "liveness", "readiness", "resource", "limit",
	"request", "cpu", "memory", "node", "affinity", "toleration", "taint",
	"ingress", "egress", "policy", "role", "binding", "account", "token",
	"webhook", "controller", "manager", "leader", "election", "metrics",
	"health", "endpoint", "cluster", "domain", "tls", "certificate", "issuer",
	"annotation", "finalizer", "owner", "reference", "status", "condition",
	"reason", "message", "generation", "observed", "true", "false", "100m",
	"256Mi", "8443",
}

// Sentence writes n random words separated by spaces.
func Sentence(w *bytes.Buffer, rng *rand.Rand, n int) {
	for i := range n {
		if i > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(Words[rng.IntN(len(Words))])
	}
}

// ManifestTree makes a plain-manifest add-on of n ConfigMaps of about size
// bytes each, spread over 20 directories (the shape of pkg/unpack's
// benchmarks). The same n and size give the same tree.
func ManifestTree(n, size int) (*filetree.FS, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	t := filetree.NewBuilder()
	for i := range n {
		var doc bytes.Buffer
		fmt.Fprintf(&doc, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%05d\n  namespace: bench\n  labels:\n    app.kubernetes.io/name: bench\n    app.kubernetes.io/part-of: addon\ndata:\n", i)
		for k := 0; doc.Len() < size; k++ {
			fmt.Fprintf(&doc, "  key-%03d: \"", k)
			Sentence(&doc, rng, 14)
			doc.WriteString(" end\"\n")
		}
		if err := t.WriteFile(fmt.Sprintf("c%d/cm-%05d.yaml", i%20, i), doc.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return t.FS(), nil
}
