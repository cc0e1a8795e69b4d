package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// readmeSkip lists the lines of the documentation's sh blocks that this
// test does not run, each with the reason. Every entry must match a line,
// so the list cannot go stale.
var readmeSkip = []struct {
	file, line, why string
}{
	{"README.md", "make build", "builds into the clone's ./bin: this test runs the binary it built itself (TestTerminalVersionStamped checks the stamping)"},
	{"README.md", "make demo", "runs make in the clone; the same commands run here from examples/README.md and the README's 'Using it' block"},
	{"README.md", "make test", "the test suite itself"},
	{"README.md", "addonpkg unpack 'https://example.com/", "needs a host on the internet (example.com)"},
	{"README.md", "addonpkg build 'git+https://github.com/", "needs a host on the internet (github.com)"},
	{"README.md", "addonpkg copy --with-images registry.example.com/", "fetches coredns's image from registry.k8s.io (on the internet); e2e's TestAirgapWithImages runs the same three commands on images in a local registry"},
	{"README.md", "addonpkg copy --with-images oci-archive:coredns-airgap.tar", "needs the archive of the line above"},
	{"README.md", "addonpkg unpack --relocate mirror.internal", "needs the mirror of the line above"},
	{"README.md", "addonpkg apply -f examples/addon-set/addons.yaml", "waits for coredns's Deployment, which no kubelet runs here, at kubeadm's 10.96.0.10, outside the test cluster's service range; TestCLIApplySet applies and uninstalls a set with -f"},
	{"README.md", "addonpkg uninstall -f examples/addon-set/addons.yaml", "needs the set the line above installs"},
	{"README.md", "go run ./examples/installer", "needs the module's source, not this scratch directory; examples/installer's TestInstall runs the same program on the same set"},
	{"examples/in-cluster/README.md", "make image", "builds in the clone; hack/selfimage's tests build, push and run the same image"},
	{"examples/in-cluster/README.md", "kubectl apply -f examples/in-cluster/", "needs a cluster; TestInClusterExample validates the two files"},
	{"examples/in-cluster/README.md", "kubectl create configmap addon-signing-keys", "needs a cluster; TestInClusterExample checks that the Job verifies with the key this ConfigMap holds"},
}

// readmeDocs are the files whose sh blocks are run.
var readmeDocs = []string{"README.md", "examples/README.md", "examples/in-cluster/README.md"}

var readmeBlockRE = regexp.MustCompile("(?ms)^```sh\n(.*?)^```")

// readmeAbsPathRE finds an absolute path in a command: a word, a flag's
// value after "=", or the path of an oci:, oci-archive: or docker-archive:
// location, that starts with one "/".
var readmeAbsPathRE = regexp.MustCompile(`(?:^|[\s=]|oci:|oci-archive:|docker-archive:)(/[^/\s]\S*)`)

// readmePreamble sets up the shell the blocks run in. A cluster is out of
// reach, so `kubectl apply -f -` is replaced by what can be checked here:
// no template placeholder is left in the stream, and every object passes
// addonpkg's own validation (it parses, and names apiVersion, kind and
// metadata.name).
const readmePreamble = `set -euo pipefail
kubectl() {
	if [[ "$*" != "apply -f -" ]]; then echo "kubectl $*: only 'kubectl apply -f -' is stood in for" >&2; return 1; fi
	local f; f=$(mktemp --suffix=.yaml); cat >"$f"
	if grep -nE '__[A-Z0-9_]+__|[$][{][A-Za-z_]' "$f" >&2; then echo "kubectl apply: template placeholders or unfilled values left in the stream" >&2; return 1; fi
	if ! grep -q '^kind:' "$f"; then echo "kubectl apply: no objects in the stream" >&2; return 1; fi
	addonpkg build "$f" --name kubectl-apply-check -t kubectl-apply-check:1 >/dev/null
}
`

// Every command in the README and examples/README.md runs as written,
// against a Distribution registry on 127.0.0.1 that registry.example.com
// and mirror.internal stand for.
func TestREADMECommands(t *testing.T) {
	bin := binary(t)
	bash := lookTool(t, "bash")
	cosign := lookTool(t, "cosign") // the "Sign and verify" block compares with cosign
	reg := testregistry.Start(t, testregistry.Options{DeleteEnabled: true})
	// The "Install into a cluster" block runs against a real API server.
	kube := kubeenv.Shared(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	used := make([]bool, len(readmeSkip))
	for _, doc := range readmeDocs {
		t.Run(doc, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root, doc))
			if err != nil {
				t.Fatal(err)
			}
			blocks := readmeBlockRE.FindAllStringSubmatch(string(b), -1)
			if len(blocks) == 0 {
				t.Fatalf("%s has no sh blocks", doc)
			}
			var script strings.Builder
			script.WriteString(readmePreamble)
			ran := 0
			for _, blk := range blocks {
			lines:
				for _, line := range strings.Split(blk[1], "\n") {
					cmd := strings.TrimSpace(line)
					if cmd == "" || strings.HasPrefix(cmd, "#") {
						continue
					}
					for i, s := range readmeSkip {
						if s.file == doc && strings.HasPrefix(cmd, s.line) {
							used[i] = true
							t.Logf("not run: %s (%s)", cmd, s.why)
							continue lines
						}
					}
					// A command writes where it runs (a scratch directory
					// here): an absolute path would write outside it, and
					// pass only where an earlier run left its folder.
					for _, m := range readmeAbsPathRE.FindAllStringSubmatch(cmd, -1) {
						if m[1] != "/dev/null" {
							t.Errorf("%s: %q names an absolute path (%s): write relative to where it runs", doc, cmd, m[1])
						}
					}
					cmd = strings.NewReplacer(
						"registry.example.com", reg.Host,
						"mirror.internal", reg.Host,
						"./bin/addonpkg", "addonpkg",
					).Replace(cmd)
					// Each line is echoed first, so a failure names it.
					script.WriteString("echo " + shellQuote("$ "+cmd) + " >&2\n" + cmd + "\n")
					ran++
				}
			}
			if ran == 0 {
				t.Fatalf("%s: no command ran", doc)
			}
			// The commands run in a scratch directory with a copy of
			// examples/ (lock writes examples/addon-set/addons.lock: the
			// clone's stays untouched), a fresh HOME and TMPDIR: nothing
			// they write lands outside the test's directories.
			work := t.TempDir()
			if err := os.CopyFS(filepath.Join(work, "examples"), os.DirFS(filepath.Join(root, "examples"))); err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			tmpdir := filepath.Join(home, "tmp")
			if err := os.Mkdir(tmpdir, 0o700); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bash, "-c", script.String())
			cmd.Dir = work
			cmd.Env = append(os.Environ(),
				"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+filepath.Dir(cosign)+string(os.PathListSeparator)+os.Getenv("PATH"),
				"HOME="+home, "TMPDIR="+tmpdir,
				"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
				"TUF_ROOT="+filepath.Join(home, "tuf"),
				"ADDONPKG_HOME="+filepath.Join(home, "store"),
				"DOCKER_CONFIG="+filepath.Join(home, "docker"),
				"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
				"SOURCE_DATE_EPOCH=1700000000",
				"TOKEN=readme-token",
				"KUBECONFIG="+kube.AdminKubeconfig,
				"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
				// Nothing leaves 127.0.0.1: cosign verify looks for its TUF
				// root on the internet, and meets a closed port instead.
				"HTTP_PROXY="+deadProxy, "HTTPS_PROXY="+deadProxy, "http_proxy="+deadProxy, "https_proxy="+deadProxy,
			)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\nstderr (the last '$' line failed):\n%s\nstdout:\n%s", doc, err, stderr.String(), stdout.String())
			}
			t.Logf("%s: %d commands ran", doc, ran)
		})
	}
	for i, s := range readmeSkip {
		if !used[i] {
			t.Errorf("readmeSkip entry %q of %s matches no line: remove it", s.line, s.file)
		}
	}
}

// deadProxy is a proxy address where nothing listens (the discard port).
const deadProxy = "http://127.0.0.1:9"

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
