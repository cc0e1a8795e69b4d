package vectorgen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

// Pin is what a vector pins, as its README.md line says.
type Pin struct {
	// Vector is the vector's folder name.
	Vector string
	// Section is the section of spec/addon-v1.md, with an item when it
	// names one ("4.4 item 3").
	Section string
	// About says what the vector checks.
	About string
}

// Pins lists every vector the generator makes, in name order.
func Pins() []Pin {
	vs := all()
	out := make([]Pin, len(vs))
	for i, v := range vs {
		out[i] = Pin{Vector: v.name, Section: v.pins, About: v.about}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Vector < out[j].Vector })
	return out
}

// Generate writes every vector into dir, replacing what it held: it
// writes a sibling temp folder and renames it into place.
func Generate(dir string) error {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("generate vectors: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return fmt.Errorf("generate vectors: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("generate vectors: %w", err)
	}
	if err := writeAll(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		os.RemoveAll(tmp)
		return fmt.Errorf("generate vectors: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("generate vectors: %w", err)
	}
	return nil
}

func writeAll(root string) error {
	seen := map[string]bool{}
	for _, v := range all() {
		if seen[v.name] {
			return fmt.Errorf("generate vectors: two vectors named %s", v.name)
		}
		seen[v.name] = true
		if err := write(filepath.Join(root, v.name), v); err != nil {
			return fmt.Errorf("generate vector %s: %w", v.name, err)
		}
	}
	return nil
}

func write(dir string, v vector) error {
	out := v.input()
	fs := files{}
	for name, b := range out.layout {
		fs["layout/"+name] = b
	}
	if out.archive != nil {
		fs["archive.tar"] = out.archive
	}
	var exp bytes.Buffer
	if err := conformance.Encode(&exp, v.want); err != nil {
		return err
	}
	fs["expected.json"] = exp.Bytes()
	fs["README.md"] = []byte(fmt.Sprintf("`%s`: spec/addon-v1.md section %s. %s.\n", v.name, v.pins, upperFirst(v.about)))
	for name, b := range fs {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
