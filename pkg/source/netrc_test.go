package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// netrcLookup reads what a netrc file gives a host, and nothing from the
// places the netrc libraries misread (see parseNetrc).
func TestNetrcLookup(t *testing.T) {
	type want struct {
		login, password string
		ok              bool
	}
	for _, c := range []struct {
		name, netrc, host string
		want              want
	}{
		{"one line", "machine example.com login alice password s3cret\n", "example.com", want{"alice", "s3cret", true}},
		{"over lines, with comments",
			"# mine\nmachine example.com\n  login alice\n  password s3cret\n",
			"example.com", want{"alice", "s3cret", true}},
		{"second machine", "machine a login x password y\nmachine b login z password w account q\n", "b", want{"z", "w", true}},
		{"default for other hosts", "machine a login x password y\ndefault login anon password guest\n", "other", want{"anon", "guest", true}},
		{"a machine wins over an earlier default", "default login anon password guest\nmachine a login x password y\n", "a", want{"x", "y", true}},
		{"no entry, no default", "machine a login x password y\n", "other", want{}},
		{"macdef body is no entry", "macdef init\ncd /pub\nmachine evil login x password y\n\nmachine ok login u password p\n", "evil", want{}},
		{"entry after a macdef body", "macdef init\ncd /pub\nmachine evil login x password y\n\nmachine ok login u password p\n", "ok", want{"u", "p", true}},
		{"bare machine at the end", "machine a login x password y\nmachine\n", "other", want{}},
		{"bare machine gives no default", "machine\nlogin x password y\n", "other", want{}},
		{"machine without login", "machine a password y\n", "a", want{}},
		{"CRLF line ends", "machine a\r\nlogin x\r\npassword y\r\n", "a", want{"x", "y", true}},
		{"not text", "\x00\xff machine \t m", "m", want{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "netrc")
			if err := os.WriteFile(file, []byte(c.netrc), 0o600); err != nil {
				t.Fatal(err)
			}
			login, password, ok := netrcLookup(file, c.host)
			if got := (want{login, password, ok}); got != c.want {
				t.Errorf("netrcLookup(%q) = %+v, want %+v", c.host, got, c.want)
			}
		})
	}
}

// A netrc file over maxNetrcSize, a directory, a missing file or no file
// at all give nothing.
func TestNetrcLookupRefuses(t *testing.T) {
	dir := t.TempDir()
	entry := "machine a login x password y\n"
	big := filepath.Join(dir, "big")
	pad := strings.Repeat("#\n", maxNetrcSize/2)
	if err := os.WriteFile(big, []byte(entry+pad), 0o600); err != nil {
		t.Fatal(err)
	}
	fits := filepath.Join(dir, "fits")
	if err := os.WriteFile(fits, []byte(entry+pad[:maxNetrcSize-len(entry)]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := netrcLookup(fits, "a"); !ok {
		t.Fatalf("a netrc file of exactly %d bytes was not read", maxNetrcSize)
	}
	for _, file := range []string{big, dir, filepath.Join(dir, "missing"), ""} {
		if l, p, ok := netrcLookup(file, "a"); ok {
			t.Errorf("netrcLookup(%q) = %q, %q, true; want nothing", file, l, p)
		}
	}
}
