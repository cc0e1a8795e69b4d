package resilience

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/layout"
)

// crashSeed fixes the kill points, so a failing run can be replayed.
const crashSeed = 20260601

// killed is how one crash trial ended.
type killed struct {
	signaled bool // SIGKILL landed before the process exited
	code     int  // exit code when it was not killed
	stderr   string
	elapsed  time.Duration
}

// runAndKill starts the binary and sends SIGKILL after delay.
func runAndKill(t *testing.T, home string, delay time.Duration, args ...string) killed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := command(ctx, home, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-time.After(delay):
			_ = cmd.Process.Signal(syscall.SIGKILL)
		case <-done:
		}
	}()
	_ = cmd.Wait()
	close(done)
	k := killed{stderr: stderr.String(), elapsed: time.Since(t0)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		k.signaled = true
	} else {
		k.code = cmd.ProcessState.ExitCode()
	}
	return k
}

// crashStats counts what the kills hit, to show they landed mid-write.
type crashStats struct {
	trials, killed, finished, tempsLeft, tagged int
}

// TestCrashKill kills build, pull and tag with SIGKILL at random points
// (34 trials each, a fixed seed) and checks after each kill that the store
// opens, index.json is valid, every tag resolves to complete, verified
// blobs, no earlier tag was lost, and gc then leaves no temp files and no
// unreferenced blobs.
func TestCrashKill(t *testing.T) {
	t.Parallel()
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.Plain})
	work := t.TempDir()

	// A 3 MiB add-on in the registry: a pull takes long enough to be
	// killed in the middle of a blob.
	seedHome := filepath.Join(work, "seed")
	bigSrc := filepath.Join(work, "big")
	writeAddon(t, bigSrc, "big", 3, 3<<20)
	bigDigest := digestOut(mustCLI(t, seedHome, "build", bigSrc, "--name", "big", "-t", "big:1").stdout)
	bigRef := reg.Host + "/crash/big:1"
	mustCLI(t, seedHome, "push", "-q", "big:1", bigRef)

	for k, o := range []string{"build", "pull", "tag"} {
		t.Run(o, func(t *testing.T) {
			t.Parallel()
			crashTrials(t, o, uint64(k), bigRef, bigDigest)
		})
	}
}

// trialsPerOp times three operations is over the 100 kills asked for.
const trialsPerOp = 34

func crashTrials(t *testing.T, o string, stream uint64, bigRef, bigDigest string) {
	work := t.TempDir()
	store := filepath.Join(work, "store")
	baseSrc := filepath.Join(work, "base")
	writeAddon(t, baseSrc, "base", 2, 256<<10)
	baseDigest := digestOut(mustCLI(t, store, "build", baseSrc, "--name", "base", "-t", "base:1").stdout)
	rng := rand.New(rand.NewPCG(crashSeed, stream))

	trial := func(i int) (args []string, name, want string) {
		switch o {
		case "build":
			// Distinct content each time: every build writes new blobs.
			dir := filepath.Join(work, fmt.Sprintf("build-%d", i))
			writeAddon(t, dir, "crash", uint64(1000+i), 2<<20)
			name = fmt.Sprintf("crash:%d", i)
			return []string{"build", dir, "--name", "crash", "-t", name}, name, ""
		case "pull":
			// Start from none of the image's blobs, so the pull writes them all.
			if r := cli(t, store, "rm", bigRef); r.code == 0 {
				mustCLI(t, store, "gc")
			}
			return []string{"pull", "-q", bigRef}, bigRef, bigDigest
		default:
			name = fmt.Sprintf("tagged:%d", i)
			return []string{"tag", "base:1", name}, name, baseDigest
		}
	}

	// Calibrate: how long the operation runs unharmed here (the median of
	// three runs, then of the trials that finish before their kill), so
	// that the kill points spread over the whole run, at least 50 ms.
	var samples []time.Duration
	for range 3 {
		args, name, _ := trial(-1)
		t0 := time.Now()
		mustCLI(t, store, args...)
		samples = append(samples, time.Since(t0))
		mustCLI(t, store, "rm", name)
		mustCLI(t, store, "gc")
	}
	estimate := func() time.Duration {
		last := slices.Clone(samples[max(0, len(samples)-7):])
		slices.Sort(last)
		return max(50*time.Millisecond, last[len(last)/2])
	}
	calibrated := estimate()

	var st crashStats
	tagged := map[string]string{"base:1": baseDigest} // tags every later kill must leave alone
	deadline := time.Now().Add(2 * time.Minute)
	for i := range trialsPerOp {
		if time.Now().After(deadline) {
			t.Errorf("over the time budget after %d of %d trials", i, trialsPerOp)
			break
		}
		args, name, want := trial(i)
		delete(tagged, name)
		// Every other kill anywhere from the start to a little past the
		// usual end, the others in the second half, where the writes are.
		f := rng.Float64()
		if i%2 == 0 {
			f *= 1.2
		} else {
			f = 0.5 + 0.7*f
		}
		delay := time.Duration(f * float64(estimate()))
		k := runAndKill(t, store, delay, args...)
		st.trials++
		if k.signaled {
			st.killed++
			if delay > estimate() {
				// Slower than estimated: the run lasts at least this long.
				samples = append(samples, delay)
			}
		} else {
			st.finished++
			samples = append(samples, k.elapsed)
			if k.code != 0 {
				t.Fatalf("trial %d: %s exited %d before the kill: %s", i, strings.Join(args, " "), k.code, k.stderr)
			}
		}
		if len(tempFiles(store)) > 0 {
			st.tempsLeft++
		}
		got := checkAfterCrash(t, store, fmt.Sprintf("trial %d (%s killed after %v)", i, o, delay))
		for n, w := range tagged {
			if got[n] != w {
				t.Fatalf("trial %d: tag %s is %q after a killed %s, want %s: an earlier tag was lost", i, n, got[n], o, w)
			}
		}
		dg, ok := got[name]
		switch {
		case ok:
			st.tagged++
			if want != "" && dg != want {
				t.Fatalf("trial %d: %s names %s, want %s", i, name, dg, want)
			}
			if o == "build" {
				// Keep the store small: this build's blobs go at the next gc.
				mustCLI(t, store, "rm", name)
			} else {
				tagged[name] = dg
			}
		case !k.signaled:
			t.Fatalf("trial %d: %s exited 0 but %s is not in the store", i, o, name)
		}
	}
	t.Logf("%s: unharmed run %v at first, %v at the end; %d trials: %d killed mid-run, %d finished first, %d left temp files for gc, %d ended tagged",
		o, calibrated.Round(time.Millisecond), estimate().Round(time.Millisecond), st.trials, st.killed, st.finished, st.tempsLeft, st.tagged)
	if st.killed == 0 {
		t.Errorf("no %s was killed mid-run: the kill window misses the operation", o)
	}
}

// checkAfterCrash is the recovery contract after a kill: the store opens,
// index.json is valid, every tag verifies, and gc leaves no temp files
// and no unreferenced blobs without touching a tag. It returns the tags.
func checkAfterCrash(t *testing.T, store, what string) map[string]string {
	t.Helper()
	if r := cli(t, store, "images", "--json"); r.code != 0 {
		t.Fatalf("%s: the store does not open: %v", what, r)
	} else {
		var rows []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatalf("%s: images --json: %v: %s", what, err, r.stdout)
		}
	}
	rep, err := verifyStore(store)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if r := cli(t, store, "gc"); r.code != 0 {
		t.Fatalf("%s: gc: %v", what, r)
	}
	if tmp := tempFiles(store); len(tmp) > 0 {
		t.Fatalf("%s: temp files after gc: %v", what, tmp)
	}
	after, err := verifyStore(store)
	if err != nil {
		t.Fatalf("%s: after gc: %v", what, err)
	}
	if u := unreferenced(store, after); len(u) > 0 {
		t.Fatalf("%s: unreferenced blobs after gc: %v", what, u)
	}
	tags := map[string]string{}
	for n, d := range after.Tags {
		tags[n] = d.String()
		if rep.Tags[n] != d {
			t.Fatalf("%s: gc changed tag %s from %s to %s", what, n, rep.Tags[n], d)
		}
	}
	if len(after.Tags) != len(rep.Tags) {
		t.Fatalf("%s: gc changed the tags: %v -> %v", what, rep.Tags, after.Tags)
	}
	return tags
}

// TestConcurrentWriters runs 8 processes at once against one store:
// builds of distinct add-ons, pulls of distinct images and tags. Every
// process must succeed and every expected tag must be there, verified.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.Plain})
	work := t.TempDir()
	seedHome := filepath.Join(work, "seed")
	const pulls, builds, tags = 3, 3, 2
	pullDigest := map[string]string{}
	for i := range pulls {
		src := filepath.Join(work, fmt.Sprintf("p%d", i))
		writeAddon(t, src, fmt.Sprintf("p%d", i), uint64(100+i), 512<<10)
		d := digestOut(mustCLI(t, seedHome, "build", src, "--name", fmt.Sprintf("p%d", i), "-t", fmt.Sprintf("p%d:1", i)).stdout)
		ref := fmt.Sprintf("%s/conc/p%d:1", reg.Host, i)
		mustCLI(t, seedHome, "push", "-q", fmt.Sprintf("p%d:1", i), ref)
		pullDigest[ref] = d
	}
	store := filepath.Join(work, "store")
	baseSrc := filepath.Join(work, "base")
	writeAddon(t, baseSrc, "base", 7, 64<<10)
	baseDigest := digestOut(mustCLI(t, store, "build", baseSrc, "--name", "base", "-t", "base:1").stdout)

	expected := map[string]string{"base:1": baseDigest}
	const rounds = 3
	for round := range rounds {
		type job struct {
			args []string
			tag  string
			want string // "" for builds: the digest they print
		}
		var jobs []job
		for i := range builds {
			src := filepath.Join(work, fmt.Sprintf("b%d-%d", round, i))
			writeAddon(t, src, fmt.Sprintf("b%d-%d", round, i), uint64(1000*round+i), 512<<10)
			tag := fmt.Sprintf("b%d-%d:1", round, i)
			jobs = append(jobs, job{args: []string{"build", src, "--name", "b", "-t", tag}, tag: tag})
		}
		for ref, d := range pullDigest {
			jobs = append(jobs, job{args: []string{"pull", "-q", ref}, tag: ref, want: d})
		}
		for i := range tags {
			tag := fmt.Sprintf("t%d-%d:1", round, i)
			jobs = append(jobs, job{args: []string{"tag", "base:1", tag}, tag: tag, want: baseDigest})
		}
		if len(jobs) != 8 {
			t.Fatalf("%d jobs, want 8", len(jobs))
		}
		results := make([]result, len(jobs))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = cli(t, store, j.args...)
			}()
		}
		close(start)
		wg.Wait()
		for i, j := range jobs {
			r := results[i]
			if r.code != 0 {
				t.Errorf("round %d: concurrent %v", round, r)
				continue
			}
			want := j.want
			if want == "" {
				want = digestOut(r.stdout)
			}
			expected[j.tag] = want
		}
		got := checkAfterCrash(t, store, fmt.Sprintf("round %d", round))
		for n, want := range expected {
			if got[n] != want {
				t.Errorf("round %d: tag %s is %q, want %s", round, n, got[n], want)
			}
		}
		var extra []string
		for n := range got {
			if _, ok := expected[n]; !ok {
				extra = append(extra, n)
			}
		}
		if len(extra) > 0 {
			t.Errorf("round %d: unexpected tags %v", round, extra)
		}
		// The next round pulls into an empty blob set again.
		var refs []string
		for ref := range pullDigest {
			refs = append(refs, ref)
			delete(expected, ref)
		}
		slices.Sort(refs)
		mustCLI(t, store, append([]string{"rm"}, refs...)...)
		mustCLI(t, store, "gc")
	}
}

// TestGCDuringTag runs gc in a loop while tags are written. gc holds the
// store's exclusive lock and sweeps .tmp-* files in the store root; tag
// rewrites index.json through such a temp file under the index lock only.
func TestGCDuringTag(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	store := filepath.Join(work, "store")
	src := filepath.Join(work, "base")
	writeAddon(t, src, "base", 9, 1024)
	baseDigest := digestOut(mustCLI(t, store, "build", src, "--name", "base", "-t", "base:1").stdout)

	stop := make(chan struct{})
	var (
		mu     sync.Mutex
		gcRuns int
		gcErr  []result
		wg     sync.WaitGroup
	)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := cli(t, store, "gc")
				mu.Lock()
				if r.code != 0 {
					gcErr = append(gcErr, r)
				}
				gcRuns++
				mu.Unlock()
			}
		}()
	}
	const n = 40
	var failed []string
	ok := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for i := range n {
		if time.Now().After(deadline) {
			break
		}
		name := fmt.Sprintf("g:%d", i)
		if r := cli(t, store, "tag", "base:1", name); r.code != 0 {
			failed = append(failed, strings.TrimSpace(r.stderr))
		} else {
			ok[name] = true
		}
	}
	close(stop)
	wg.Wait()
	if len(gcErr) > 0 {
		t.Errorf("gc failed %d times, first: %v", len(gcErr), gcErr[0])
	}
	if len(failed) > 0 {
		t.Errorf("FINDING: %d of %d tags failed while gc ran; first: %s\n"+
			"GC (pkg/layout/image.go) removes every .tmp-* in the store root under the gc lock only, while Tag/Untag "+
			"(pkg/layout/store.go updateIndex) write index.json through such a temp file under the index lock only", len(failed), n, failed[0])
	}
	rep, err := verifyStore(store)
	if err != nil {
		t.Fatal(err)
	}
	want := mustHash(t, baseDigest)
	if rep.Tags["base:1"] != want {
		t.Errorf("base:1 lost: %v", rep.Tags)
	}
	for name := range ok {
		if rep.Tags[name] != want {
			t.Errorf("tag %s succeeded but is %v in the store", name, rep.Tags[name])
		}
	}
	t.Logf("%d tags against %d concurrent gc runs", n, gcRuns)
}

func mustHash(t *testing.T, s string) v1.Hash {
	t.Helper()
	h, err := v1.NewHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestGCDuringTagLibrary is TestGCDuringTag in one process, through
// pkg/layout: thousands of rounds in a second make the race certain.
func TestGCDuringTagLibrary(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	src := filepath.Join(t.TempDir(), "base")
	writeAddon(t, src, "base", 9, 1024)
	mustCLI(t, store, "build", src, "--name", "base", "-t", "base:1")
	st, err := layout.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var gcErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := st.GC(); err != nil && gcErr == nil {
				gcErr = err
			}
		}
	}()
	var failed []error
	tags := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && tags < 2000; tags++ {
		if _, err := st.Tag("base:1", fmt.Sprintf("g:%d", tags)); err != nil {
			failed = append(failed, err)
		}
	}
	close(stop)
	wg.Wait()
	if gcErr != nil {
		t.Errorf("gc: %v", gcErr)
	}
	if len(failed) > 0 {
		t.Errorf("FINDING gc-vs-tag: %d of %d Store.Tag calls failed while Store.GC ran; first: %v\n"+
			"Store.GC (pkg/layout/image.go) removes every .tmp-* in the store root holding only the gc lock, while "+
			"updateIndex (pkg/layout/store.go, used by Tag, Untag and Init) writes index.json through such a temp "+
			"file holding only the index lock", len(failed), tags, failed[0])
	}
	if _, err := verifyStore(store); err != nil {
		t.Error(err)
	}
}
