package unpack

import (
	"errors"
	"io"
	"sync"
)

// prefetch runs reads of r in its own goroutine, up to depth chunks ahead,
// so that the stages of a layer (fetching and verifying the blob,
// inflating and hashing the tar, parsing it) run on different cores.
// Close stops the goroutine; it must always be called.
func prefetch(r io.Reader, depth int) *prefetcher {
	p := &prefetcher{
		ch:   make(chan []byte, depth),
		free: make(chan []byte, depth+2),
		stop: make(chan struct{}),
	}
	p.slots = depth + 2
	p.wg.Add(1)
	go p.fill(r)
	return p
}

// chunkSize is the unit of read-ahead. Chunks come from a pool shared by
// all layers, so many small layers cost no more than one.
const chunkSize = 128 << 10

var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

type prefetcher struct {
	ch    chan []byte
	free  chan []byte
	stop  chan struct{}
	err   error // set before ch is closed
	slots int   // chunks not yet taken from the pool
	cur   []byte
	buf   []byte // the backing chunk of cur, returned to free when used up
	pos   int64  // bytes read or skipped so far
	wg    sync.WaitGroup
	once  sync.Once
}

func (p *prefetcher) fill(r io.Reader) {
	defer p.wg.Done()
	defer close(p.ch)
	for {
		var b []byte
		if p.slots > 0 {
			p.slots--
			b = *(chunks.Get().(*[]byte))
		} else {
			select {
			case b = <-p.free:
			case <-p.stop:
				return
			}
		}
		n, err := io.ReadFull(r, b)
		if n > 0 {
			select {
			case p.ch <- b[:n]:
			case <-p.stop:
				p.free <- b // Close returns it to the pool
				return
			}
		} else {
			p.free <- b // unused: keep it for Close to return
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		if err != nil {
			p.err = err
			return
		}
	}
}

func (p *prefetcher) Read(out []byte) (int, error) {
	if !p.more() {
		return 0, p.err
	}
	n := copy(out, p.cur)
	p.cur = p.cur[n:]
	p.pos += int64(n)
	return n, nil
}

// more makes sure cur holds unread bytes, taking the next chunk when it is
// used up; false at the end of the stream (p.err says why).
func (p *prefetcher) more() bool {
	for len(p.cur) == 0 {
		if p.buf != nil {
			p.free <- p.buf[:cap(p.buf)]
			p.buf = nil
		}
		b, ok := <-p.ch
		if !ok {
			return false
		}
		p.cur, p.buf = b, b
	}
	return true
}

// Seek skips forward (whence io.SeekCurrent, offset >= 0 only) without
// copying, and returns the position reached, which is short of the one
// asked for when the stream ends first. archive/tar skips the content of
// the entries it is not asked to read this way: for a layer of content
// outside the add-on, most of the layer.
func (p *prefetcher) Seek(offset int64, whence int) (int64, error) {
	if whence != io.SeekCurrent || offset < 0 {
		return p.pos, errors.New("prefetch: only forward seeks from the current position")
	}
	for offset > 0 && p.more() {
		k := min(offset, int64(len(p.cur)))
		p.cur = p.cur[k:]
		p.pos += k
		offset -= k
	}
	return p.pos, nil
}

// Close stops the reading goroutine, waits for it, and gives its chunks
// back to the pool.
func (p *prefetcher) Close() error {
	p.once.Do(func() {
		close(p.stop)
		p.wg.Wait()
		release := func(b []byte) {
			b = b[:cap(b)]
			chunks.Put(&b)
		}
		if p.buf != nil {
			release(p.buf)
			p.buf, p.cur = nil, nil
		}
		for b := range p.ch {
			release(b)
		}
		for {
			select {
			case b := <-p.free:
				release(b)
			default:
				return
			}
		}
	})
	return nil
}
