// Command profile runs what `addonpkg unpack SRC -o DIR` or `addonpkg build DIR -t NAME`
// run (the same library calls as cmd/addonpkg, with the CLI's defaults) under the Go
// CPU profiler, and writes an allocation profile at the end. It exists because the
// CLI has no profiling switch and the perf lab does not edit cmd/.
//
//	profile -mode unpack -src 127.0.0.1:5055/addon-large:docker-gz -out DIR -store DIR -cpuprofile F -memprofile F
//	profile -mode build  -src PATH -tag NAME -store DIR -cpuprofile F -memprofile F
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/output"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

func main() {
	mode := flag.String("mode", "unpack", "unpack or build")
	src := flag.String("src", "", "unpack: SOURCE as the CLI takes it; build: the directory")
	out := flag.String("out", "", "unpack: output directory (-o)")
	tag := flag.String("tag", "addon:bench", "build: name in the store (-t)")
	store := flag.String("store", "", "store directory (ADDONPKG_HOME); must be fresh")
	cpu := flag.String("cpuprofile", "", "CPU profile file")
	mem := flag.String("memprofile", "", "allocation profile file")
	peak := flag.String("peakprofile", "", "heap profile (in use) taken when the heap was at its largest")
	flag.Parse()
	if *mem != "" {
		runtime.MemProfileRate = 64 << 10 // the large buffers are what matters
	}
	if *src == "" || *store == "" || (*mode == "unpack" && *out == "") {
		flag.Usage()
		os.Exit(2)
	}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	if *peak != "" {
		stop := watchPeak(*peak)
		defer stop()
	}
	start := time.Now()
	phase := ""
	ctx := context.Background()
	st, err := layout.Init(*store)
	check(err)
	switch *mode {
	case "unpack":
		ref, err := source.Parse(*src)
		check(err)
		w, err := output.NewWriter(*out)
		check(err)
		spill, err := w.SpillDir()
		check(err)
		ad, err := source.Unpack(ctx, ref, source.Options{Store: st, Pull: source.PullMissing}, unpack.Options{Sink: w, SinkOnly: true, SpillDir: spill})
		check(err)
		if os.Getenv("PROFILE_LIVE") != "" {
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			fmt.Printf("live after unpack: %.1f MiB\n", float64(m.HeapAlloc)/(1<<20))
		}
		phase = fmt.Sprintf(" (unpack %.2fs, write %%.2fs)", time.Since(start).Seconds())
		mid := time.Now()
		check(w.Commit(ad.FS))
		phase = fmt.Sprintf(phase, time.Since(mid).Seconds())
	case "build":
		// As `addonpkg build DIR` reads a folder: listed, read from disk.
		tree, err := folder.Open(*src, safetree.Limits{})
		check(err)
		defer tree.Close()
		res, err := build.Build(ctx, tree, build.Options{Name: "addon"})
		check(err)
		name, err := source.StoreName(*tag) // as build -t names it (pkg/publish)
		check(err)
		_, err = st.WriteImage(ctx, res.Image, nil, name)
		check(err)
	default:
		check(fmt.Errorf("unknown -mode %q", *mode))
	}
	wall := time.Since(start)
	if *cpu != "" {
		pprof.StopCPUProfile()
	}
	if *mem != "" {
		runtime.GC() // the profile shows allocations up to the last GC
		f, err := os.Create(*mem)
		check(err)
		check(pprof.Lookup("allocs").WriteTo(f, 0))
		check(f.Close())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	fmt.Printf("heap: alloc %.0f MiB, in use %.0f MiB, sys %.0f MiB; after a GC: alloc %.0f MiB, in use %.0f MiB\n",
		float64(ms.HeapAlloc)/(1<<20), float64(ms.HeapInuse)/(1<<20), float64(ms.HeapSys)/(1<<20),
		float64(after.HeapAlloc)/(1<<20), float64(after.HeapInuse)/(1<<20))
	fmt.Printf("%s %s: %.2fs wall%s, %.0f MiB allocated in total, %d GC cycles, %.0f MiB heap in use at the end\n",
		*mode, *src, wall.Seconds(), phase, float64(ms.TotalAlloc)/(1<<20), ms.NumGC, float64(ms.HeapInuse)/(1<<20))
}

// watchPeak samples the heap every few milliseconds and writes an in-use
// heap profile to file each time it finds the heap larger than before
// (at most every 50 ms), so that the profile shows what the peak held.
// stop ends the sampling and reports the peak.
func watchPeak(file string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	var top uint64
	go func() {
		defer close(finished)
		var last time.Time
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc <= top || time.Since(last) < 50*time.Millisecond {
				top = max(top, ms.HeapAlloc)
				continue
			}
			top, last = ms.HeapAlloc, time.Now()
			f, err := os.Create(file)
			check(err)
			check(pprof.Lookup("heap").WriteTo(f, 0))
			check(f.Close())
		}
	}()
	return func() {
		close(done)
		<-finished
		fmt.Printf("heap peak (sampled): %.0f MiB\n", float64(top)/(1<<20))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		os.Exit(1)
	}
}
