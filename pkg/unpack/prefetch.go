package unpack

import (
	"io"
	"sync"
)

// prefetch runs reads of r in its own goroutine, up to depth chunks ahead,
// so that the stages of a layer (fetching and verifying the blob,
// inflating and hashing the tar, parsing it) run on different cores.
// Close stops the goroutine; it must always be called.
func prefetch(r io.Reader, chunk, depth int) *prefetcher {
	p := &prefetcher{
		ch:   make(chan []byte, depth),
		free: make(chan []byte, depth+2),
		stop: make(chan struct{}),
	}
	for range depth + 2 {
		p.free <- make([]byte, chunk)
	}
	p.wg.Add(1)
	go p.fill(r)
	return p
}

type prefetcher struct {
	ch   chan []byte
	free chan []byte
	stop chan struct{}
	err  error // set before ch is closed
	cur  []byte
	buf  []byte // the backing chunk of cur, returned to free when used up
	wg   sync.WaitGroup
	once sync.Once
}

func (p *prefetcher) fill(r io.Reader) {
	defer p.wg.Done()
	defer close(p.ch)
	for {
		var b []byte
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		n, err := io.ReadFull(r, b)
		if n > 0 {
			select {
			case p.ch <- b[:n]:
			case <-p.stop:
				return
			}
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
	for len(p.cur) == 0 {
		if p.buf != nil {
			p.free <- p.buf[:cap(p.buf)]
			p.buf = nil
		}
		b, ok := <-p.ch
		if !ok {
			return 0, p.err
		}
		p.cur, p.buf = b, b
	}
	n := copy(out, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// Close stops the reading goroutine and waits for it.
func (p *prefetcher) Close() error {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
	return nil
}
