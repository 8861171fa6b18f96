package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/bundled"
	"github.com/flotilla-io/flotilla/internal/interpreter/customizationtest"
	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

type interpretOptions struct {
	files          []string
	operation      string
	desiredFile    string
	observedFile   string
	statusFile     string
	desiredReplica int64
	check          bool
	testDir        string
	recursive      bool
	showDoc        bool
	edit           bool
}

func newInterpretCommand() *cobra.Command {
	o := interpretOptions{}
	cmd := &cobra.Command{
		Use:   "interpret",
		Short: "Run resource interpreter rules on objects, check customizations and run their golden tests",
		Long: `Runs one interpreter operation on an object and prints the result as YAML, with the
Lua rules of the ResourceInterpreterCustomization(s) given with -f, or without -f with the
bundled customizations and native rules for the object's kind.

Operations: InterpretReplica, InterpretComponent, ReviseReplica, Retain, AggregateStatus,
InterpretStatus, InterpretHealth, InterpretDependency.

--check compiles every script of the -f files and reports each error with its rule and line.
--test DIR runs the golden tests (testdata/<operation>-test.yaml) of every customization under DIR.
--edit opens each -f file in $KUBE_EDITOR or $EDITOR and saves it back once every script
compiles; an edit that does not compile is kept in a temporary file and the file is left as it was.
--show-doc prints what each operation's Lua function receives and returns.
-f takes files or directories (their .yaml, .yml and .json files; with -R, recursively).`,
		Example: `  flotillactl interpret -f customization.yaml --operation InterpretReplica --desired-file deploy.yaml
  flotillactl interpret -f customization.yaml --operation ReviseReplica --desired-file deploy.yaml --desired-replica 3
  flotillactl interpret -f customization.yaml --operation AggregateStatus --desired-file deploy.yaml --status-file status.yaml
  flotillactl interpret --operation InterpretHealth --observed-file observed.yaml
  flotillactl interpret -f customization.yaml --check
  flotillactl interpret --test ./my-customizations`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.files, "filename", "f", nil, "ResourceInterpreterCustomization YAML file(s)")
	f.StringVar(&o.operation, "operation", "", "operation to run")
	f.StringVar(&o.desiredFile, "desired-file", "", "the desired object (template) as YAML or JSON")
	f.StringVar(&o.observedFile, "observed-file", "", "the observed object (as in a member) as YAML or JSON")
	f.StringVar(&o.statusFile, "status-file", "", "status items for AggregateStatus: a list of {clusterName, status, applied, health}")
	f.Int64Var(&o.desiredReplica, "desired-replica", 0, "replicas for ReviseReplica")
	f.BoolVar(&o.check, "check", false, "only compile the scripts of the -f files and report errors")
	f.StringVar(&o.testDir, "test", "", "run the golden tests of the customizations under this directory")
	f.BoolVarP(&o.recursive, "recursive", "R", false, "process the directories given with -f recursively")
	f.BoolVar(&o.showDoc, "show-doc", false, "print the interface of each operation's Lua function")
	f.BoolVar(&o.edit, "edit", false, "edit the -f customization files in an editor, saving them only if every script compiles")
	return cmd
}

func (o *interpretOptions) run(ctx context.Context, out io.Writer) error {
	if o.showDoc {
		_, err := io.WriteString(out, interpreterDoc)
		return err
	}
	files, err := expandFiles(o.files, o.recursive)
	if err != nil {
		return err
	}
	o.files = files
	vm := lua.New()
	defer vm.Close()
	switch {
	case o.edit:
		if len(o.files) == 0 {
			return errors.New("--edit needs -f")
		}
		return editCustomizations(ctx, out, vm, o.files)
	case o.testDir != "":
		return runInterpreterTests(ctx, out, vm, o.testDir)
	case o.check:
		if len(o.files) == 0 {
			return errors.New("--check needs -f")
		}
		return checkCustomizations(ctx, out, vm, o.files)
	}
	return o.interpret(ctx, out, vm)
}

func (o *interpretOptions) interpret(ctx context.Context, out io.Writer, vm *lua.VM) error {
	op, err := parseOperation(o.operation)
	if err != nil {
		return err
	}
	var interp interpreter.Interpreter
	if len(o.files) > 0 {
		var all []*configv1alpha1.ResourceInterpreterCustomization
		for _, file := range o.files {
			cs, err := readCustomizations(file)
			if err != nil {
				return err
			}
			all = append(all, cs...)
		}
		kinds, _, errs := luarules.Merge(all)
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		interp = interpreter.NewChain(luarules.NewSet("customization", vm, kinds))
	} else if interp, err = interpreter.NewStatic(vm, nil); err != nil {
		return err
	}
	c := &customizationtest.Case{Operation: op, InputReplicas: o.desiredReplica, File: "command line", Name: string(op)}
	if c.DesiredObj, err = readObject(o.desiredFile); err != nil {
		return err
	}
	if c.ObservedObj, err = readObject(o.observedFile); err != nil {
		return err
	}
	if c.DesiredObj == nil && c.ObservedObj == nil {
		return errors.New("give the object with --desired-file or --observed-file")
	}
	if op == configv1alpha1.InterpreterOperationRetain && (c.DesiredObj == nil || c.ObservedObj == nil) {
		return fmt.Errorf("%s needs both --desired-file and --observed-file", op)
	}
	if c.StatusItems, err = readStatusItems(o.statusFile); err != nil {
		return err
	}
	result, err := customizationtest.Run(ctx, interp, c)
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(result)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}

func parseOperation(name string) (configv1alpha1.InterpreterOperation, error) {
	var names []string
	for _, r := range luarules.Rules() {
		if strings.EqualFold(name, string(r.Operation)) {
			return r.Operation, nil
		}
		names = append(names, string(r.Operation))
	}
	if name == "" {
		return "", fmt.Errorf("--operation is required: one of %s", strings.Join(names, ", "))
	}
	return "", fmt.Errorf("unknown operation %q: use one of %s", name, strings.Join(names, ", "))
}

func readCustomizations(file string) ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	cs, err := luarules.DecodeCustomizations(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("%s: no ResourceInterpreterCustomization", file)
	}
	return cs, nil
}

func readObject(file string) (map[string]any, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		return nil, fmt.Errorf("%s: not a Kubernetes object (apiVersion and kind are required)", file)
	}
	// Through JSON again, so that numbers are int64 as in unstructured.
	raw, err := u.MarshalJSON()
	if err == nil {
		err = u.UnmarshalJSON(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return u.Object, nil
}

// readStatusItems reads a list of status items, or a stream of documents
// each one item.
func readStatusItems(file string) ([]workv1alpha2.AggregatedStatusItem, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var list []workv1alpha2.AggregatedStatusItem
	if err := yaml.Unmarshal(data, &list); err == nil {
		return list, nil
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
	for {
		var item workv1alpha2.AggregatedStatusItem
		err := dec.Decode(&item)
		if errors.Is(err, io.EOF) {
			return list, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if item.ClusterName == "" {
			return nil, fmt.Errorf("%s: status item #%d has no clusterName", file, len(list)+1)
		}
		list = append(list, item)
	}
}

func checkCustomizations(ctx context.Context, out io.Writer, vm *lua.VM, files []string) error {
	failed := 0
	for _, file := range files {
		cs, err := readCustomizations(file)
		if err != nil {
			return err
		}
		for _, c := range cs {
			errs := luarules.Check(ctx, vm, c)
			for _, e := range errs {
				printf(out, "%s: %v\n", file, e)
			}
			if len(errs) == 0 {
				printf(out, "%s: %s: ok\n", file, c.Name)
			}
			failed += len(errs)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d script error(s)", failed)
	}
	return nil
}

func runInterpreterTests(ctx context.Context, out io.Writer, vm *lua.VM, dir string) error {
	fsys := os.DirFS(dir)
	dirs, err := bundled.Dirs(fsys)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return fmt.Errorf("%s: no customization YAML found", dir)
	}
	var passed, failed int
	for _, d := range dirs {
		outcomes, err := customizationtest.RunDir(ctx, fsys, d, vm)
		if err != nil {
			printf(out, "FAIL %s: %v\n", d, err)
			failed++
			continue
		}
		for _, o := range outcomes {
			if !o.Failed() {
				passed++
				printf(out, "ok   %s\n", o.Case.ID())
				continue
			}
			failed++
			printf(out, "FAIL %s\n", o.Case.ID())
			if o.Err != nil {
				printf(out, "     %v\n", o.Err)
			}
			for _, diff := range o.Diffs {
				printf(out, "     %s\n", strings.ReplaceAll(diff, "\n", "\n     "))
			}
		}
	}
	printf(out, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return fmt.Errorf("%d interpreter test(s) failed", failed)
	}
	return nil
}
