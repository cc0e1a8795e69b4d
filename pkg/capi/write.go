package capi

import (
	"bufio"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// WriteTo writes Objects as one YAML stream, documents separated by
// "---", for 'kubectl apply --server-side -f -' (a client-side apply
// copies each object into an annotation, which holds at most 256 KiB, so
// it refuses a large ConfigMap). Maps are written in key order: the same
// Result gives the same bytes.
func (r *Result) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	var n int64
	for i, obj := range r.Objects() {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return n, fmt.Errorf("encode %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
		}
		if i > 0 {
			m, err := bw.WriteString("---\n")
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
		m, err := bw.Write(b)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}
