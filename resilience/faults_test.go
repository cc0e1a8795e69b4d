package resilience

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/internal/testing/faultproxy"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// fixture is an add-on pushed to a real registry, the source of every
// fault case.
type fixture struct {
	reg      *testregistry.Registry
	seedHome string            // store holding fx:1, the source of pushes
	tree     map[string][]byte // the add-on's files
	digest   string            // manifest digest
	layer    string            // digest of the one layer (about 1 MiB)
	manifest []byte
}

// payloadSize makes the layer big enough that a cut lands mid-blob and
// small enough that a hundred transfers take seconds.
const payloadSize = 1 << 20

func newFixture(t *testing.T) *fixture {
	t.Helper()
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.Plain})
	fx := &fixture{reg: reg, seedHome: filepath.Join(t.TempDir(), "store")}
	src := filepath.Join(t.TempDir(), "fx")
	fx.tree = writeAddon(t, src, "fx", 1, payloadSize)
	r := mustCLI(t, fx.seedHome, "build", src, "--name", "fx", "-t", "fx:1")
	fx.digest = digestOut(r.stdout)
	mustCLI(t, fx.seedHome, "push", "-q", "fx:1", reg.Host+"/src/fx:1")
	h, err := v1.NewHash(fx.digest)
	if err != nil {
		t.Fatal(err)
	}
	if fx.manifest, err = os.ReadFile(filepath.Join(fx.seedHome, "blobs", "sha256", h.Hex)); err != nil {
		t.Fatal(err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(fx.manifest, &m); err != nil || len(m.Layers) != 1 {
		t.Fatalf("fixture manifest: %v %s", err, fx.manifest)
	}
	fx.layer = m.Layers[0].Digest.String()
	return fx
}

type op string

const (
	opPush   op = "push"
	opPull   op = "pull"
	opCopy   op = "copy"   // registry to oci-archive
	opUnpack op = "unpack" // registry to -o DIR
)

type expect int

const (
	// mustSucceed: a transient fault that a client with retries survives.
	mustSucceed expect = iota
	// mustFail: a persistent fault or wrong bytes: exit 1, one line.
	mustFail
	// either: a clean failure and a verified success are both correct.
	either
)

func (e expect) String() string {
	return [...]string{"must succeed", "must fail", "either"}[e]
}

type faultCase struct {
	name   string
	op     op
	fault  faultproxy.Fault
	expect expect
	// byDigest references the image by digest instead of by tag.
	byDigest bool
	// why explains an expectation that is not obvious.
	why string
	// tagMayBeWrong: an active man in the middle on every manifest PUT
	// sets the registry's tag; a failure must say so, nothing more.
	tagMayBeWrong bool
}

func seedOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func faultName(f faultproxy.Fault) string {
	a := f.Action.String()
	if f.Action == faultproxy.Status {
		a = fmt.Sprint(f.Code)
	}
	when := "once"
	if f.Times == 0 {
		when = "always"
	}
	return fmt.Sprintf("%s-%s-%s", a, f.Kinds, when)
}

// faultCases is the matrix: for each operation, the request kinds it makes
// and every fault, once (a retry must get through) and always.
func faultCases(fx *fixture) []faultCase {
	var cases []faultCase
	add := func(o op, f faultproxy.Fault, e expect, why string) {
		cases = append(cases, faultCase{name: string(o) + "/" + faultName(f), op: o, fault: f, expect: e, why: why})
	}
	status := func(code int) faultproxy.Fault { return faultproxy.Fault{Action: faultproxy.Status, Code: code} }
	act := func(a faultproxy.Action) faultproxy.Fault { return faultproxy.Fault{Action: a} }
	aim := func(f faultproxy.Fault, kinds faultproxy.Kind, times int) faultproxy.Fault {
		f.Kinds, f.Times = kinds, times
		if kinds == faultproxy.BlobGet {
			f.PathContains = fx.layer // the 1 MiB layer, not the config
		}
		return f
	}
	for _, o := range []op{opPull, opCopy, opUnpack} {
		for _, k := range []faultproxy.Kind{faultproxy.ManifestGet, faultproxy.BlobGet} {
			for _, f := range []faultproxy.Fault{status(500), status(503), status(429), act(faultproxy.Drop), act(faultproxy.Truncate)} {
				add(o, aim(f, k, 1), mustSucceed, "transient: one retry gets the right bytes")
			}
			for _, f := range []faultproxy.Fault{status(503), act(faultproxy.Truncate), act(faultproxy.Corrupt), act(faultproxy.WrongLength)} {
				e, why := mustFail, "persistent"
				if f.Action == faultproxy.WrongLength && k == faultproxy.BlobGet {
					// The whole blob under a Content-Length that claims more:
					// read to the descriptor's size and verified against its
					// digest, the bytes are right, so succeeding is right too.
					e, why = either, "the whole blob, verified, under a Content-Length that claims more"
				}
				add(o, aim(f, k, 0), e, why)
			}
			// A body that keeps breaking off after some bytes is resumed
			// where it stopped (Range), so it can still arrive whole.
			add(o, aim(act(faultproxy.Drop), k, 0), either, "persistent drops: resuming may get every byte")
			for _, f := range []faultproxy.Fault{act(faultproxy.Corrupt), act(faultproxy.WrongLength)} {
				add(o, aim(f, k, 1), either, "wrong bytes once: failing is right, so is succeeding after a retry")
			}
		}
		// A manifest whose bytes changed but still parse, pulled by tag:
		// the registry's Docker-Content-Digest header still names the
		// right manifest. Flip a bit of the title annotation ("fx" -> "gx").
		title := strings.LastIndex(string(fx.manifest), `image.title":"fx"`) + len(`image.title":"`)
		f := faultproxy.Fault{Action: faultproxy.Corrupt, Kinds: faultproxy.ManifestGet, Bytes: int64(title)}
		cases = append(cases, faultCase{
			name: string(o) + "/corrupt-manifest-title-by-tag", op: o, fault: f, expect: mustFail,
			why: "the body no longer matches the registry's Docker-Content-Digest: storing it under the tag is a silent substitution",
		}, faultCase{
			name: string(o) + "/corrupt-manifest-title-by-digest", op: o, fault: f, expect: mustFail, byDigest: true,
			why: "pulled by digest, the bytes must hash to it",
		})
	}
	for _, k := range []faultproxy.Kind{faultproxy.BlobUpload, faultproxy.ManifestPut} {
		for _, f := range []faultproxy.Fault{status(500), status(503), status(429), act(faultproxy.Drop)} {
			add(opPush, aim(f, k, 1), mustSucceed, "transient: one retry gets through")
		}
		for _, f := range []faultproxy.Fault{status(503), act(faultproxy.Drop), act(faultproxy.Corrupt)} {
			c := faultCase{name: string(opPush) + "/" + faultName(aim(f, k, 0)), op: opPush, fault: aim(f, k, 0), expect: mustFail, why: "persistent"}
			if k == faultproxy.ManifestPut && f.Action == faultproxy.Corrupt {
				// A proxy that rewrites every manifest PUT decides what the
				// tag names; the client can only notice and fail loudly.
				c.tagMayBeWrong = true
			}
			cases = append(cases, c)
		}
		for _, f := range []faultproxy.Fault{act(faultproxy.Corrupt), act(faultproxy.Truncate)} {
			add(opPush, aim(f, k, 1), either, "the registry gets wrong bytes once")
		}
	}
	// A slow registry, well under the 60 s timeout: nothing to retry.
	for _, o := range []op{opPull, opPush} {
		k := faultproxy.ManifestGet
		if o == opPush {
			k = faultproxy.ManifestPut
		}
		add(o, faultproxy.Fault{Action: faultproxy.Stall, Kinds: k, Times: 1, Stall: 1500 * time.Millisecond}, mustSucceed, "slow, not dead")
	}
	return cases
}

// outcome is one case's result, for the summary.
type outcome struct {
	name, result, detail string
	fired                int
	dur                  time.Duration
}

// TestFaults runs every operation of the CLI through the fault proxy and
// checks that it either succeeds with the right digest or fails cleanly
// (exit 1, one stderr line) leaving nothing half-written.
func TestFaults(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	cases := faultCases(fx)
	// The persistent status faults wait out every retry: start them first.
	slices.SortStableFunc(cases, func(a, b faultCase) int {
		la := a.fault.Times == 0 && a.fault.Action == faultproxy.Status
		lb := b.fault.Times == 0 && b.fault.Action == faultproxy.Status
		switch {
		case la && !lb:
			return -1
		case lb && !la:
			return 1
		}
		return 0
	})
	var (
		mu       sync.Mutex
		outcomes []outcome
	)
	t.Run("matrix", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				o := fx.runCase(t, i, c)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			})
		}
	})
	var b strings.Builder
	for _, o := range outcomes {
		fmt.Fprintf(&b, "%-52s %-8s fired %d  %6v  %s\n", o.name, o.result, o.fired, o.dur.Round(10*time.Millisecond), o.detail)
	}
	t.Logf("%d fault cases:\n%s", len(outcomes), b.String())
}

func (fx *fixture) runCase(t *testing.T, i int, c faultCase) outcome {
	p, err := faultproxy.New(fx.reg.URL, faultproxy.Config{
		Seed: seedOf(c.name), Faults: []faultproxy.Fault{c.fault}, MaxStall: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	work := t.TempDir()
	home := filepath.Join(work, "store")
	out := filepath.Join(work, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	ref := p.Host + "/src/fx:1"
	if c.byDigest {
		ref = p.Host + "/src/fx@" + fx.digest
	}
	pushRepo := fmt.Sprintf("push/case%d/fx", i)
	var r result
	switch c.op {
	case opPull:
		r = cli(t, home, "pull", "-q", ref)
	case opCopy:
		r = cli(t, home, "copy", "-q", ref, "oci-archive:"+filepath.Join(out, "fx.tar"))
	case opUnpack:
		r = cli(t, home, "unpack", ref, "-o", filepath.Join(out, "tree"), "--json")
	case opPush:
		r = cli(t, fx.seedHome, "push", "-q", "fx:1", p.Host+"/"+pushRepo+":1")
	}
	o := outcome{name: c.name, fired: p.Fired(0), dur: r.dur}
	if o.fired == 0 {
		t.Errorf("the fault never fired: the case proves nothing (requests: %+v)", p.Events())
	}
	if c.fault.Times == 0 && c.fault.Action == faultproxy.Status {
		// Retries: 4 (pkg/registry) means at most 5 tries of each request;
		// a push tries each of its two blobs.
		limit := 5
		if c.fault.Kinds == faultproxy.BlobUpload {
			limit = 10
		}
		if o.fired > limit {
			t.Errorf("%s: a persistent %d was answered to %d requests in %v, want at most %d (4 retries per request)",
				findingRetryAmplification, c.fault.Code, o.fired, r.dur.Round(100*time.Millisecond), limit)
		}
	}
	if r.code == 0 {
		o.result = "ok"
		if err := fx.checkSuccess(c, r, home, out, pushRepo); err != nil {
			o.result, o.detail = "BAD-OK", err.Error()
			t.Errorf("%ssucceeded with the wrong result (%s; expected: %s): %v\n%v", findingFor(c, true), c.why, c.expect, err, r)
		} else if c.expect == mustFail {
			o.result, o.detail = "BAD-OK", "succeeded"
			t.Errorf("succeeded, want a failure (%s)\n%v", c.why, r)
		}
		return o
	}
	o.result, o.detail = "failed", strings.TrimSpace(r.stderr)
	if err := oneErrorLine(r); err != nil {
		t.Errorf("failure is not one clear line: %v\n%v", err, r)
	}
	if err := fx.checkCleanFailure(c, home, out, pushRepo); err != nil && !(c.tagMayBeWrong && strings.Contains(r.stderr, "changing in transit")) {
		o.result = "DIRTY"
		t.Errorf("half-written state after a failure: %v\n%v", err, r)
	}
	if c.expect == mustSucceed {
		o.result = "BAD-FAIL"
		t.Errorf("%sa transient fault (%s) was not survived: %v", findingFor(c, false), c.why, r)
	}
	return o
}

// The findings the matrix exposes, named in failure messages so that a
// failing case points at its cause.
const (
	findingBodyRetry = "FINDING body-retry: a response body that breaks off (dropped connection, short body) " +
		"is never fetched again: go-containerregistry retries only failed round trips and status codes, " +
		"and pkg/source, pkg/layout and pkg/unpack add no retry around manifest and blob reads"
	findingTagDigest = "FINDING tag-digest: a manifest pulled by tag is not checked against the registry's " +
		"Docker-Content-Digest header (or resolved with HEAD and fetched by digest), so altered bytes that still parse are kept under the tag"
	findingPushDigest = "FINDING push-digest: push does not check the digest the registry answers to the manifest PUT " +
		"(Docker-Content-Digest) or the tag afterwards, so it reports REPO@<local digest> while the tag names other bytes"
	findingRetryAmplification = "FINDING retry-amplification: pkg/registry's retryAfterTransport (Retry-After) " +
		"sits under go-containerregistry's retry transport, so each of ggcr's tries makes up to Retries+1 requests of its own"
)

func findingFor(c faultCase, succeeded bool) string {
	switch {
	case succeeded && c.op == opPush:
		return findingPushDigest + ": "
	case succeeded:
		return findingTagDigest + ": "
	case c.fault.Action == faultproxy.Drop || c.fault.Action == faultproxy.Truncate:
		return findingBodyRetry + ": "
	}
	return ""
}

// checkSuccess checks that a successful run produced exactly the image.
func (fx *fixture) checkSuccess(c faultCase, r result, home, out, pushRepo string) error {
	switch c.op {
	case opPull:
		if got := digestOut(r.stdout); got != fx.digest {
			return fmt.Errorf("printed digest %q, want %s", got, fx.digest)
		}
		rep, err := verifyStore(home)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if len(rep.Tags) != 1 {
			return fmt.Errorf("store tags %v, want one", rep.Tags)
		}
		for n, d := range rep.Tags {
			if d.String() != fx.digest {
				return fmt.Errorf("store tag %s is %s, want %s", n, d, fx.digest)
			}
		}
		if tmp := tempFiles(home); len(tmp) > 0 {
			return fmt.Errorf("temp files left: %v", tmp)
		}
	case opCopy:
		if got := dirEntries(out); len(got) != 1 || got[0] != "fx.tar" {
			return fmt.Errorf("output directory holds %v, want [fx.tar]", got)
		}
		dir, err := untar(filepath.Join(out, "fx.tar"), filepath.Join(filepath.Dir(out), "untar"))
		if err != nil {
			return err
		}
		rep, err := verifyStore(dir)
		if err != nil {
			return fmt.Errorf("oci-archive: %w", err)
		}
		if rep.Entries != 1 || !rep.Reachable[strings.TrimPrefix(fx.digest, "sha256:")] {
			return fmt.Errorf("oci-archive does not hold exactly %s", fx.digest)
		}
	case opUnpack:
		var meta struct {
			Digest string `json:"digest"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &meta); err != nil || meta.Digest != fx.digest {
			return fmt.Errorf("--json digest %q (%v), want %s", meta.Digest, err, fx.digest)
		}
		got, err := readTree(filepath.Join(out, "tree"))
		if err != nil {
			return err
		}
		if err := sameTree(got, fx.tree); err != nil {
			return fmt.Errorf("unpacked tree: %w", err)
		}
		if e := dirEntries(out); len(e) != 1 {
			return fmt.Errorf("output parent holds %v, want [tree]", e)
		}
	case opPush:
		if got := digestOut(r.stdout); got != fx.digest {
			return fmt.Errorf("printed digest %q, want %s", got, fx.digest)
		}
		return fx.checkRegistry(pushRepo+":1", true)
	}
	return nil
}

// checkCleanFailure checks that a failed run left nothing behind.
func (fx *fixture) checkCleanFailure(c faultCase, home, out, pushRepo string) error {
	if c.op == opPush {
		return fx.checkRegistry(pushRepo+":1", false)
	}
	if e := dirEntries(out); len(e) != 0 {
		return fmt.Errorf("output directory holds %v after a failure", e)
	}
	if _, err := os.Stat(home); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	rep, err := verifyStore(home)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if rep.Entries != 0 {
		return fmt.Errorf("store index.json has %d entries (tags %v) after a failed %s", rep.Entries, rep.Tags, c.op)
	}
	if tmp := tempFiles(home); len(tmp) > 0 {
		return fmt.Errorf("temp files left: %v", tmp)
	}
	return nil
}

// checkRegistry looks at the registry directly, not through the proxy:
// after a successful push the tag must name the image and every blob must
// verify; after a failed one the tag must be absent or name the image.
func (fx *fixture) checkRegistry(repoTag string, want bool) error {
	ref, err := name.ParseReference(fx.reg.Host + "/" + repoTag)
	if err != nil {
		return err
	}
	opts := []remote.Option{remote.WithTransport(fx.reg.Transport()), remote.WithAuth(authn.Anonymous)}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		if !want && (strings.Contains(err.Error(), "MANIFEST_UNKNOWN") || strings.Contains(err.Error(), "NAME_UNKNOWN")) {
			return nil
		}
		if !want {
			return fmt.Errorf("registry: %w", err)
		}
		return fmt.Errorf("registry does not have %s: %w", repoTag, err)
	}
	if desc.Digest.String() != fx.digest {
		return fmt.Errorf("registry tag %s names %s, want %s", repoTag, desc.Digest, fx.digest)
	}
	// Every blob, read back and hashed here.
	m, err := v1.ParseManifest(strings.NewReader(string(desc.Manifest)))
	if err != nil {
		return err
	}
	repo := ref.Context()
	for _, d := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		l, err := remote.Layer(repo.Digest(d.Digest.String()), opts...)
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		h, n, err := v1.SHA256(rc)
		rc.Close()
		if err != nil || h != d.Digest || n != d.Size {
			return fmt.Errorf("registry blob %s: %d bytes hashing to %s (%v)", d.Digest, n, h, err)
		}
	}
	return nil
}

// untar extracts an oci-archive into dir.
func untar(file, dir string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir, nil
		}
		if err != nil {
			return "", fmt.Errorf("oci-archive: %w", err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return "", fmt.Errorf("oci-archive entry %q leaves the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return "", err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", err
			}
			w, err := os.Create(p)
			if err != nil {
				return "", err
			}
			_, err = io.Copy(w, tr)
			w.Close()
			if err != nil {
				return "", err
			}
		default:
			return "", fmt.Errorf("oci-archive entry %q has type %c", h.Name, h.Typeflag)
		}
	}
}

// TestStallThroughLibrary covers the stall the CLI cannot: addonpkg has no
// flag or variable that shortens its 60 s response-header timeout, so a
// registry that never answers is tested through pkg/transfer with
// registry.Options{Timeout: 2s}.
func TestStallThroughLibrary(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	const timeout = 2 * time.Second
	cases := []struct {
		name   string
		fault  faultproxy.Fault
		expect expect
		// within bounds how long the copy may take.
		within time.Duration
	}{
		{"stall-manifest-get-once", faultproxy.Fault{Action: faultproxy.Stall, Kinds: faultproxy.ManifestGet, Times: 1}, either, 15 * time.Second},
		{"stall-blob-get-once", faultproxy.Fault{Action: faultproxy.Stall, Kinds: faultproxy.BlobGet, PathContains: fx.layer, Times: 1}, either, 15 * time.Second},
		{"stall-manifest-get-always", faultproxy.Fault{Action: faultproxy.Stall, Kinds: faultproxy.ManifestGet}, mustFail, 30 * time.Second},
		{"stall-blob-get-always", faultproxy.Fault{Action: faultproxy.Stall, Kinds: faultproxy.BlobGet, PathContains: fx.layer}, mustFail, 30 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := faultproxy.New(fx.reg.URL, faultproxy.Config{Seed: seedOf(c.name), Faults: []faultproxy.Fault{c.fault}, MaxStall: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			dir := filepath.Join(t.TempDir(), "store")
			st, err := layout.Init(dir)
			if err != nil {
				t.Fatal(err)
			}
			src := source.Ref{Kind: source.KindRegistry, Name: p.Host + "/src/fx:1"}
			dst := source.Ref{Kind: source.KindStore, Name: "fx:1"}
			opts := transfer.Options{Options: source.Options{Store: st, Pull: source.PullNever,
				Registry: registry.Options{Timeout: timeout, Keychain: authn.NewMultiKeychain()}}}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			t0 := time.Now()
			res, err := transfer.Copy(ctx, src, dst, opts)
			d := time.Since(t0)
			t.Logf("%s: %v after %v (fired %d)", c.name, errOr(err, "ok"), d.Round(time.Millisecond), p.Fired(0))
			if p.Fired(0) == 0 {
				t.Error("the stall never fired")
			}
			if d > c.within {
				t.Errorf("took %v, want at most %v with a %v timeout", d, c.within, timeout)
			}
			rep, verr := verifyStore(dir)
			switch {
			case verr != nil:
				t.Errorf("store: %v", verr)
			case err == nil && (res.Digest != fx.digest || rep.Tags["fx:1"].String() != fx.digest):
				t.Errorf("copied %s, store has %v, want %s", res.Digest, rep.Tags, fx.digest)
			case err != nil && rep.Entries != 0:
				t.Errorf("failed copy left %d index entries", rep.Entries)
			}
			if tmp := tempFiles(dir); len(tmp) > 0 {
				t.Errorf("temp files left: %v", tmp)
			}
			if err == nil && c.expect == mustFail {
				t.Error("a registry that never answers did not fail the copy")
			}
			if err != nil && c.fault.Times == 1 {
				t.Logf("FINDING header-timeout-retry: one response that misses the %v header timeout fails the copy: "+
					"net/http's timeout error matches context.DeadlineExceeded, which go-containerregistry never retries", timeout)
			}
			if err != nil && c.expect == mustSucceed {
				t.Errorf("not survived: %v", err)
			}
		})
	}
}

// TestStallMidBody shows what a registry that sends its headers and then
// hangs does to a pull: the header timeout does not cover the body.
func TestStallMidBody(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	const stall = 6 * time.Second
	p, err := faultproxy.New(fx.reg.URL, faultproxy.Config{MaxStall: stall, Faults: []faultproxy.Fault{
		{Action: faultproxy.Stall, Kinds: faultproxy.BlobGet, PathContains: fx.layer, Bytes: 4096, Times: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := transfer.Options{Options: source.Options{Store: st, Pull: source.PullNever,
		Registry: registry.Options{Timeout: time.Second, Keychain: authn.NewMultiKeychain()}}}
	t0 := time.Now()
	_, err = transfer.Copy(context.Background(), source.Ref{Kind: source.KindRegistry, Name: p.Host + "/src/fx:1"},
		source.Ref{Kind: source.KindStore, Name: "fx:1"}, opts)
	d := time.Since(t0)
	t.Logf("mid-body stall of %v with Timeout 1s: %v after %v", stall, errOr(err, "ok"), d.Round(time.Millisecond))
	if d >= stall {
		t.Logf("FINDING: registry.Options.Timeout bounds only the wait for response headers; a body that stops "+
			"flowing blocks the transfer until the server gives up (here the proxy, after %v; a real hung server: forever)", stall)
	}
	if _, verr := verifyStore(dir); verr != nil {
		t.Errorf("store: %v", verr)
	}
}

func errOr(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

// TestRegistryFixtureDirect guards the fixture itself: without faults,
// every operation succeeds through the proxy.
func TestRegistryFixtureDirect(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	p, err := faultproxy.New(fx.reg.URL, faultproxy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	home := filepath.Join(t.TempDir(), "store")
	r := mustCLI(t, home, "pull", "-q", p.Host+"/src/fx:1")
	if digestOut(r.stdout) != fx.digest {
		t.Fatalf("pull through the proxy: %v", r)
	}
	mustCLI(t, fx.seedHome, "push", "-q", "fx:1", p.Host+"/direct/fx:1")
	if err := fx.checkRegistry("direct/fx:1", true); err != nil {
		t.Fatal(err)
	}
	if n := p.Count(faultproxy.BlobUpload); n == 0 {
		t.Errorf("the push made no upload requests through the proxy: %+v", p.Events())
	}
	resp, err := http.Get(p.URL + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
