package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/kubectl/pkg/cmd/util/editor"

	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

// manifestExtensions are the files -f takes from a directory.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// expandFiles replaces each directory of paths by its manifests, recursing
// into subdirectories with recursive, as kubectl's -f and -R do.
func expandFiles(paths []string, recursive bool) ([]string, error) {
	var out []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w", p, err)
		}
		if !info.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && !recursive {
					return filepath.SkipDir
				}
				return nil
			}
			if slices.Contains(manifestExtensions, filepath.Ext(path)) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("-f %s: no .yaml, .yml or .json file in the directory (-R looks in subdirectories)", p)
		}
		out = append(out, found...)
	}
	return out, nil
}

// editCustomizations edits each file in the user's editor and saves it
// only when its customizations decode and every script compiles.
func editCustomizations(ctx context.Context, out io.Writer, vm *lua.VM, files []string) error {
	ed := editor.NewDefaultEditor([]string{"KUBE_EDITOR", "EDITOR"})
	var errs []error
	for _, file := range files {
		original, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		edited, tmp, err := ed.LaunchTempFile("flotillactl-interpret-", filepath.Ext(file), bytes.NewReader(original))
		if err != nil {
			return fmt.Errorf("editing %s: %w", file, err)
		}
		if bytes.Equal(edited, original) {
			printf(out, "%s: edit cancelled, no changes made\n", file)
			_ = os.Remove(tmp)
			continue
		}
		if problems := checkEdit(ctx, vm, edited); len(problems) > 0 {
			for _, p := range problems {
				printf(out, "%s: %v\n", file, p)
			}
			errs = append(errs, fmt.Errorf("%s left unchanged: the edit has %d error(s); it is kept in %s", file, len(problems), tmp))
			continue
		}
		if err := os.WriteFile(file, edited, 0o644); err != nil { //nolint:gosec // a manifest the user owns
			return fmt.Errorf("saving %s: %w", file, err)
		}
		_ = os.Remove(tmp)
		printf(out, "%s: edited\n", file)
	}
	return errors.Join(errs...)
}

// checkEdit decodes the edited customizations and compiles their scripts.
func checkEdit(ctx context.Context, vm *lua.VM, data []byte) []error {
	cs, err := luarules.DecodeCustomizations(data)
	if err != nil {
		return []error{err}
	}
	if len(cs) == 0 {
		return []error{errors.New("no ResourceInterpreterCustomization")}
	}
	var errs []error
	for _, c := range cs {
		errs = append(errs, luarules.Check(ctx, vm, c)...)
	}
	return errs
}

// interpreterDoc is what --show-doc prints: the Lua function each
// operation's script defines, its arguments and what it returns.
var interpreterDoc = strings.TrimLeft(`
Each rule of a ResourceInterpreterCustomization (spec.customizations) is a Lua
script defining one function; the operation calls it with the objects shown and
uses what it returns. Objects are Lua tables shaped as the Kubernetes object.

InterpretReplica (replicaResource.luaScript)
  function GetReplicas(desiredObj)
    return replicas, requirements
  replicas: number of replicas the scheduler divides; requirements (optional):
  {nodeClaim = {nodeSelector, tolerations, hardNodeAffinity}, resourceRequest,
  namespace, priorityClassName} of one replica.

InterpretComponent (componentResource.luaScript)
  function GetComponents(desiredObj)
    return components
  components: list of {name, replicas, replicaRequirements} for a workload made
  of several kinds of pods.

ReviseReplica (replicaRevision.luaScript)
  function ReviseReplica(desiredObj, desiredReplica)
    return desiredObj
  The object with desiredReplica replicas, as it is sent to one member.

Retain (retention.luaScript)
  function Retain(desiredObj, observedObj)
    return desiredObj
  The object to apply to a member, keeping what the member owns of observedObj.

AggregateStatus (statusAggregation.luaScript)
  function AggregateStatus(desiredObj, statusItems)
    return desiredObj
  statusItems: list of {clusterName, status, applied, health}, one per member;
  the template with its status made of them.

InterpretStatus (statusReflection.luaScript)
  function ReflectStatus(observedObj)
    return status
  The part of the member object's status the control plane collects.

InterpretHealth (healthInterpretation.luaScript)
  function InterpretHealth(observedObj)
    return healthy
  true when the member object is healthy.

InterpretDependency (dependencyInterpretation.luaScript)
  function GetDependencies(desiredObj)
    return dependencies
  dependencies: list of {apiVersion, kind, namespace, name} (or labelSelector)
  propagated along with the object.

Scripts run in a sandbox (no io, os or network) with a time limit, and may use
the kube library: kube.accuratePodRequirements(podTemplate),
kube.getPodDependencies(podTemplate, namespace), kube.resourceAdd(a, b),
kube.getResourceQuantity(quantity).
`, "\n")
