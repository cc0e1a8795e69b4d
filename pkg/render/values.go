package render

import (
	"bytes"
	"fmt"
	"io/fs"

	"github.com/addonpkg/addonpkg/pkg/values"
)

// substitute fills the values the tree declares into every document
// (Options.Values): each document's text is expanded and parsed again,
// so its object, images and inventory entry are those of the filled-in
// text. A document the values would turn into several, or into another
// kind, is refused: values fill fields, they do not add objects.
func substitute(fsys fs.FS, docs []Document, given map[string]string, dropped fs.FS) ([]Document, map[string]string, error) {
	decl, err := values.Load(fsys)
	if err != nil {
		return nil, nil, err
	}
	vals, err := values.Resolve(decl, given)
	if err != nil || decl == nil {
		return docs, nil, err
	}
	t := textReader{fsys: dropped}
	defer t.close()
	out := make([]Document, 0, len(docs))
	for i := range docs {
		d := docs[i]
		text, err := t.text(&d)
		if err != nil {
			return nil, nil, err
		}
		// Not only "${": Flux turns "$$" into "$" in every document, so
		// a document is left as it is only when filling changes nothing.
		if bytes.IndexByte(text, '$') < 0 {
			out = append(out, d) // nothing to fill
			continue
		}
		name := where(d)
		if name == "" {
			name = describe(d.Object) // kustomize output has no files
		}
		filled, err := values.Expand(name, text, vals)
		if err != nil {
			return nil, nil, err
		}
		if bytes.Equal(filled, text) {
			out = append(out, d)
			continue
		}
		again, err := SplitDocuments(d.File, filled)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: with its values filled in: %w", name, err)
		}
		if len(again) != 1 || again[0].Object.APIVersion != d.Object.APIVersion || again[0].Object.Kind != d.Object.Kind {
			return nil, nil, &Error{File: d.File, Line: d.Line, Err: fmt.Errorf("%w: its values turn it into something else than one %s", values.ErrInvalid, d.Object.Kind)}
		}
		n := again[0]
		n.File, n.Line, n.Offset, n.Length = d.File, d.Line, 0, 0
		n.Raw = rawDocument(n.Raw)
		out = append(out, n)
	}
	if err := checkDuplicates(out, ""); err != nil {
		return nil, nil, err
	}
	return out, vals, nil
}
