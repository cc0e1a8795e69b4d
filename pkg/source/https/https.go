// Package https is the https location of pkg/source: SOURCEs written
// https://HOST/PATH/FILE.yaml or an archive, [//SUBDIR]
// [?checksum=sha256:HEX], read in memory with the unpacker's limits and
// a folder's ignore and link rules. A program opts in by listing Location
// in source.Options.Locations.
//
//	opts := source.Options{Locations: []source.Location{https.Location{}}}
package https

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// maxRedirects bounds the redirects an http source may follow.
const maxRedirects = 10

// Location is the https location: https://HOST/PATH/FILE.yaml or an
// archive (.tar.gz, .tgz, .tar.xz, .txz, .tar.bz2, .tbz2, .tar.zst,
// .tar, .zip), [//SUBDIR][?checksum=sha256:HEX],
// and plain http:// to loopback hosts. Its syntax is source.Parse's; it
// adds the download (LoadTree).
type Location struct{}

var _ source.TreeLoader = Location{}

// Kind is source.KindHTTP.
func (Location) Kind() source.Kind { return source.KindHTTP }

// Claims reports whether s starts with https:// or http://.
func (Location) Claims(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// Parse parses an https SOURCE (source.Parse).
func (Location) Parse(s string) (source.Ref, error) { return source.Parse(s) }

// Format writes r back, credentials removed.
func (Location) Format(r source.Ref) string { return r.String() }

// LoadTree downloads the source and reads its tree, with the unpacker's
// limits and safety rules.
func (Location) LoadTree(ctx context.Context, ref source.Ref, opts source.Options, limits safetree.Limits) (*source.Tree, error) {
	t, err := loadHTTP(ctx, ref, opts, limits)
	if err != nil {
		return nil, source.WrapError(ref, err)
	}
	return t, nil
}

// loadHTTP downloads an http source and reads its tree.
func loadHTTP(ctx context.Context, ref source.Ref, opts source.Options, limits safetree.Limits) (*source.Tree, error) {
	u, err := url.Parse(ref.URL)
	if err != nil {
		return nil, source.UnwrapURLError(err)
	}
	if !opts.PlainHTTPAllowed(u) {
		return nil, source.PlainHTTPRefused(u)
	}
	body, ctype, err := download(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	hexSum := hex.EncodeToString(sum[:])
	if ref.Checksum != "" && ref.Checksum != "sha256:"+hexSum {
		return nil, fmt.Errorf("checksum mismatch: the body (%d bytes) hashes to sha256:%s, the SOURCE wants %s", len(body), hexSum, ref.Checksum)
	}
	kind, err := classify(u.Path, body, ctype)
	if err != nil {
		return nil, err
	}
	t := &source.Tree{
		Ref:        ref,
		Name:       source.RemoteName(ref),
		Digest:     v1.Hash{Algorithm: "sha256", Hex: hexSum},
		Source:     source.RedactURL(ref.URL),
		ContentDir: "/" + ref.Subdir,
	}
	pinned := ref
	pinned.Checksum = "sha256:" + hexSum
	t.Pinned = pinned.String()
	switch kind {
	case bodyYAML:
		if ref.Subdir != "" {
			return nil, fmt.Errorf("//%s names a directory, but the URL is a single YAML file, not an archive", ref.Subdir)
		}
		name := fileName(u)
		if int64(len(body)) > limits.MaxFileBytes {
			return nil, &safetree.LimitError{Name: "file size", Limit: limits.MaxFileBytes, Which: safetree.LimitFileBytes, Entry: name}
		}
		if t.FS, err = folder.LoadBytes(name, body); err != nil {
			return nil, err
		}
	case bodyTar:
		tb := source.NewTreeBuilder("the archive", ref.Subdir, limits)
		if err := extractTar(ctx, body, tb); err != nil {
			return nil, err
		}
		if t.FS, err = tb.Done(); err != nil {
			return nil, err
		}
	case bodyZip:
		tb := source.NewTreeBuilder("the archive", ref.Subdir, limits)
		if err := extractZip(ctx, body, tb); err != nil {
			return nil, err
		}
		if t.FS, err = tb.Done(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// fileName names the one file of a YAML download: the URL's last path
// element, with .yaml added when it has no manifest extension (only
// those files render).
func fileName(u *url.URL) string {
	name := path.Base(u.Path)
	if name == "." || name == "/" || name == "" || strings.ContainsAny(name, "\\\x00") || !fs.ValidPath(name) {
		name = "addon"
	}
	if !addon.IsManifestFile(name) {
		name += ".yaml"
	}
	return name
}

// download GETs u with the options' client, credentials and limits. The
// timeout is an idle timeout (netguard): waiting for the headers, and any
// pause of the body, not the download as a whole.
func download(ctx context.Context, u *url.URL, opts source.Options) ([]byte, string, error) {
	user, pass, hasCreds, err := httpCredentials(u, opts)
	if err != nil {
		return nil, "", err
	}
	client, closeIdle, err := httpClient(opts, u)
	if err != nil {
		return nil, "", err
	}
	defer closeIdle()

	clean := *u
	clean.User = nil
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clean.String(), nil)
	if err != nil {
		return nil, "", source.UnwrapURLError(err)
	}
	req.Header.Set("User-Agent", opts.Registry.Agent())
	// The checksum is over the bytes the server stores: no transparent
	// decompression.
	req.Header.Set("Accept-Encoding", "identity")
	if hasCreds {
		req.SetBasicAuth(user, pass)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", netErr(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = " (credentials for https come from ~/.netrc)"
		}
		return nil, "", fmt.Errorf("HTTP %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), hint)
	}
	max := opts.MaxDownload()
	tooBig := &safetree.LimitError{Name: "download size", Limit: max, Which: safetree.LimitDownloadBytes}
	if resp.ContentLength > max {
		return nil, "", tooBig
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, "", netErr(err)
	}
	if int64(len(body)) > max {
		return nil, "", tooBig
	}
	return body, resp.Header.Get("Content-Type"), nil
}

// netErr turns a transport error into one line; the URL, which the
// caller names, is not repeated. An idle timeout stays a
// *netguard.IdleTimeoutError (the caller names the source).
func netErr(err error) error {
	var ie *netguard.IdleTimeoutError
	if errors.As(err, &ie) {
		return &netguard.IdleTimeoutError{Idle: ie.Idle}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("timed out: %w", source.UnwrapURLError(err))
	}
	return source.UnwrapURLError(err)
}

// httpCredentials picks basic-auth credentials: the URL's own, else the
// netrc entry of the host (https only). Credentials in the URL of a plain
// http:// download are refused unless the host is loopback (netguard's
// rule): they would travel in clear.
func httpCredentials(u *url.URL, opts source.Options) (user, pass string, ok bool, err error) {
	if u.User != nil {
		if err := netguard.CheckCredentials(u); err != nil {
			return "", "", false, fmt.Errorf("user and password in a plain http:// URL are refused (only loopback hosts get them): use https://")
		}
		p, _ := u.User.Password()
		return u.User.Username(), p, true, nil
	}
	if u.Scheme != "https" {
		return "", "", false, nil
	}
	user, pass, ok = opts.NetrcLogin(u.Hostname())
	return user, pass, ok, nil
}

// httpClient returns the client for http sources and a func that releases
// the connections of a client it built. Every request goes through a
// netguard.Transport: credentials only to the origin of u (a redirect
// elsewhere carries none), never in clear except to loopback, and the
// idle timeout; redirects to plain http are refused (loopback aside).
func httpClient(o source.Options, u *url.URL) (*http.Client, func(), error) {
	var c http.Client
	closeIdle := func() {}
	if o.HTTPClient != nil {
		c = *o.HTTPClient
	} else {
		t, err := o.BaseTransport()
		if err != nil {
			return nil, nil, err
		}
		c.Transport = t
		if ht, ok := t.(*http.Transport); ok && o.Registry.Transport == nil {
			closeIdle = ht.CloseIdleConnections
		}
	}
	origin := netguard.OriginOf(u)
	c.Transport = registry.LogTransport(&netguard.Transport{Base: c.Transport, Idle: o.IdleTimeout(), CredentialOrigin: &origin}, o.Registry.Logger)
	prev := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if !o.PlainHTTPAllowed(req.URL) {
			return fmt.Errorf("redirected to plain http://%s: refused", req.URL.Host)
		}
		if prev != nil {
			return prev(req, via)
		}
		return nil
	}
	return &c, closeIdle, nil
}

// What an http body holds.
type bodyKind int

const (
	bodyYAML bodyKind = iota
	bodyTar
	bodyZip
)

// tarExts are the extensions of a tar download, and the compression
// each names (None: a plain .tar, which may come compressed all the
// same), the one an error names such an archive by first (tarName).
// docker load and tar read all four; archive.DecompressArchive reads
// them within its bounds.
var tarExts = []struct {
	ext string
	c   mediatypes.Compression
}{
	{".tar.gz", mediatypes.Gzip}, {".tgz", mediatypes.Gzip},
	{".tar.xz", mediatypes.Xz}, {".txz", mediatypes.Xz},
	{".tar.bz2", mediatypes.Bzip2}, {".tbz2", mediatypes.Bzip2}, {".tbz", mediatypes.Bzip2},
	{".tar.zst", mediatypes.Zstd}, {".tzst", mediatypes.Zstd},
	{".tar", mediatypes.None},
}

// tarName is how an error names the tar archive of compression c: by
// the first of its extensions in tarExts (a .tgz is a .tar.gz archive).
func tarName(c mediatypes.Compression) string {
	for _, te := range tarExts {
		if te.c == c {
			return te.ext + " archive"
		}
	}
	return ".tar archive"
}

// classify decides from the URL's extension and the body's first bytes
// what the download is, and refuses HTML pages and mislabelled bodies.
// A tar's compression is archive.Detect's: the one home of the magic
// bytes (sniff says the rest).
func classify(urlPath string, body []byte, ctype string) (bodyKind, error) {
	p := strings.ToLower(urlPath)
	want, tarWant := "", mediatypes.Unknown
	for _, te := range tarExts {
		if strings.HasSuffix(p, te.ext) {
			want, tarWant = tarName(te.c), te.c
			break
		}
	}
	switch {
	case want != "":
	case strings.HasSuffix(p, ".zip"):
		want = ".zip archive"
	case addon.IsManifestFile(p):
		want = "YAML file"
	default:
		want = "YAML file or archive"
	}
	if len(body) == 0 {
		return 0, fmt.Errorf("the body is empty, not a %s", want)
	}
	if isHTML(body, ctype) {
		return 0, fmt.Errorf("got an HTML page, not a %s (an error or login page, or a repository's web page: for git use git+https://)", want)
	}
	got := sniff(body)
	compressed := archive.Detect(body)
	mismatch := func() error {
		return fmt.Errorf("not a %s: the body is %s", want, got)
	}
	switch {
	case tarWant == mediatypes.None:
		// A .tar served compressed (a server's own encoding) still reads.
		if got != "a tar archive" && compressed == mediatypes.None {
			return 0, mismatch()
		}
		return bodyTar, nil
	case tarWant != mediatypes.Unknown:
		if compressed != tarWant {
			return 0, mismatch()
		}
		return bodyTar, nil
	case want == ".zip archive":
		if got != "a zip archive" {
			return 0, mismatch()
		}
		return bodyZip, nil
	case want == "YAML file":
		if got != "text" {
			return 0, mismatch()
		}
		return bodyYAML, nil
	}
	switch {
	case compressed != mediatypes.None, got == "a tar archive":
		return bodyTar, nil
	case got == "a zip archive":
		return bodyZip, nil
	case got == "text":
		return bodyYAML, nil
	}
	return 0, mismatch()
}

// sniff describes a body by its first bytes.
func sniff(b []byte) string {
	if c := archive.Detect(b); c != mediatypes.None {
		return string(c) + " data"
	}
	switch {
	case bytes.HasPrefix(b, []byte("PK\x03\x04")), bytes.HasPrefix(b, []byte("PK\x05\x06")):
		return "a zip archive"
	case len(b) >= 262 && string(b[257:262]) == "ustar":
		return "a tar archive"
	case utf8.Valid(b) && bytes.IndexByte(b, 0) < 0:
		return "text"
	}
	return "binary data"
}

// isHTML reports a web page: sniffed as HTML, or served as text/html and
// starting like markup (YAML never starts with "<").
func isHTML(body []byte, ctype string) bool {
	if strings.HasPrefix(http.DetectContentType(body), "text/html") {
		return true
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), " \t\r\n")
	return (mt == "text/html" || mt == "application/xhtml+xml") && bytes.HasPrefix(trimmed, []byte("<"))
}

// limitedReader fails once more than max bytes were read from r: the
// decompressed size of an archive, so a bomb stops at the limit.
type limitedReader struct {
	r      io.Reader
	n, max int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		return n, &safetree.LimitError{Name: "decompressed archive size", Limit: l.max, Which: safetree.LimitImageBytes}
	}
	return n, err
}

// extractTar reads a tar, compressed (gzip, zstd, xz, bzip2:
// archive.DecompressArchive, with its decoder bounds) or not, into t;
// the tar stream is capped at the limits' MaxImageBytes whatever its
// compression.
func extractTar(ctx context.Context, body []byte, t *source.TreeBuilder) error {
	zr, _, err := archive.DecompressArchive(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return fmt.Errorf("not a valid archive: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(&limitedReader{r: zr, max: t.Limits().MaxImageBytes})
	entries, err := archive.Entries(ctx, tr, func(hdr *tar.Header) error { return tarEntry(tr, hdr, t) })
	var he *archive.HeaderError
	if errors.As(err, &he) {
		if errors.Is(he.Err, safetree.ErrLimit) {
			return he.Err
		}
		return fmt.Errorf("not a valid tar archive: %w", he.Err)
	}
	if err != nil {
		return err
	}
	if entries == 0 {
		return fmt.Errorf("not a valid tar archive: no entries")
	}
	return nil
}

func tarEntry(tr *tar.Reader, hdr *tar.Header, t *source.TreeBuilder) error {
	switch hdr.Typeflag {
	case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
		return nil
	}
	p, err := safetree.CleanName(hdr.Name)
	if err != nil {
		return err
	}
	if p == "." {
		return nil
	}
	tp, in := t.Rel(p)
	if !in {
		return nil // outside the subdirectory: read past, only counted
	}
	if tp == "." {
		if hdr.Typeflag != tar.TypeDir {
			t.ContentIsFile()
		}
		return nil
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return t.Mkdir(tp, hdr.Name)
	case tar.TypeReg:
		if safetree.GNUSparse(hdr) {
			return refuse(hdr.Name, safetree.ErrUnsupportedType, "GNU sparse files are not supported in an add-on")
		}
		if err := t.Check(tp); err != nil {
			return err
		}
		if err := t.CheckSize(tp, hdr.Size); err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
		if err != nil {
			var le *safetree.LimitError
			if errors.As(err, &le) {
				return err
			}
			return fmt.Errorf("not a valid tar archive: %s: %w", safetree.Sanitize(hdr.Name), err)
		}
		if int64(len(data)) != hdr.Size {
			return fmt.Errorf("not a valid tar archive: %s: %w", safetree.Sanitize(hdr.Name), io.ErrUnexpectedEOF)
		}
		return t.File(tp, hdr.Name, data, fs.FileMode(hdr.Mode).Perm())
	case tar.TypeSymlink:
		return t.Symlink(tp, hdr.Name, hdr.Linkname)
	case tar.TypeLink:
		target, err := safetree.CleanName(hdr.Linkname)
		if err != nil {
			return refuse(hdr.Name, safetree.ErrLinkEscape, fmt.Sprintf("hardlink to %q leaves the tree", hdr.Linkname))
		}
		tt, in := t.Rel(target)
		if !in {
			return refuse(hdr.Name, safetree.ErrLinkEscape, fmt.Sprintf("hardlink to %q leads out of the add-on tree", hdr.Linkname))
		}
		data, ok := t.ReadFile(tt)
		if !ok {
			return refuse(hdr.Name, safetree.ErrLinkEscape, fmt.Sprintf("hardlink to %q, which is not a file earlier in the archive", hdr.Linkname))
		}
		mode, _ := t.Lookup(tt)
		return t.File(tp, hdr.Name, data, mode)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return refuse(hdr.Name, safetree.ErrUnsupportedType, "device or fifo entries are not allowed in an add-on")
	}
	return refuse(hdr.Name, safetree.ErrUnsupportedType, fmt.Sprintf("unsupported entry type %q", hdr.Typeflag))
}

// extractZip reads a zip archive into t.
func extractZip(ctx context.Context, body []byte, t *source.TreeBuilder) error {
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("not a valid zip archive: %w", err)
	}
	total := int64(0)
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Some zip tools write DOS separators.
		name := strings.ReplaceAll(f.Name, "\\", "/")
		p, err := safetree.CleanName(name)
		if err != nil {
			return err
		}
		if p == "." {
			continue
		}
		tp, in := t.Rel(p)
		if !in {
			continue
		}
		mode := f.Mode()
		isDir := mode.IsDir() || strings.HasSuffix(name, "/")
		if tp == "." {
			if !isDir {
				t.ContentIsFile()
			}
			continue
		}
		switch {
		case isDir:
			err = t.Mkdir(tp, f.Name)
		case mode&fs.ModeSymlink != 0:
			var target []byte
			if target, err = readZip(f, int64(t.Limits().MaxPathLength), &total, t); err == nil {
				err = t.Symlink(tp, f.Name, string(target))
			}
		case mode.IsRegular():
			if err = t.Check(tp); err != nil {
				return err
			}
			if f.UncompressedSize64 > uint64(t.Limits().MaxFileBytes) {
				return &safetree.LimitError{Name: "file size", Limit: t.Limits().MaxFileBytes, Which: safetree.LimitFileBytes, Entry: safetree.Sanitize(tp)}
			}
			if err = t.CheckSize(tp, int64(f.UncompressedSize64)); err != nil {
				return err
			}
			var data []byte
			if data, err = readZip(f, t.Limits().MaxFileBytes, &total, t); err == nil {
				err = t.File(tp, f.Name, data, mode.Perm())
			}
		default:
			err = refuse(f.Name, safetree.ErrUnsupportedType, "device, fifo or socket entries are not allowed in an add-on")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readZip reads one zip entry, at most max bytes, counting the total
// decompressed bytes against MaxImageBytes.
func readZip(f *zip.File, max int64, total *int64, t *source.TreeBuilder) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("not a valid zip archive: %s: %w", safetree.Sanitize(f.Name), err)
	}
	defer rc.Close()
	lr := &limitedReader{r: io.LimitReader(rc, max+1), n: *total, max: t.Limits().MaxImageBytes}
	data, err := io.ReadAll(lr)
	*total = lr.n
	if err != nil {
		var le *safetree.LimitError
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, fmt.Errorf("not a valid zip archive: %s: %w", safetree.Sanitize(f.Name), err)
	}
	if int64(len(data)) > max {
		return nil, &safetree.LimitError{Name: "file size", Limit: max, Which: safetree.LimitFileBytes, Entry: safetree.Sanitize(f.Name)}
	}
	return data, nil
}

// refuse is the error of an archive entry that breaks a rule of class (a
// safetree class).
func refuse(name string, class error, reason string) error {
	return &safetree.Error{Entry: name, Reason: reason, Err: class}
}
