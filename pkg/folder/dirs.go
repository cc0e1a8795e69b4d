package folder

import (
	"os"
	"sync"
)

// maxOpenDirs bounds the directories an opener keeps open (dirCache).
const maxOpenDirs = 16

// dirCache keeps the last directories an opener read files from open, each
// as an os.Root opened through the folder's: a file is then opened with
// one openat in its directory rather than one per component of its path
// from the top. The tree is read in tree order, so a few suffice.
type dirCache struct {
	top  *os.Root
	mu   sync.Mutex
	dirs map[string]*openDir
	tick uint64
}

type openDir struct {
	root    *os.Root
	refs    int
	used    uint64
	evicted bool
}

// acquire returns the open directory name, which the caller releases.
func (c *dirCache) acquire(name string) (*openDir, error) {
	c.mu.Lock()
	if d := c.dirs[name]; d != nil {
		c.tick++
		d.refs, d.used = d.refs+1, c.tick
		c.mu.Unlock()
		return d, nil
	}
	c.mu.Unlock()
	r, err := c.top.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	if d := c.dirs[name]; d != nil { // opened meanwhile by another reader
		r.Close()
		d.refs, d.used = d.refs+1, c.tick
		return d, nil
	}
	if c.dirs == nil {
		c.dirs = map[string]*openDir{}
	}
	if len(c.dirs) >= maxOpenDirs {
		var lru string
		for k, d := range c.dirs {
			if lru == "" || d.used < c.dirs[lru].used {
				lru = k
			}
		}
		old := c.dirs[lru]
		delete(c.dirs, lru)
		old.evicted = true
		if old.refs == 0 {
			old.root.Close()
		}
	}
	d := &openDir{root: r, refs: 1, used: c.tick}
	c.dirs[name] = d
	return d, nil
}

func (c *dirCache) release(d *openDir) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d.refs--
	if d.evicted && d.refs == 0 {
		d.root.Close()
	}
}

// close closes every directory left open.
func (c *dirCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, d := range c.dirs {
		delete(c.dirs, k)
		d.evicted = true
		if d.refs == 0 {
			d.root.Close()
		}
	}
}
