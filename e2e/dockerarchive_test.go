package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyToDockerArchive: copy of the image form to a docker-archive
// writes a file that skopeo and addonpkg read; copy of the artifact form
// is refused (as build --output docker-archive: is) and writes nothing.
func TestCopyToDockerArchive(t *testing.T) {
	skopeo := needTool(t, "skopeo")
	t.Parallel()
	c := newCLI(t)
	_, img, _ := buildForm(t, c, imageForm)
	_, art, _ := buildForm(t, c, artifactForm)
	dir := t.TempDir()

	good := filepath.Join(dir, "image.tar")
	c.ok("copy", imageForm.example+":1", "docker-archive:"+good+":coredns:1")
	if out := c.tool("", skopeo, "inspect", "--raw", "docker-archive:"+good).stdout; !strings.Contains(out, "layers") {
		t.Errorf("skopeo inspect --raw docker-archive: %s", out)
	}
	var u unpackOutput
	c.okJSON(&u, "unpack", "docker-archive:"+good, "--json")
	if u.Identity != img.config(t).Identity {
		t.Errorf("docker-archive reads back with identity %s, built %s", u.Identity, img.config(t).Identity)
	}

	bad := filepath.Join(dir, "artifact.tar")
	line := mustFailOneLine(t, c.run("copy", artifactForm.example+":1", "docker-archive:"+bad))
	for _, want := range []string{"docker-archive", "artifact form", "oci-archive:"} {
		if !strings.Contains(line, want) {
			t.Errorf("error %q does not mention %q", line, want)
		}
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused docker-archive exists (%v); artifact was %s", err, art.Digest)
	}
}
