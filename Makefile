# addonpkg: the targets a newcomer guesses.
SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
FUZZTIME ?= 20s
export PATH := $(BIN):$(PATH)

.PHONY: all build image demo deps test unit e2e fuzz bench bench-go perf perf-quick perf-profile perf-clean lint docs clean

all: build

## build: the addonpkg binary in ./bin
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/addonpkg ./cmd/addonpkg

## image: addonpkg's own container image (static binary, non-root user, no
## shell) into the OCI layout $(IMAGE_DIR), tagged $(VERSION); with
## PUSH=REGISTRY/REPO:TAG it is pushed there too. Reproducible: file and
## config times are the commit time (or SOURCE_DATE_EPOCH).
IMAGE_DIR ?= .work/image
image:
	@mkdir -p .work/image-bin
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o .work/image-bin/addonpkg ./cmd/addonpkg
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 0)} \
	  $(GO) run ./hack/mkimage -binary .work/image-bin/addonpkg -platform linux/$$($(GO) env GOARCH) \
	  -version $(VERSION) -revision $(COMMIT) -o $(IMAGE_DIR) -tag $(VERSION) $(if $(PUSH),-push $(PUSH))

## demo: the main job on the bundled example, no registry needed: build
## examples/coredns into a scratch store, list it, unpack it to a folder
## and render it to stdout.
demo: build
	@rm -rf .work/demo && mkdir -p .work/demo
	ADDONPKG_HOME=$(CURDIR)/.work/demo/store $(BIN)/addonpkg build examples/coredns -t coredns:1.11
	ADDONPKG_HOME=$(CURDIR)/.work/demo/store $(BIN)/addonpkg images
	ADDONPKG_HOME=$(CURDIR)/.work/demo/store $(BIN)/addonpkg unpack coredns:1.11 -o .work/demo/coredns
	diff -r examples/coredns .work/demo/coredns && echo "unpacked tree equals examples/coredns"
	ADDONPKG_HOME=$(CURDIR)/.work/demo/store $(BIN)/addonpkg unpack coredns:1.11 --set DNS_SERVER_IP=10.96.0.10

## deps: install what the tests need (Debian packages as root, Go peers in ./bin)
deps:
	hack/install-deps.sh

## test: every test (unit, e2e against a real registry, interop, seed corpora), with -race,
## except the CLI's big-data tests (BIGDATA), which measure the CLI's own process and
## run without it: the race detector makes their generators ten times slower.
## The tests that run addonpkg as a process share one build of it
## (TEST_BIN, through internal/testing/addonpkgbin), instead of linking
## their own, six links of a 110 MB binary.
BIGDATA := 'PeakRSS|Memory|SameStream|LargeFileNotHeld'
TEST_BIN := $(CURDIR)/.work/test-bin/addonpkg
test: deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) build -o $(TEST_BIN) ./cmd/addonpkg
	E2E_ADDONPKG_BIN=$(TEST_BIN) $(GO) test -race -count=1 -timeout 45m ./...
	E2E_ADDONPKG_BIN=$(TEST_BIN) $(GO) test -count=1 -timeout 20m -run $(BIGDATA) ./cmd/addonpkg
	cd e2e/peers && $(GO) vet ./... && E2E_ADDONPKG_BIN=$(TEST_BIN) $(GO) test -count=1 -timeout 10m ./...

## unit: the fast tests only
unit:
	$(GO) test -short -count=1 ./pkg/... ./internal/...

## e2e: the end-to-end and interop tests
e2e: deps
	$(GO) test -race -count=1 -timeout 20m ./e2e/...
	cd e2e/peers && $(GO) test -count=1 -timeout 10m ./...

## fuzz: run every fuzz target for FUZZTIME each
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) hack/fuzz.sh

## bench: Go benchmarks, then the whole-process comparison with the peers
## (crane, oras, umoci, skopeo) in one run of the perf lab in bench/,
## which regenerates docs/benchmarks.md (~20 min on 2 cores)
bench: bench-go perf

## bench-go: the Go benchmarks only
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

## perf: the perf lab alone
perf:
	RUNS=$${RUNS:-3} RUNS_LARGE=$${RUNS_LARGE:-3} PROFILE=$${PROFILE:-1} bench/run.sh

## perf-quick: the lab on the small data set, one run each (bench/.work/benchmarks.md)
perf-quick:
	SIZES=small RUNS=1 bench/run.sh

## perf-profile: CPU and allocation profiles of unpack and build on the large data set
perf-profile:
	bench/profile.sh

## perf-clean: stop the lab registry, delete its generated data (~3 GB)
perf-clean:
	-bench/registry.sh stop
	rm -rf bench/.work bench/.bin bench/.state /dev/shm/addonpkg-perf-scratch

## lint: formatting, vet and staticcheck (run through the Go module proxy,
## pinned, so nothing is installed)
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## conformance: regenerate spec/conformance/vectors and run a reader over
## every vector (addonpkg's own, or READER="cmd args" for another one)
.PHONY: conformance
conformance: build
	$(GO) generate ./hack/vectorgen
	$(BIN)/addonpkg conformance run --vectors spec/conformance/vectors $(if $(READER),-- $(READER))

## docs: regenerate the CLI reference in docs/cli
docs:
	rm -rf docs/cli
	$(GO) run ./cmd/addonpkg gen-docs --dir docs/cli

clean:
	rm -rf $(BIN) .work
