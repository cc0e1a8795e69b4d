package render

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// WriteTo writes the stream that YAML returns, document by document,
// without holding it whole: for a large add-on that copy would double
// the memory an unpack to stdout needs. The text of documents rendered
// with Options.DropText is read back from the tree, one document at a
// time, with one file of the tree open at a time.
func (r *Result) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	t := textReader{fsys: r.fsys}
	defer t.close()
	var n int64
	for i := range r.Documents {
		text, err := t.text(&r.Documents[i])
		if err != nil {
			return n, err
		}
		if i > 0 {
			m, err := bw.WriteString("---\n")
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
		m, err := bw.Write(text)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// Text is the document's text, ending in a newline: its Raw, or for a
// document of a result rendered with Options.DropText, its bytes read
// back from the tree.
func (r *Result) Text(d Document) ([]byte, error) {
	t := textReader{fsys: r.fsys}
	defer t.close()
	b, err := t.text(&d)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

// ErrNoText is returned for a document that has no Raw and no tree to
// read its text from.
var ErrNoText = errors.New("document text not held")

// textReader reads the text of documents back from the tree, keeping the
// file of the last one open: documents mostly come in runs from one file.
type textReader struct {
	fsys fs.FS
	name string      // the file open, or ""
	f    fs.File     // open on name
	ra   io.ReaderAt // f, when it reads at an offset
	data []byte      // else the whole of name
	buf  []byte      // the last document's text, reused
}

// text returns d's text, valid until the next call.
func (t *textReader) text(d *Document) ([]byte, error) {
	if d.Raw != nil {
		return d.Raw, nil
	}
	if t.fsys == nil || d.File == "" || d.Length <= 0 || d.Offset < 0 {
		return nil, &Error{File: d.File, Line: d.Line, Err: ErrNoText}
	}
	if d.File != t.name {
		if err := t.open(d.File); err != nil {
			return nil, &Error{File: d.File, Err: fmt.Errorf("read back: %w", err)}
		}
	}
	var text []byte
	if t.ra != nil {
		if int64(cap(t.buf)) < d.Length+1 {
			t.buf = make([]byte, d.Length+1)
		}
		text = t.buf[:d.Length]
		if m, err := t.ra.ReadAt(text, d.Offset); int64(m) != d.Length {
			return nil, &Error{File: d.File, Line: d.Line, Err: fmt.Errorf("read back: %d of %d bytes at offset %d: %w", m, d.Length, d.Offset, changed(err))}
		}
	} else {
		if d.Offset+d.Length > int64(len(t.data)) {
			return nil, &Error{File: d.File, Line: d.Line, Err: fmt.Errorf("read back: the file has %d bytes, the document ends at %d: %w", len(t.data), d.Offset+d.Length, changed(nil))}
		}
		text = append(t.buf[:0], t.data[d.Offset:d.Offset+d.Length]...)
		t.buf = text
	}
	if isJSONText(text) {
		// As splitDocuments writes Raw: JSON as block YAML.
		y, err := streamText(text)
		if err != nil {
			return nil, &Error{File: d.File, Line: d.Line, Err: fmt.Errorf("read back: %w", err)}
		}
		return y, nil
	}
	if text[len(text)-1] != '\n' {
		text = append(text, '\n') // as rawDocument
		t.buf = text
	}
	return text, nil
}

// errChanged marks a tree that changed between the render and the read.
var errChanged = errors.New("the file changed since it was rendered")

func changed(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return errChanged
	}
	return err
}

// open makes name the file text reads from.
func (t *textReader) open(name string) error {
	t.close()
	f, err := t.fsys.Open(name)
	if err != nil {
		return err
	}
	t.name, t.f = name, f
	if ra, ok := f.(io.ReaderAt); ok {
		t.ra = ra
		return nil
	}
	// Read whole, within the size the file has: it was read whole to
	// render, so a file over it changed since.
	st, err := f.Stat()
	if err == nil {
		t.data, err = io.ReadAll(io.LimitReader(f, st.Size()+1))
		if err == nil && int64(len(t.data)) > st.Size() {
			err = errChanged
		}
	}
	if err != nil {
		t.close()
	}
	return err
}

func (t *textReader) close() {
	if t.f != nil {
		t.f.Close()
	}
	t.name, t.f, t.ra, t.data = "", nil, nil, nil
}
