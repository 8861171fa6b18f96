// Package customizationtest runs the golden tests of Lua customizations:
// testdata/<operation>-test.yaml files beside a customization, each a
// stream of cases
//
//	{name, description, operation, desiredObj, observedObj, statusItems,
//	 inputReplicas, output}
//
// run through an interpreter built from that customization alone, with the
// results compared to output (keys replica, requires, components, revised,
// retained, aggregatedStatus, status, healthy, dependencies). Quantities
// compare by value, dependency and component lists in any order, and a
// field of an expected object set to "{{EXCLUDE}}" is not compared.
package customizationtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// TestdataDir is the directory of the golden files beside a customization.
const TestdataDir = "testdata"

// TestFileSuffix ends the name of every golden file.
const TestFileSuffix = "-test.yaml"

// ErrNoTestdata is returned for a customization directory without golden
// files.
var ErrNoTestdata = errors.New("no testdata/*" + TestFileSuffix + " files")

// Case is one golden test.
type Case struct {
	// File and Index (1-based document number) locate the case.
	File  string
	Index int

	Name          string
	Description   string
	Operation     configv1alpha1.InterpreterOperation
	DesiredObj    map[string]any
	ObservedObj   map[string]any
	StatusItems   []workv1alpha2.AggregatedStatusItem
	InputReplicas int64
	Output        map[string]any
}

// ID names the case in messages: "file#index (name)".
func (c *Case) ID() string {
	return fmt.Sprintf("%s#%d (%s)", c.File, c.Index, c.Name)
}

// document is a case as written.
type document struct {
	Name          string                              `json:"name"`
	Description   string                              `json:"description"`
	Operation     string                              `json:"operation"`
	DesiredObj    json.RawMessage                     `json:"desiredObj"`
	ObservedObj   json.RawMessage                     `json:"observedObj"`
	StatusItems   []workv1alpha2.AggregatedStatusItem `json:"statusItems"`
	InputReplicas int64                               `json:"inputReplicas"`
	Output        json.RawMessage                     `json:"output"`
}

// LoadCases reads the golden files of the customization in dir, sorted by
// file name.
func LoadCases(fsys fs.FS, dir string) ([]*Case, error) {
	matches, err := fs.Glob(fsys, path.Join(dir, TestdataDir, "*"+TestFileSuffix))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoTestdata)
	}
	slices.Sort(matches)
	var cases []*Case
	for _, file := range matches {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		cs, err := DecodeCases(file, data)
		if err != nil {
			return nil, err
		}
		cases = append(cases, cs...)
	}
	return cases, nil
}

// DecodeCases reads the cases of one golden file; file labels them.
func DecodeCases(file string, data []byte) ([]*Case, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var cases []*Case
	for i := 1; ; i++ {
		var doc document
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return cases, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i, err)
		}
		if doc.Operation == "" && doc.Name == "" && len(doc.Output) == 0 {
			continue
		}
		c := &Case{
			File: file, Index: i,
			Name: doc.Name, Description: doc.Description,
			Operation:     configv1alpha1.InterpreterOperation(doc.Operation),
			StatusItems:   doc.StatusItems,
			InputReplicas: doc.InputReplicas,
		}
		for _, f := range []struct {
			name string
			raw  json.RawMessage
			into *map[string]any
		}{{"desiredObj", doc.DesiredObj, &c.DesiredObj}, {"observedObj", doc.ObservedObj, &c.ObservedObj}, {"output", doc.Output, &c.Output}} {
			if len(f.raw) == 0 || string(f.raw) == "null" {
				continue
			}
			if err := utiljson.Unmarshal(f.raw, f.into); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", c.ID(), f.name, err)
			}
		}
		if err := c.validate(); err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
}

// outputKeys are the output keys each operation may produce.
func outputKeys(op configv1alpha1.InterpreterOperation) []string {
	switch op {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		return []string{"replica", "requires"}
	case configv1alpha1.InterpreterOperationInterpretComponent:
		return []string{"components"}
	case configv1alpha1.InterpreterOperationReviseReplica:
		return []string{"revised"}
	case configv1alpha1.InterpreterOperationRetain:
		return []string{"retained"}
	case configv1alpha1.InterpreterOperationAggregateStatus:
		return []string{"aggregatedStatus"}
	case configv1alpha1.InterpreterOperationInterpretStatus:
		return []string{"status"}
	case configv1alpha1.InterpreterOperationInterpretHealth:
		return []string{"healthy"}
	case configv1alpha1.InterpreterOperationInterpretDependency:
		return []string{"dependencies"}
	}
	return nil
}

func (c *Case) validate() error {
	keys := outputKeys(c.Operation)
	if keys == nil {
		return fmt.Errorf("%s: unknown operation %q (want InterpretReplica, InterpretComponent, ReviseReplica, "+
			"Retain, AggregateStatus, InterpretStatus, InterpretHealth or InterpretDependency)", c.ID(), c.Operation)
	}
	if c.DesiredObj == nil && c.ObservedObj == nil {
		return fmt.Errorf("%s: neither desiredObj nor observedObj is set", c.ID())
	}
	for k := range c.Output {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("%s: output key %q is not a result of %s (which gives %s)", c.ID(), k, c.Operation, strings.Join(keys, ", "))
		}
	}
	return nil
}
