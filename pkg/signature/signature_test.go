package signature_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/random"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/signature"
	"github.com/addonpkg/addonpkg/pkg/source"
)

type keyPair struct {
	signer  sigsig.SignerVerifier
	public  signature.Key
	private []byte // PEM, encrypted with "pw-" + label
}

// keyPairs caches the test's key pairs: cosign's key encryption (scrypt)
// takes seconds on a busy machine.
var (
	keyPairsMu sync.Mutex
	keyPairs   = map[string]keyPair{}
)

func newKeyPair(t *testing.T, label string) keyPair {
	t.Helper()
	keyPairsMu.Lock()
	defer keyPairsMu.Unlock()
	if kp, ok := keyPairs[label]; ok {
		return kp
	}
	password := []byte("pw-" + label)
	priv, pub, err := signature.GenerateKeyPair(password)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(priv), "ENCRYPTED SIGSTORE PRIVATE KEY") {
		t.Fatalf("private key is not in cosign's encrypted format:\n%s", priv)
	}
	signer, err := signature.LoadPrivateKey(label+".key", priv, password)
	if err != nil {
		t.Fatal(err)
	}
	k, err := signature.LoadPublicKey(label+".pub", pub)
	if err != nil {
		t.Fatal(err)
	}
	keyPairs[label] = keyPair{signer: signer, public: k, private: priv}
	return keyPairs[label]
}

func TestLoadPrivateKeyWrongPassword(t *testing.T) {
	priv := newKeyPair(t, "good").private
	_, err := signature.LoadPrivateKey("cosign.key", priv, []byte("wrong"))
	if !errors.Is(err, signature.ErrBadKey) {
		t.Fatalf("err = %v, want ErrBadKey", err)
	}
	if _, err := signature.LoadPublicKey("cosign.pub", []byte("not a key")); !errors.Is(err, signature.ErrBadKey) {
		t.Fatalf("bad public key: err = %v, want ErrBadKey", err)
	}
}

// TestPayloadFormat pins the payload to the bytes cosign signs.
func TestPayloadFormat(t *testing.T) {
	d := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0f", 32)}
	got, err := signature.Payload(d, "registry.example/addons/coredns", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"critical":{"identity":{"docker-reference":"registry.example/addons/coredns"},"image":{"docker-manifest-digest":"sha256:` +
		strings.Repeat("0f", 32) + `"},"type":"cosign container image signature"},"optional":null}`
	if string(got) != want {
		t.Errorf("payload\n got %s\nwant %s", got, want)
	}
}

func locations(t *testing.T) map[string]referrers.Location {
	t.Helper()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://") + "/addons/demo")
	if err != nil {
		t.Fatal(err)
	}
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]referrers.Location{
		"registry": registryAt(t, repo),
		"layout":   referrers.Layout(st, ""),
	}
}

func putImage(t *testing.T, loc referrers.Location, tag string) v1.Hash {
	t.Helper()
	img, err := random.Image(128, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := partial.Descriptor(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := loc.Write(context.Background(), &referrers.Manifest{Descriptor: *d, Image: img}, tag); err != nil {
		t.Fatal(err)
	}
	return d.Digest
}

func TestSignVerify(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	for locName, loc := range locations(t) {
		t.Run(locName, func(t *testing.T) {
			signed := putImage(t, loc, "signed")
			unsigned := putImage(t, loc, "unsigned")
			byOther := putImage(t, loc, "by-other")
			// A manifest changed after signing, with the old signature
			// copied to its tag: the payload names another digest.
			tampered := putImage(t, loc, "tampered")
			for _, s := range []struct {
				d      v1.Hash
				signer sigsig.Signer
			}{{signed, good.signer}, {signed, good.signer}, {byOther, other.signer}} {
				if _, err := signature.Sign(ctx, loc, s.d, s.signer, signature.SignOptions{Identity: "registry.example/addons/demo"}); err != nil {
					t.Fatal(err)
				}
			}
			sigDesc, err := loc.Resolve(ctx, signature.Tag(signed))
			if err != nil {
				t.Fatal(err)
			}
			sig, err := loc.Open(ctx, sigDesc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			if m, err := sig.Image.Manifest(); err != nil || len(m.Layers) != 2 {
				t.Fatalf("signing twice: want 2 signature layers, got %v (%v)", m, err)
			}
			if err := loc.Write(ctx, sig, signature.Tag(tampered)); err != nil {
				t.Fatal(err)
			}

			tests := []struct {
				name    string
				d       v1.Hash
				keys    []signature.Key
				wantKey string
				wantErr error
			}{
				{"signed", signed, []signature.Key{good.public}, "good.pub", nil},
				{"any key suffices", signed, []signature.Key{other.public, good.public}, "good.pub", nil},
				{"another key", signed, []signature.Key{other.public}, "", signature.ErrBadSignature},
				{"signed by another key", byOther, []signature.Key{good.public}, "", signature.ErrBadSignature},
				{"missing", unsigned, []signature.Key{good.public}, "", signature.ErrNoSignature},
				{"tampered", tampered, []signature.Key{good.public}, "", signature.ErrBadSignature},
				{"no key", signed, nil, "", signature.ErrBadKey},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					v := &signature.KeyVerifier{Keys: tt.keys}
					got, err := v.Verify(ctx, loc, tt.d)
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("err = %v, want %v", err, tt.wantErr)
					}
					if err != nil {
						t.Logf("%v", err)
						return
					}
					if got.Key != tt.wantKey || got.Digest != tt.d.String() || got.Identity != "registry.example/addons/demo" {
						t.Errorf("verified %+v, want key %s, digest %s", got, tt.wantKey, tt.d)
					}
				})
			}
		})
	}
}

// A KeyVerifier is the source.Verifier an installer sets once, though
// signature imports no source resolver (TestDependencyBudgets).
var _ source.Verifier = (*signature.KeyVerifier)(nil)

// TestSourceVerify checks source.Options.Verify: an unsigned add-on is
// not opened, a signed one is, and a folder is refused.
func TestSourceVerify(t *testing.T) {
	ctx := context.Background()
	kp := newKeyPair(t, "good")
	dir := t.TempDir()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	loc := referrers.Layout(st, "")
	signed := putImage(t, loc, "signed")
	putImage(t, loc, "unsigned")
	if _, err := signature.Sign(ctx, loc, signed, kp.signer, signature.SignOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := source.Options{Verify: &signature.KeyVerifier{Keys: []signature.Key{kp.public}}}
	a, err := source.Open(ctx, source.Ref{Kind: source.KindLayout, Path: dir, Name: "signed"}, opts)
	if err != nil {
		t.Fatalf("signed: %v", err)
	}
	a.Close()
	if _, err := source.Open(ctx, source.Ref{Kind: source.KindLayout, Path: dir, Name: "unsigned"}, opts); !errors.Is(err, signature.ErrNoSignature) {
		t.Errorf("unsigned: err = %v, want ErrNoSignature", err)
	}
	folder := filepath.Join(t.TempDir(), "addon")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := source.Resolve(ctx, folder, opts, unpackOptions()); !errors.Is(err, source.ErrNotVerifiable) {
		t.Errorf("folder: err = %v, want ErrNotVerifiable", err)
	}
}

// A registry reference whose manifest the local store holds (StoreFirst:
// built here and pushed, or pulled before it was signed) is read from
// the store, and its signature was looked for only beside the store's
// copy: an add-on signed at the registry was refused with "no
// signature" by unpack --verify-key REGISTRY/REPO@DIGEST, while verify,
// which reads the registry, accepted it. A signature at the registry
// signs the same digest; PullNever keeps the check to the store.
func TestSourceVerifyStoreCopySignedAtRegistry(t *testing.T) {
	ctx := context.Background()
	kp := newKeyPair(t, "good")
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://") + "/addons/demo")
	if err != nil {
		t.Fatal(err)
	}
	reg := registryAt(t, repo)
	d := putImage(t, reg, "1")
	if _, err := signature.Sign(ctx, reg, d, kp.signer, signature.SignOptions{}); err != nil {
		t.Fatal(err)
	}
	// The store holds the same manifest, unsigned.
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := reg.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := referrers.Layout(st, "").Write(ctx, m, "local"); err != nil {
		t.Fatal(err)
	}
	ref, err := source.Parse(repo.Name() + "@" + d.String())
	if err != nil {
		t.Fatal(err)
	}
	opts := source.Options{Store: st, StoreFirst: true, Verify: &signature.KeyVerifier{Keys: []signature.Key{kp.public}}}
	a, err := source.Open(ctx, ref, opts)
	if err != nil {
		t.Fatalf("the store's copy, signed at the registry: %v", err)
	}
	if a.Layout() != st {
		t.Errorf("read from %v, want the store's copy", a.Layout())
	}
	a.Close()
	opts.Pull = source.PullNever
	if _, err := source.Open(ctx, ref, opts); !errors.Is(err, signature.ErrNoSignature) {
		t.Errorf("PullNever: err = %v, want ErrNoSignature (the store's copy is unsigned)", err)
	}
}

// registryAt is the referrers Location of repo, reached with the
// default registry options.
func registryAt(t testing.TB, repo name.Repository) referrers.Location {
	t.Helper()
	loc, err := referrers.Registry(repo, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
