package build_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// spec/examples/ holds examples/coredns packaged in both forms, as
// spec/addon-v1.md section 13 promises. This test keeps them in step with
// the implementation; regenerate with:
//
//	go test ./pkg/build -run SpecExamples -update
func TestSpecExamples(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			res := buildDir(t, exampleDir("coredns"), "coredns", f)
			manifest, err := res.Image.RawManifest()
			if err != nil {
				t.Fatal(err)
			}
			config, err := res.Image.RawConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("..", "..", "spec", "examples", string(f))
			for file, raw := range map[string][]byte{"manifest.json": manifest, "config.json": config} {
				var buf bytes.Buffer
				if err := json.Indent(&buf, raw, "", "  "); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				buf.WriteByte('\n')
				path := filepath.Join(dir, file)
				if *update {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (regenerate with: go test ./pkg/build -run SpecExamples -update)", err)
				}
				if !bytes.Equal(buf.Bytes(), want) {
					t.Errorf("%s differs from what build writes now; if intended, regenerate with: go test ./pkg/build -run SpecExamples -update\ngot:\n%s", path, buf.Bytes())
				}
			}
		})
	}
}
