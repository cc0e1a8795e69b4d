package layout

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// maxArchiveEntries bounds the entries an oci-archive may hold.
const maxArchiveEntries = 1_048_576

// tarIndex maps the files of an uncompressed tar to their byte ranges, so
// blobs are read in place without extracting anything.
type tarIndex struct {
	f     *os.File
	files map[string]section
}

type section struct{ off, size int64 }

// OpenArchiveFile opens an archive (an oci-archive or a docker-archive)
// to be read in place, blobs at their offsets. A compressed one (docker
// save | gzip > FILE.tar.gz, which docker load and skopeo read; gzip,
// zstd, xz or bzip2, by its first bytes: mediatypes.DetectCompression,
// as docker load takes all four) is first decompressed into an unnamed
// temporary file, at most maxBytes (a *safetree.LimitError of
// safetree.LimitImageBytes beyond), which is gone once f is closed or the
// process ends. compressed says it was.
func OpenArchiveFile(file string, maxBytes int64) (f *os.File, compressed bool, err error) {
	f, err = os.Open(file)
	if err != nil {
		return nil, false, err
	}
	head := make([]byte, mediatypes.DetectLen)
	n, _ := f.ReadAt(head, 0)
	if mediatypes.DetectCompression(head[:n]) == mediatypes.None {
		return f, false, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, true, err
	}
	tmp, err := decompressArchive(f, st.Size(), maxBytes)
	return tmp, true, err
}

// decompressArchive writes the size bytes of r, a compressed archive,
// into an unnamed temporary file, at most maxBytes, and returns it at its
// start.
func decompressArchive(r io.ReaderAt, size, maxBytes int64) (*os.File, error) {
	zr, c, err := archive.DecompressArchive(r, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptArchive, err)
	}
	defer zr.Close()
	tmp, err := os.CreateTemp("", "addonpkg-archive-*")
	if err != nil {
		return nil, fmt.Errorf("decompress into a temporary file: %w", err)
	}
	// Unlinked at once: the bytes live as long as the file is open.
	os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(corruptOnError{zr, c}, maxBytes+1))
	if err == nil && n > maxBytes {
		err = &safetree.LimitError{Name: "decompressed archive size", Limit: maxBytes, Which: safetree.LimitImageBytes}
	}
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		tmp.Close()
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == tmp.Name() {
			err = fmt.Errorf("decompress into a temporary file: %w", err)
		}
		return nil, err
	}
	return tmp, nil
}

// corruptOnError marks the errors of reading a decompressor (not those of
// writing its output) ErrCorruptArchive.
type corruptOnError struct {
	r io.Reader
	c mediatypes.Compression
}

func (r corruptOnError) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %s: %w", ErrCorruptArchive, r.c, err)
	}
	return n, err
}

// ErrCorruptArchive marks a compressed archive whose compressed stream
// does not decompress.
var ErrCorruptArchive = errors.New("corrupt compressed archive")

// OpenArchive opens an oci-archive (a tar of an OCI image layout)
// read-only. The tar is indexed once; blobs are read from it directly
// (from its decompressed copy when it is compressed: OpenArchiveFile,
// at most safetree.DefaultMaxImageBytes).
func OpenArchive(file string) (*Store, error) {
	return OpenArchiveLimit(file, safetree.DefaultMaxImageBytes)
}

// OpenArchiveLimit is OpenArchive with the decompressed copy of a
// compressed archive bounded by maxBytes (the unpack's
// safetree.Limits.MaxImageBytes, whose LimitID its refusal carries).
func OpenArchiveLimit(file string, maxBytes int64) (*Store, error) {
	f, _, err := OpenArchiveFile(file, maxBytes)
	// The archive's own open error is said naming it once; any other
	// path error (the temporary file's: TMPDIR missing or full) keeps
	// its path, or a missing TMPDIR reads as a missing archive.
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Op == "open" && pe.Path == file {
		return nil, &fs.PathError{Op: "open oci-archive", Path: file, Err: pe.Err}
	}
	if err != nil {
		return nil, fmt.Errorf("oci-archive %s: %w", file, err)
	}
	idx := &tarIndex{f: f, files: map[string]section{}}
	cr := &offsetReader{r: f}
	tr := tar.NewReader(cr)
	for n := 0; ; n++ {
		if n > maxArchiveEntries {
			f.Close()
			return nil, fmt.Errorf("oci-archive %s: more than %d entries", file, maxArchiveEntries)
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("oci-archive %s: %w (not a tar, nor a gzip-, zstd-, xz- or bzip2-compressed one?)", file, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		// The data starts where the header ends; tar.Reader has read
		// exactly the header blocks at this point.
		idx.files[name] = section{off: cr.n, size: hdr.Size}
	}
	if _, ok := idx.files[layoutFile]; !ok {
		f.Close()
		return nil, fmt.Errorf("%s: %w (no oci-layout file in the archive)", file, ErrNotLayout)
	}
	return &Store{dir: file, archive: idx, c: newCache()}, nil
}

func (t *tarIndex) open(name string) (io.ReadCloser, error) {
	s, ok := t.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return io.NopCloser(io.NewSectionReader(t.f, s.off, s.size)), nil
}

// Close releases an archive's file; a no-op for directory layouts.
func (s *Store) Close() error {
	if s.archive != nil {
		return s.archive.f.Close()
	}
	return nil
}

// offsetReader counts the bytes tar.Reader has consumed.
type offsetReader struct {
	r io.Reader
	n int64
}

func (o *offsetReader) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	o.n += int64(n)
	return n, err
}

// WriteArchive packs the layout at dir into an oci-archive at file,
// atomically: a temp file beside it is renamed into place when complete.
// Entries are sorted and their metadata fixed, so the archive is
// reproducible.
func WriteArchive(dir, file string) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		base := filepath.Base(p)
		if rel == "." || strings.HasPrefix(base, ".addonpkg-") || strings.HasPrefix(base, tmpPrefix) {
			return nil
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	return atomicfile.Write(file, filepath.Base(file)+".tmp-", 0o644, func(out io.Writer) error {
		tw := tar.NewWriter(out)
		for _, rel := range names {
			if err := addToArchive(tw, dir, rel); err != nil {
				return err
			}
		}
		return tw.Close()
	})
}

// addToArchive writes the file or directory rel of dir into tw, with the
// fixed mode and time that make an archive of the same layout the same
// bytes.
func addToArchive(tw *tar.Writer, dir, rel string) error {
	p := filepath.Join(dir, rel)
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
	if st.IsDir() {
		h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
	} else {
		h.Typeflag, h.Size = tar.TypeReg, st.Size()
	}
	if err := tw.WriteHeader(h); err != nil || st.IsDir() {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(tw, f)
	return err
}
