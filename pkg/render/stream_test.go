package render_test

import (
	"bytes"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

func TestWriteToIsYAML(t *testing.T) {
	a, err := render.SplitDocuments("a.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, docs := range [][]render.Document{nil, a[:1], a} {
		res := &render.Result{Documents: docs}
		var buf bytes.Buffer
		n, err := res.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) || !bytes.Equal(buf.Bytes(), res.YAML()) {
			t.Errorf("%d documents: WriteTo wrote %q (n=%d, %v), YAML is %q", len(docs), buf.Bytes(), n, err, res.YAML())
		}
	}
}
