package vectorgen

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

// node is one entry of a vector's expected add-on tree.
type node struct {
	path   string
	kind   byte // 'f' file, 'l' symlink, 'd' directory
	body   string
	exec   bool
	target string
}

func f(p, body string) node   { return node{path: p, kind: 'f', body: body} }
func fx(p, body string) node  { return node{path: p, kind: 'f', body: body, exec: true} }
func l(p, target string) node { return node{path: p, kind: 'l', target: target} }
func d(p string) node         { return node{path: p, kind: 'd'} }

// identity is the content identity of spec/addon-v1.md section 7.2,
// computed here from the model (not by addonpkg's code): records in tree
// order, each directory (explicit or implied by a deeper path) before its
// entries, names in byte order.
func identity(tree []node) string {
	type tnode struct {
		node
		children map[string]*tnode
	}
	root := &tnode{children: map[string]*tnode{}}
	for _, n := range tree {
		cur := root
		parts := strings.Split(n.path, "/")
		for i, part := range parts {
			c := cur.children[part]
			if c == nil {
				c = &tnode{node: node{path: strings.Join(parts[:i+1], "/"), kind: 'd'}, children: map[string]*tnode{}}
				cur.children[part] = c
			}
			if i == len(parts)-1 {
				c.node = n
			}
			cur = c
		}
	}
	h := sha256.New()
	var visit func(t *tnode)
	visit = func(t *tnode) {
		names := make([]string, 0, len(t.children))
		for name := range t.children {
			names = append(names, name)
		}
		sort.Strings(names) // Go compares strings bytewise
		for _, name := range names {
			c := t.children[name]
			switch c.kind {
			case 'd':
				h.Write([]byte("d\x00" + c.path + "\x000755\x00\x00"))
				visit(c)
			case 'f':
				mode := "0644"
				if c.exec {
					mode = "0755"
				}
				h.Write([]byte("f\x00" + c.path + "\x00" + mode + "\x00" + "sha256:" + hexOf([]byte(c.body)) + "\x00"))
			case 'l':
				h.Write([]byte("l\x00" + c.path + "\x000777\x00" + c.target + "\x00"))
			}
		}
	}
	visit(root)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// expectOK is the result a reader must report for the tree.
func expectOK(form string, tree []node) conformance.Result {
	r := conformance.Result{Result: conformance.ResultOK, Form: form, Identity: identity(tree), Files: map[string]conformance.File{}}
	for _, n := range tree {
		switch n.kind {
		case 'f':
			mode := "0644"
			if n.exec {
				mode = "0755"
			}
			r.Files[n.path] = conformance.File{SHA256: hexOf([]byte(n.body)), Mode: mode}
		case 'l':
			if r.Links == nil {
				r.Links = map[string]string{}
			}
			r.Links[n.path] = n.target
		}
	}
	return r
}

// prefixed puts a tree's entries below dir (the image form's addon/):
// the directory itself, then every node as a tar entry.
func prefixed(prefix string, tree []node) []entry {
	out := []entry{}
	if prefix != "" {
		out = append(out, dir(prefix+"/"))
		prefix += "/"
	}
	made := map[string]bool{}
	for _, n := range tree {
		// Parents first, in path order.
		parts := strings.Split(n.path, "/")
		for i := 1; i < len(parts); i++ {
			p := strings.Join(parts[:i], "/")
			if !made[p] {
				made[p] = true
				out = append(out, dir(prefix+p+"/"))
			}
		}
		switch n.kind {
		case 'd':
			if !made[n.path] {
				made[n.path] = true
				out = append(out, dir(prefix+n.path+"/"))
			}
		case 'f':
			if n.exec {
				out = append(out, exe(prefix+n.path, n.body))
			} else {
				out = append(out, file(prefix+n.path, n.body))
			}
		case 'l':
			out = append(out, symlink(prefix+n.path, n.target))
		}
	}
	return out
}
