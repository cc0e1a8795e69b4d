package main

import (
	"os"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

// blobBars draws one progress bar per blob on a terminal. It returns a
// nil callback (nothing drawn) when stderr is not a terminal, or is one
// that cannot move its cursor (TERM=dumb: an editor's shell buffer, where
// the redraws pile up as escape sequences), or --quiet is set, so piped
// output stays clean. wait must be called when done.
func (a *app) blobBars() (report layout.Progress, wait func()) {
	if a.quiet || !isTerminal(a.stderr) || os.Getenv("TERM") == "dumb" {
		return nil, func() {}
	}
	p := mpb.New(mpb.WithOutput(a.stderr), mpb.WithAutoRefresh())
	var mu sync.Mutex
	bars := map[v1.Hash]*mpb.Bar{}
	report = func(h v1.Hash, done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		b := bars[h]
		if b == nil {
			name := h.Hex
			if len(name) > 12 {
				name = name[:12]
			}
			b = p.AddBar(total,
				mpb.PrependDecorators(decor.Name(name, decor.WC{C: decor.DindentRight | decor.DextraSpace})),
				mpb.AppendDecorators(decor.CountersKibiByte("% .1f / % .1f"), decor.Percentage(decor.WCSyncSpace)),
				mpb.BarRemoveOnComplete(),
			)
			bars[h] = b
		}
		b.SetCurrent(done)
	}
	wait = func() {
		mu.Lock()
		for _, b := range bars {
			if !b.Completed() {
				b.Abort(true)
			}
		}
		mu.Unlock()
		p.Wait()
	}
	return report, wait
}
