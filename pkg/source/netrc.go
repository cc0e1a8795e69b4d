package source

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// maxNetrcSize caps the netrc file read.
const maxNetrcSize = 1 << 20

// netrcFile is the netrc path: Options.Netrc, else $NETRC, else ~/.netrc.
func (o Options) netrcFile() string {
	if o.Netrc != "" {
		return o.Netrc
	}
	if f := os.Getenv("NETRC"); f != "" {
		return f
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".netrc")
}

// netrcLookup returns the login and password of host (no port) in the
// netrc file, falling back to its "default" entry. A missing or
// unreadable file has no entries.
func netrcLookup(file, host string) (string, string, bool) {
	if file == "" {
		return "", "", false
	}
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxNetrcSize {
		return "", "", false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", "", false
	}
	var def *netrcEntry
	for _, e := range parseNetrc(b) {
		if e.machine == host && e.login != "" {
			return e.login, e.password, true
		}
		if e.isDefault && def == nil {
			d := e
			def = &d
		}
	}
	if def != nil && def.login != "" {
		return def.login, def.password, true
	}
	return "", "", false
}

type netrcEntry struct {
	machine         string
	isDefault       bool
	login, password string
}

// parseNetrc reads the machine, default, login, password, account and
// macdef tokens of a netrc file (macro bodies are skipped).
//
// It is hand-written because the netrc libraries at hand misread files
// that can hold credentials (each case is in TestNetrcLookup):
//   - github.com/jdx/go-netrc v1.0.0 panics on a "machine" keyword at the
//     end of the file (an index out of range), reads the lines of a
//     macdef body as machine entries, and runs gpg on a file whose name
//     ends in .gpg (the name comes from $NETRC).
//   - github.com/bgentry/go-netrc (no release, last change in 2014) also
//     reads a macdef body's lines as machine entries, and makes a bare
//     "machine" keyword a default entry, whose login then goes to every
//     host.
func parseNetrc(b []byte) []netrcEntry {
	var out []netrcEntry
	var cur *netrcEntry
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxNetrcSize)
	inMacro := false
	for sc.Scan() {
		line := sc.Text()
		if inMacro {
			if strings.TrimSpace(line) == "" {
				inMacro = false
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		fields := strings.Fields(line)
		for i := 0; i < len(fields); i++ {
			next := func() string {
				if i+1 < len(fields) {
					i++
					return fields[i]
				}
				return ""
			}
			switch fields[i] {
			case "machine":
				flush()
				cur = &netrcEntry{machine: next()}
			case "default":
				flush()
				cur = &netrcEntry{isDefault: true}
			case "login":
				if cur != nil {
					cur.login = next()
				}
			case "password":
				if cur != nil {
					cur.password = next()
				}
			case "account":
				next()
			case "macdef":
				flush()
				inMacro = true
				i = len(fields)
			}
		}
	}
	flush()
	return out
}
