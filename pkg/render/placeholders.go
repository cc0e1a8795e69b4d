package render

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The add-ons of kubernetes/kubernetes' cluster/addons leave tokens for a
// script to fill in before kubectl applies them: nodelocaldns's
// __PILLAR__DNS__SERVER__, the coredns base's __DNS__DOMAIN__. Left in,
// they are valid strings, so the API server takes the objects and the
// add-on fails only once it runs (a DNS cache bound to no address).
// Rendering says so, as a warning: a token of that shape may be meant.

// placeholderPattern is such a token: words of capitals and digits
// joined by one or two underscores, between double underscores.
var placeholderPattern = regexp.MustCompile(`__[A-Z][A-Z0-9]*(?:__?[A-Z0-9]+)*__`)

// maxNamedPlaceholders is how many of a file's placeholders its warning
// names: the rest are counted.
const maxNamedPlaceholders = 3

// placeholders lists, sorted and once each, the placeholder tokens of b
// outside comment lines (a generated-file banner such as
// __MACHINE_GENERATED_WARNING__ sits in a comment, where it does no harm).
func placeholders(b []byte) []string {
	if !bytes.Contains(b, []byte("__")) {
		return nil
	}
	var found []string
	for line := range bytes.Lines(b) {
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '#' || !bytes.Contains(line, []byte("__")) {
			continue
		}
		for _, m := range placeholderPattern.FindAllIndex(line, -1) {
			// A token stands alone: x__Y__z is an identifier's middle.
			if m[0] > 0 && wordByte(line[m[0]-1]) || m[1] < len(line) && wordByte(line[m[1]]) {
				continue
			}
			if s := string(line[m[0]:m[1]]); !slices.Contains(found, s) {
				found = append(found, s)
			}
		}
	}
	slices.Sort(found)
	return found
}

func wordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// placeholderWarning is the warning for the placeholders found in where
// (a file, or an object of a kustomize render); "" when none.
func placeholderWarning(where string, found []string) string {
	if len(found) == 0 {
		return ""
	}
	named := strings.Join(found[:min(len(found), maxNamedPlaceholders)], ", ")
	if n := len(found) - maxNamedPlaceholders; n > 0 {
		named += fmt.Sprintf(" and %d more", n)
	}
	verb := "looks like a placeholder"
	if len(found) > 1 {
		verb = "look like placeholders"
	}
	return fmt.Sprintf("%s: %s %s that a script fills in before kubectl apply; left in, the objects do not work: fill them in, or declare them as values (${NAME}, spec/addon-v1.md section 6.6)", where, named, verb)
}
