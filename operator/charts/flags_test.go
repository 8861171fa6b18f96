package charts

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// helpFormat turns a binary's --help output into the names of its flags.
type helpFormat struct {
	name string
	flag *regexp.Regexp
}

var (
	// pflag, as Kubernetes' components print it: "  -v, --v Level" or
	// "      --name type", descriptions indented further.
	pflagHelp = helpFormat{"pflag", regexp.MustCompile(`(?m)^(?:  -[a-zA-Z], |      )--([a-z0-9][a-z0-9-]*)`)}
	// etcd's own help text: "  --name 'default'".
	etcdHelp = helpFormat{"etcd", regexp.MustCompile(`(?m)^  --([a-z0-9][a-z0-9-]*)`)}
	// Go's flag package: "  -name type", usage on the next lines after a tab.
	goFlagHelp = helpFormat{"flag", regexp.MustCompile(`(?m)^  -([a-zA-Z0-9][a-zA-Z0-9._-]*)`)}
)

// binary is the program one chart's main container runs.
type binary struct {
	name   string // the base name of the container's command
	format helpFormat
	kube   bool   // from $KUBEBUILDER_ASSETS; otherwise built from pkg
	pkg    string // the package to build, relative to the module root
}

var binaries = map[string]binary{
	Etcd:                  {name: "etcd", format: etcdHelp, kube: true},
	APIServer:             {name: "kube-apiserver", format: pflagHelp, kube: true},
	KubeControllerManager: {name: "kube-controller-manager", format: pflagHelp, kube: true},
	ControllerManager:     {name: "flotilla-controller-manager", format: goFlagHelp, pkg: "./components/controller-manager/cmd"},
	Scheduler:             {name: "flotilla-scheduler", format: goFlagHelp, pkg: "./components/scheduler/cmd"},
	Descheduler:           {name: "flotilla-descheduler", format: goFlagHelp, pkg: "./components/descheduler/cmd"},
	Webhook:               {name: "flotilla-webhook", format: goFlagHelp, pkg: "./components/webhook/cmd"},
	AggregatedAPIServer:   {name: "flotilla-aggregated-apiserver", format: pflagHelp, pkg: "./components/aggregated-apiserver/cmd"},
}

// helpText is a binary's --help output, or why it could not be had.
type helpText struct {
	bin  string
	text string
	err  error
}

var (
	buildOnce  sync.Once
	buildDir   string
	builtHelps map[string]helpText // chart → help of the freshly built binary
)

// TestMain removes the binaries built for TestFlagsExist.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// componentHelps builds Flotilla's controller-manager, scheduler, descheduler
// and webhook once per test binary, all at the same time, and returns their
// --help output.
func componentHelps() map[string]helpText {
	buildOnce.Do(func() {
		builtHelps = map[string]helpText{}
		dir, err := os.MkdirTemp("", "flotilla-charts-flags-")
		if err != nil {
			for chart, b := range binaries {
				if !b.kube {
					builtHelps[chart] = helpText{err: err}
				}
			}
			return
		}
		buildDir = dir
		root, rootErr := moduleRoot()
		var (
			mu sync.Mutex
			wg sync.WaitGroup
		)
		for chart, b := range binaries {
			if b.kube {
				continue
			}
			wg.Go(func() {
				h := helpText{err: rootErr}
				if rootErr == nil {
					h = buildAndHelp(root, filepath.Join(dir, b.name), b.pkg)
				}
				mu.Lock()
				builtHelps[chart] = h
				mu.Unlock()
			})
		}
		wg.Wait()
	})
	return builtHelps
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

func buildAndHelp(root, out, pkg string) helpText {
	build := exec.Command("go", "build", "-o", out, pkg)
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		return helpText{err: fmt.Errorf("go build %s: %w\n%s", pkg, err, b)}
	}
	return runHelp(out)
}

// runHelp runs bin --help. Go's flag package and pflag exit 0 after
// printing it; whatever the status, the output must list flags.
func runHelp(bin string) helpText {
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if len(out) == 0 {
		return helpText{err: fmt.Errorf("%s --help printed nothing: %w", bin, err)}
	}
	return helpText{bin: bin, text: string(out)}
}

// kubeHelp is the --help output of a Kubernetes binary in
// $KUBEBUILDER_ASSETS. Without that variable the test is skipped; with it,
// a missing binary is a failure (run `make k8s-binaries`).
func kubeHelp(t *testing.T, name string) helpText {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skipf("KUBEBUILDER_ASSETS is not set: cannot check the flags of %s", name)
	}
	bin := filepath.Join(assets, name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing from KUBEBUILDER_ASSETS (run `make k8s-binaries`): %v", name, err)
	}
	h := runHelp(bin)
	if h.err != nil {
		t.Fatal(h.err)
	}
	return h
}

func flagNames(format helpFormat, help string) map[string]bool {
	names := map[string]bool{}
	for _, m := range format.flag.FindAllStringSubmatch(help, -1) {
		names[m[1]] = true
	}
	return names
}

// TestFlagsExist: every flag a chart renders into its container's args is a
// flag of the real binary, at the version the chart runs, and appears once.
func TestFlagsExist(t *testing.T) {
	built := componentHelps()
	helps := map[string]helpText{} // by chart, shared by its cases
	for _, c := range cases {
		t.Run(c.chart+"/"+c.name, func(t *testing.T) {
			b := binaries[c.chart]
			h, ok := helps[c.chart]
			if !ok {
				if b.kube {
					h = kubeHelp(t, b.name)
				} else if h = built[c.chart]; h.err != nil {
					t.Fatal(h.err)
				}
				helps[c.chart] = h
			}
			help := h.text
			known := flagNames(b.format, help)
			if len(known) < 5 {
				t.Fatalf("found only %d flags in the %s --help output (%s format):\n%s", len(known), b.name, b.format.name, help)
			}

			objs := mustRender(t, c)
			var ctr = objs.mainContainer(t, c)
			if len(ctr.Command) != 1 || path.Base(ctr.Command[0]) != b.name {
				t.Fatalf("command %q; want %s", ctr.Command, b.name)
			}
			args := argMap(t, ctr.Args) // fails on a repeated flag
			for name := range args {
				if !known[name] {
					t.Errorf("%s renders --%s, which %s does not have", c.chart, name, b.name)
				}
			}

			switch c.chart {
			case KubeControllerManager:
				checkControllers(t, help, args["controllers"])
			}
			if gates, ok := args["feature-gates"]; ok && b.format == pflagHelp {
				checkFeatureGates(t, help, gates)
			}
			if t.Failed() {
				return
			}
			checkParse(t, c, h.bin, ctr.Args)
		})
	}
}

// checkParse runs the binary with the rendered args, the downward-API
// variables filled in, and --help last: each of these binaries parses every
// flag before it looks at --help, so a value its flag cannot take (a bad
// address, a bool that is not one, an unknown feature gate) makes it exit
// non-zero instead of printing the help.
func checkParse(t *testing.T, c chartCase, bin string, args []string) {
	t.Helper()
	expand := strings.NewReplacer(
		"$(POD_IP)", "127.0.0.1",
		"$(POD_NAME)", c.release()+"-0",
		"$(POD_NAMESPACE)", testNamespace,
	)
	argv := make([]string, 0, len(args)+1)
	for _, a := range args {
		argv = append(argv, expand.Replace(a))
	}
	argv = append(argv, "--help")
	out, err := exec.Command(bin, argv...).CombinedOutput()
	if err != nil {
		t.Errorf("%s does not parse the rendered args: %v\n%s", filepath.Base(bin), err, errorLines(string(out)))
	}
}

// errorLines picks the lines of a failed --help run that say what went
// wrong; the usage text around them is long.
func errorLines(out string) string {
	var picked []string
	for _, line := range strings.Split(out, "\n") {
		if l := strings.ToLower(line); strings.Contains(l, "invalid") || strings.Contains(l, "error") || strings.Contains(l, "not defined") {
			picked = append(picked, line)
		}
	}
	if len(picked) == 0 {
		return out
	}
	return strings.Join(picked, "\n")
}

// checkControllers: each controller named in --controllers is one that
// kube-controller-manager --help lists.
func checkControllers(t *testing.T, help, controllers string) {
	t.Helper()
	m := regexp.MustCompile(`All controllers: ([a-z0-9, -]+)`).FindStringSubmatch(help)
	if m == nil {
		t.Fatal("kube-controller-manager --help lists no controllers")
	}
	all := map[string]bool{}
	for _, name := range strings.Split(m[1], ", ") {
		all[strings.TrimSpace(name)] = true
	}
	for _, name := range strings.Split(controllers, ",") {
		if !all[strings.TrimPrefix(name, "-")] {
			t.Errorf("--controllers names %q, which kube-controller-manager --help does not list (aliases are not checked: use the listed names)", name)
		}
	}
}

// checkFeatureGates: each gate in --feature-gates is one the binary lists
// ("kube:Name=true|false").
func checkFeatureGates(t *testing.T, help, gates string) {
	t.Helper()
	for _, gate := range strings.Split(gates, ",") {
		name, _, _ := strings.Cut(gate, "=")
		// Kubernetes' components list "kube:Name=true|false"; a generic API
		// server (the aggregated API server) lists "Name=true|false".
		if !regexp.MustCompile(`(?m)(^|\s|kube:)` + regexp.QuoteMeta(name) + `=true\|false`).MatchString(help) {
			t.Errorf("--feature-gates names %s, which the binary does not list", name)
		}
	}
}
