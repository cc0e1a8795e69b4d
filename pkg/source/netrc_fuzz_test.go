package source

import (
	"slices"
	"strings"
	"testing"
)

var netrcKeywords = []string{"machine", "default", "login", "password", "account", "macdef"}

// netrcToken reports whether s can be written as one netrc token.
func netrcToken(s string) bool {
	f := strings.Fields(s)
	return len(f) == 1 && f[0] == s && !slices.Contains(netrcKeywords, s)
}

// FuzzNetrc: parseNetrc never panics, its entries hold single tokens, and
// an entry appended after any input (past a blank line, which ends a
// macro) is read back exactly. The seed corpus is in testdata/fuzz/FuzzNetrc.
// Run: go test ./pkg/source -run '^$' -fuzz FuzzNetrc
func FuzzNetrc(f *testing.F) {
	for _, s := range []string{
		"machine example.com login alice password s3cret\n",
		"machine a login x\npassword y\nmachine b login z password w account q\ndefault login anon password guest\n",
		"# comment\n  machine example.com\n  login alice\n  password s3cret\n",
		"macdef init\ncd /pub\nmachine evil login x password y\n\nmachine ok login u password p\n",
		"machine\n", "login", "password p machine m login l", "default", "\x00\xff machine \t m",
	} {
		f.Add([]byte(s), "example.com", "alice", "s3cret")
	}
	f.Fuzz(func(t *testing.T, data []byte, host, login, pass string) {
		entries := parseNetrc(data)
		for _, e := range entries {
			for _, v := range []string{e.machine, e.login, e.password} {
				if v != "" && strings.ContainsAny(v, " \t\r\n") {
					t.Fatalf("entry %+v holds whitespace", e)
				}
			}
			if e.isDefault && e.machine != "" {
				t.Fatalf("default entry with a machine: %+v", e)
			}
		}
		if !netrcToken(host) || !netrcToken(login) || !netrcToken(pass) {
			return
		}
		more := string(data) + "\n\nmachine " + host + " login " + login + " password " + pass + "\n"
		all := parseNetrc([]byte(more))
		if len(all) == 0 {
			t.Fatalf("the appended entry was not read: %q", more)
		}
		want := netrcEntry{machine: host, login: login, password: pass}
		if last := all[len(all)-1]; last != want {
			t.Fatalf("last entry %+v, want %+v (input %q)", last, want, more)
		}
	})
}
