package render

import (
	"bufio"
	"io"
)

// WriteTo writes the stream that YAML returns, document by document,
// without holding it whole: for a large add-on that copy would double
// the memory an unpack to stdout needs.
func (r *Result) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	var n int64
	for i, d := range r.Documents {
		if i > 0 {
			m, err := bw.WriteString("---\n")
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
		m, err := bw.Write(d.Raw)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}
