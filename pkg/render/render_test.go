package render

import (
	"context"
	"os"
	"testing"
)

func TestExamplesRender(t *testing.T) {
	for dir, want := range map[string]int{"../../examples/coredns": 6, "../../examples/metrics-server": 9, "../../examples/gateway-api-crds": 3} {
		res, err := Render(context.Background(), os.DirFS(dir), Options{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if len(res.Documents) != want {
			t.Errorf("%s: %d documents, want %d", dir, len(res.Documents), want)
		}
	}
}
