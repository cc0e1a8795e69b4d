package imagelock_test

import (
	"testing"

	"github.com/addonpkg/addonpkg/pkg/imagelock"
)

// FuzzParse: a lock is read from registries and archives; Parse must never
// panic, and what it accepts encodes to a document it accepts again, equal.
func FuzzParse(f *testing.F) {
	f.Add([]byte(golden))
	f.Add([]byte(`{"mediaType":"application/vnd.cncf.addon.images.lock.v1+json","subject":"` + dA + `","images":[]}`))
	f.Add([]byte(`{"mediaType":"application/vnd.cncf.addon.images.lock.v1+json","subject":"` + dA + `","images":[{"image":"nginx","digest":"` + dB + `","mirrored":"library/nginx@` + dB + `"}]}`))
	f.Add([]byte(`{"images":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := imagelock.Parse(b)
		if err != nil {
			return
		}
		enc, err := l.Encode()
		if err != nil {
			t.Fatalf("accepted lock does not encode: %v", err)
		}
		again, err := imagelock.Parse(enc)
		if err != nil {
			t.Fatalf("encoded lock does not parse: %v\n%s", err, enc)
		}
		enc2, err := again.Encode()
		if err != nil || string(enc2) != string(enc) {
			t.Fatalf("encoding is not stable:\n%s\n%s", enc, enc2)
		}
	})
}
